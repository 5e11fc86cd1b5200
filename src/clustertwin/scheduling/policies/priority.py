"""Priority with QoS: higher QoS level first, then higher job priority, then submit time."""

from __future__ import annotations

from typing import Any

import numpy as np

from clustertwin.scheduling.policies.base import ORDERS, Order


@ORDERS.register("priority")
class Priority(Order):
    name = "priority"

    def keys(self, ctx: Any, jobs: np.ndarray, now: float) -> np.ndarray:
        w = ctx.w
        # rank over the whole workload so that the key is exact (no float mixing of two fields)
        rank = np.empty(len(w), dtype=np.float64)
        order = np.lexsort((w.submit_s, -w.priority, -w.qos))
        rank[order] = np.arange(len(w), dtype=np.float64)
        return rank[jobs]
