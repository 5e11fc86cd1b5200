"""Pipeline schedules: stage loads, bubble and micro-batches in flight.

Two schedules (registered by name; a duplicate name raises):

* ``1f1b`` (PipeDream-flush, Narayanan et al. 2021 section 2.2.1): a step of ``m`` micro-batches
  on ``p`` stages lasts ``(m + p - 1)`` stage-slots; the first stage holds ``min(m, p)``
  micro-batches of activations.
* ``interleaved`` (same paper, section 2.2.2): each stage owns ``v`` chunks; the bubble shrinks
  to ``(p - 1) / v`` slots and point-to-point traffic grows ``v``-fold.

Micro-batches in flight follow Megatron-core's schedules (``megatron/core/pipeline_parallel/
schedules.py``): rank ``r`` runs ``W_r`` warm-up forwards, then one more forward before its first
backward, so it holds ``W_r + 1`` (chunk-)micro-batches of activations at the peak, never more
than the step has. 1F1B: ``W_r = p - r - 1``, so ``min(m, p - r)`` micro-batches. Interleaved:
``W_r = 2 (p - r - 1) + (v - 1) p`` chunk-forwards (Megatron's microbatch group equals ``p``), at
most all ``m v`` of them - Megatron runs every forward first when ``m == p``. For ``m >= p`` rank
0 holds ``p + (p - 1)/v`` micro-batches' worth, the ``1 + (p - 1)/(p v)`` factor of Korthikanti
et al. 2022 (section 4.2.3); with ``m == p`` it holds ``m``, the same as 1F1B. Only the
activations the backward pass needs are counted: Megatron frees each stage's output tensor once
it has been sent (``deallocate_output_tensor`` keeps the autograd node, drops the data), and the
stage input is the first layer's norm input, counted in that layer's activations.

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


def inflight_chunks(p: np.ndarray, m: np.ndarray, v: np.ndarray, rank: int | np.ndarray = 0):
    """(Chunk-)micro-batches of activations pipeline rank ``rank`` holds at its peak: Megatron's
    warm-up count plus the one forward that precedes the first backward, capped at the
    ``m * v`` forwards of the step (for ``v == 1`` chunks are whole stages)."""
    r = np.minimum(rank, np.maximum(p - 1, 0))
    warm = np.where(v > 1, 2.0 * (p - r - 1) + (v - 1) * p, p - r - 1.0)
    return np.minimum(warm + 1.0, m * v).astype(np.float64)


@register_schedule("1f1b")
def _one_f_one_b(p: np.ndarray, m: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    slots = m + p - 1
    inflight = inflight_chunks(p, m, np.ones_like(v))
    return slots.astype(np.float64), inflight


@register_schedule("interleaved")
def _interleaved(p: np.ndarray, m: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    slots = m + (p - 1) / v
    inflight = inflight_chunks(p, m, v) / v
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

    Rank ``r`` holds :func:`inflight_chunks` chunk-micro-batches of ``layers_r / v`` layers
    each. When the layer split leaves slack of two or more, the first stage also gets one layer
    fewer (Llama 3, arXiv 2407.21783 section 3.3.2, balances memory this way: 126 layers on 16
    stages run 7, 8, ..., 8, 7), so the second stage can be the heaviest."""
    busy, _ = stage_layers(layers, p, v)
    slack = p * busy - layers
    first = np.where((p > 2) & (slack >= 2), busy - 1, busy)
    held0 = first * inflight_chunks(p, m, v, 0) / v
    held1 = busy * inflight_chunks(p, m, v, 1) / v
    held = np.maximum(held0, np.where(p > 2, held1, 0.0))
    return np.where(p == 1, float(layers), held)
