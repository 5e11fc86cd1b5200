"""Shortest job first, by what the scheduler is told (requested time limit) or, labelled as an
oracle, by the actual duration."""

from __future__ import annotations

from typing import Any

import numpy as np

from clustertwin.scheduling.policies.base import ORDERS, Order


@ORDERS.register("sjf")
class Sjf(Order):
    """Shortest requested time limit first."""

    name = "sjf"

    def keys(self, ctx: Any, jobs: np.ndarray, now: float) -> np.ndarray:
        return ctx.w.requested_s[jobs]


@ORDERS.register("sjf-gpu")
class SjfGpu(Order):
    """Smallest requested GPU-time (GPUs x time limit) first."""

    name = "sjf-gpu"

    def keys(self, ctx: Any, jobs: np.ndarray, now: float) -> np.ndarray:
        w = ctx.w
        return w.requested_s[jobs] * np.maximum(w.gpus_milli[jobs], 1)


@ORDERS.register("sjf-oracle")
class SjfOracle(Order):
    """ORACLE: shortest actual duration first (unknowable in practice; an upper bound)."""

    name = "sjf-oracle"
    oracle = True

    def keys(self, ctx: Any, jobs: np.ndarray, now: float) -> np.ndarray:
        return ctx.w.duration_s[jobs]
