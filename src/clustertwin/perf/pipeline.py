"""Pipeline schedules: stage loads, bubble and micro-batches in flight.

Two schedules (registered by name; a duplicate name raises):

* ``1f1b`` (PipeDream-flush, Narayanan et al. 2021 section 2.2.1): a step of ``m`` micro-batches
  on ``p`` stages lasts ``(m + p - 1)`` stage-slots; the first stage holds ``min(m, p)``
  micro-batches of activations.
* ``interleaved`` (same paper, section 2.2.2): each stage owns ``v`` chunks; the bubble shrinks
  to ``(p - 1) / v`` slots and the first stage holds ``1 + (p - 1)/(p v)`` times the 1F1B
  activations (Korthikanti et al. 2022, section 4.2.3); point-to-point traffic grows ``v``-fold.

Layers are spread ``ceil(L / (p v))`` per chunk; when that leaves slack the last stage, which
also runs the LM head, gets one layer fewer (as Llama 3 did, arXiv 2407.21783 section 3.3.2).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_SCHEDULES: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {}


def register_schedule(name: str) -> Callable:
    def deco(fn: Callable) -> Callable:
        if name in _SCHEDULES:
            raise ValueError(f"pipeline schedule {name!r} is already registered")
        _SCHEDULES[name] = fn
        return fn

    return deco


@register_schedule("1f1b")
def _one_f_one_b(p: np.ndarray, m: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    slots = m + p - 1
    inflight = np.minimum(m, p).astype(np.float64)
    return slots.astype(np.float64), inflight


@register_schedule("interleaved")
def _interleaved(p: np.ndarray, m: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    slots = m + (p - 1) / v
    inflight = np.minimum(m, p) * (1 + (p - 1) / (p * v))
    return slots, inflight


def schedule(p: np.ndarray, m: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(stage-slots per step, micro-batches of activations held by the first stage).

    ``v == 1`` is plain 1F1B; ``v > 1`` the interleaved schedule."""
    a_slots, a_in = _SCHEDULES["1f1b"](p, m, v)
    b_slots, b_in = _SCHEDULES["interleaved"](p, m, v)
    inter = v > 1
    return np.where(inter, b_slots, a_slots), np.where(inter, b_in, a_in)


def stage_layers(layers: int, p: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(layers on the busiest stage, layers on the last stage) for ``p`` stages of ``v`` chunks."""
    chunk = np.ceil(layers / (p * v))
    full = chunk * v
    slack = p * full - layers
    last = np.where((p > 1) & (slack >= 1), full - 1, full)
    last = np.where(p == 1, layers, last)
    return np.where(p == 1, layers, full), last


def held_layer_batches(
    layers: int, p: np.ndarray, m: np.ndarray, v: np.ndarray
) -> np.ndarray:
    """Layer-activations (in units of one layer of one micro-batch) held at the peak by the
    pipeline's most loaded stage.

    Stage ``r`` of 1F1B holds ``min(m, p - r)`` micro-batches of its layers; under the
    interleaved schedule it warms up two chunks fewer than stage ``r - 1``. When the layer
    split leaves slack of two or more, the first stage also gets one layer fewer (Llama 3,
    arXiv 2407.21783 section 3.3.2, balances memory this way: 126 layers on 16 stages run
    7, 8, ..., 8, 7), so the second stage can be the heaviest."""
    busy, _ = stage_layers(layers, p, v)
    _, inflight = schedule(p, m, v)
    slack = p * busy - layers
    first = np.where((p > 2) & (slack >= 2), busy - 1, busy)
    second_inflight = np.where(
        v > 1, np.maximum(inflight - 2.0 / v, 0.0), np.minimum(m, np.maximum(p - 1, 1))
    )
    held = np.maximum(first * inflight, np.where(p > 2, busy * second_inflight, 0.0))
    return np.where(p == 1, float(layers), held)
