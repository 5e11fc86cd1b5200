"""Reservations: which nodes a job may use now (the node mask), and the setup of the blocks.

A reservation holds a block of whole nodes over ``[start, end)``; other jobs may use those
nodes only if their time limit ends before the start; members run only inside it.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from clustertwin.errors import Problem, UsageError
from clustertwin.scheduling.placement import Topology
from clustertwin.scheduling.runstate import RunState


class Reservations(RunState):
    """Reservation blocks as per-node arrays, and the mask of nodes a job may use now."""

    def _setup_reservations(self) -> None:
        n = self.spec.nodes
        self.r_id = np.full(n, -1, dtype=np.int64)
        self.r_start = np.full(n, math.inf)
        self.r_end = np.full(n, -math.inf)
        self.r_starts_sorted: list[float] = []
        if not self.cfg.reservations:
            return
        if self.spec.pooled:
            raise UsageError([Problem("--reserve", "", "reservations need a cluster of nodes")])
        topo = Topology()
        free = np.ones(n, dtype=bool)
        for i, r in enumerate(self.cfg.reservations):
            idle = np.flatnonzero(free)
            if int(self.st.node_gpus[idle].sum()) < r.gpus:
                raise UsageError([Problem("--reserve", r.name, f"{r.gpus} GPUs do not fit next to "
                                          "the other reservations")])
            nodes = topo.pick_nodes(self.st, idle, r.gpus) if r.gpus > self.st.max_node_gpus \
                else [int(idle[0])]
            free[nodes] = False
            self.r_id[nodes] = i
            self.r_start[nodes] = r.start_s
            self.r_end[nodes] = r.end_s
        self.r_starts_sorted = sorted(r.start_s for r in self.cfg.reservations)

    def _mask(self, j: int, extra_exclude: np.ndarray | None = None) -> np.ndarray | None:
        if not self.cfg.reservations:
            return None if extra_exclude is None else ~extra_exclude
        r = self.resv_of[j]
        now = self.now
        if r >= 0:
            m = (self.r_id == r) & (now >= self.r_start) & (now < self.r_end)
        else:
            m = (self.r_id == -1) | (now >= self.r_end) | (now + self.req[j] <= self.r_start)
        if extra_exclude is not None:
            m &= ~extra_exclude
        return m

    def _mask_class(self, j: int) -> tuple[int, int]:
        if not self.cfg.reservations:
            return (0, 0)
        return (self.resv_of[j],
                bisect.bisect_left(self.r_starts_sorted, self.now + self.req[j]))

    def _resv_open(self, j: int) -> bool:
        r = self.cfg.reservations[self.resv_of[j]]
        return r.start_s <= self.now < r.end_s
