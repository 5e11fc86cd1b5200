"""The queue-order base class and the registry every order module adds itself to (kept apart
from the package ``__init__``, which imports the order modules, so no import runs in a circle)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from clustertwin.scheduling.registry import Registry


class Order:
    """A queue order. ``keys`` returns one float per job (lower runs first); ties go to the
    earlier submit time, then the lower job index. A ``dynamic`` order is re-keyed by the
    engine every ``calc_period_s`` of simulated time."""

    name = "base"
    dynamic = False
    oracle = False
    calc_period_s = 0.0
    #: parameters ``--policy ORDER:KEY=VALUE`` may set, each with its (low, high) bounds
    PARAMS: dict[str, tuple[float, float]] = {}

    def keys(self, ctx: Any, jobs: np.ndarray, now: float) -> np.ndarray:
        raise NotImplementedError

    def key_one(self, ctx: Any, job: int, now: float) -> float:
        """The key of one job (a job entering the queue): the same number :meth:`keys` gives;
        an order may answer faster without building arrays."""
        return float(self.keys(ctx, np.array([job]), now)[0])

    def key_fn(self, ctx: Any) -> Callable[[int, float], float]:
        """:meth:`key_one` for one run as a function of (job, now), which an order may set up
        once per run (the engine keys every arriving job of a dynamic order with it)."""
        return partial(self.key_one, ctx)


ORDERS: Registry[type[Order]] = Registry("policy")
