"""First in, first out: the order of submission."""

from __future__ import annotations

from typing import Any

import numpy as np

from clustertwin.scheduling.policies.base import ORDERS, Order


@ORDERS.register("fifo")
class Fifo(Order):
    name = "fifo"

    def keys(self, ctx: Any, jobs: np.ndarray, now: float) -> np.ndarray:
        return ctx.w.submit_s[jobs]
