"""The inputs and per-trial results of the reliability Monte Carlo (:mod:`.montecarlo`), shared
by the event-by-event loop, the single-tier loop of :mod:`.singletier` and :mod:`.tiers`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np


class RunawayError(Exception):
    """The simulated job makes (almost) no progress: more events than ``max_events``."""


@dataclass(frozen=True)
class RunSpec:
    """Inputs of one simulated job; all times in hours."""

    work_h: float
    blocking_h: float
    persist_h: float
    restart_h: float
    rates_per_h: tuple[float, ...]
    needs_repair: tuple[bool, ...]
    planned_per_h: float = 0.0
    repair_h: float = 0.0
    spare_nodes: int = 0
    wall_limit_h: float | None = None


@dataclass
class Outcome:
    """Per-trial results, arrays of shape (intervals, trials)."""

    intervals_h: np.ndarray
    wall_h: np.ndarray
    work_h: np.ndarray
    stall_h: np.ndarray
    lost_h: np.ndarray
    restart_h: np.ndarray
    waiting_h: np.ndarray
    interruptions: np.ndarray           #: unexpected interruptions per trial
    planned: np.ndarray                 #: planned interruptions per trial
    counts: np.ndarray | None = None    #: (trials, causes) for the first interval, if asked
    timeline: list[tuple[float, int, float, float, float]] = field(default_factory=list)
    events: int = 0
    local_restores: np.ndarray | None = None  #: unexpected interruptions restored from the local tier

    @property
    def ettr(self) -> np.ndarray:
        return self.work_h / self.wall_h



def stretch(out: Outcome, factor: float) -> Outcome:
    """Per-trial totals of a run ``factor`` times longer than the one simulated: sums of many
    independent renewal cycles, so each trial keeps the mean's growth and sqrt of its spread."""
    if factor <= 1.0:
        return out

    def grow(a, axis: int):
        if a is None:
            return None
        a = np.asarray(a, dtype=float)
        mean = a.mean(axis=axis, keepdims=True)
        return np.maximum(0.0, factor * mean + math.sqrt(factor) * (a - mean))

    fields = ("wall_h", "work_h", "stall_h", "lost_h", "restart_h", "waiting_h", "interruptions",
              "planned", "local_restores")
    changes = {f: grow(getattr(out, f), 1) for f in fields if getattr(out, f) is not None}
    if out.counts is not None:
        changes["counts"] = grow(out.counts, 0)
    return replace(out, **changes)


@dataclass(frozen=True)
class TierSpec:
    """The local (fast) tier; times in hours. ``spec.blocking_h``/``persist_h``/``restart_h``
    of the :class:`RunSpec` describe the PFS tier."""

    local_blocking_h: float
    local_persist_h: float
    local_restart_h: float
    replicas: int = 0
