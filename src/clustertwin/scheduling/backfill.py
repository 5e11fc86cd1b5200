"""EASY backfill: the blocked head's shadow time and the nodes held for it."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator

import numpy as np

from clustertwin.scheduling.reservations import Reservations
from clustertwin.scheduling.simtypes import RUNNING
from clustertwin.scheduling.state import WHOLE, copy_state


class Backfill(Reservations):
    """The shadow computation of EASY backfill, cached per head. Job ends do not move it (the
    ends it iterates are the times the running attempts end), starts leave the held nodes
    free; a node failure, a repair or a requeued job drops it."""

    def _shadow(self, h: int) -> tuple[float, np.ndarray | None, int]:
        """Earliest time the blocked head ``h`` can start as the running attempts end, and the
        nodes it would get then (kept out of reach of jobs that would run past it). The ends
        are the attempts' actual end times (``run_ends``), which the simulator knows; Slurm's
        backfill plans with the jobs' time limits instead, so this reservation is tighter than
        a real one (an open modelling gap: using the limits changes every backfill result)."""
        if self.shadow is not None and self.shadow[0] == h:
            _, _, t, nodes, extra = self.shadow
            return t, nodes, extra
        st = self.st
        m = self.milli[h]
        hyp = copy_state(st)
        mask = self._mask(h)
        t = math.inf
        nodes_arr: np.ndarray | None = None
        extra = 0
        k = m // WHOLE
        for tend, j in self._ends_in_order():
            alloc = self.alloc[j]
            assert alloc is not None
            hyp.give(alloc)
            if hyp.free_milli < m:
                continue
            if not hyp.pooled:
                touched = [a[0] for a in alloc]
                if m < WHOLE:
                    if not any(int(hyp.gfree[x].max()) >= m for x in touched):
                        continue
                elif k <= hyp.max_node_gpus:
                    if not any(hyp.full_l[x] >= k for x in touched):
                        continue
                elif hyp.idle_node_gpus < k:
                    continue
            a = self.placer.place(hyp, m, mask)
            if a is not None:
                t = tend
                if hyp.pooled:
                    extra = hyp.free_milli - m
                else:
                    nodes_arr = np.zeros(self.spec.nodes, dtype=bool)
                    nodes_arr[[x[0] for x in a]] = True
                break
        self.shadow = (h, 0, t, nodes_arr, extra)
        self.head_checks.append((h, self.now, t))
        return t, nodes_arr, extra

    def _ends_in_order(self) -> Iterator[tuple[float, int]]:
        """The running attempts as (end, job), earliest first (ties: lower job first), read
        from the heap ``run_ends`` without changing it: a second heap holds the frontier (the
        entries whose parents were read), so reading the first n costs O(n log n), not a sort
        of every running job. Stale entries (attempts that ended) are passed over."""
        ends = self.run_ends
        if not ends:
            return
        n = len(ends)
        epoch, status = self.epoch, self.status
        front = [(ends[0], 0)]
        pop, push = heapq.heappop, heapq.heappush
        while front:
            e, i = pop(front)
            c = 2 * i + 1
            if c < n:
                push(front, (ends[c], c))
                if c + 1 < n:
                    push(front, (ends[c + 1], c + 1))
            tend, j, ep = e
            if epoch[j] == ep and status[j] == RUNNING:
                yield tend, j
