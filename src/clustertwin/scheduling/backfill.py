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
        m = self.milli[h]
        mask = self._mask(h)
        found = self._shadow_listed(m, mask)
        t, nodes_arr, extra = found if found is not None else self._shadow_hyp(m, mask)
        self.shadow = (h, 0, t, nodes_arr, extra)
        self.head_checks.append((h, self.now, t))
        return t, nodes_arr, extra

    def _shadow_listed(self, m: int,
                       mask: np.ndarray | None) -> tuple[float, np.ndarray | None, int] | None:
        """:meth:`_shadow_hyp`'s answer for a head of ``k`` whole GPUs with no node mask, found
        without copying the cluster state; None where it does not apply (the caller then uses
        :meth:`_shadow_hyp`). Only whole-GPU attempts are given back (a fractional one on the
        way: None), so what decides is each node's count of free GPUs: it rises by the
        attempt's GPUs on that node (up nodes only), and a node whose GPUs are all free is idle.

        * One node (``k`` up to a node's GPUs), under a placement whose node choice the
          free-GPU sets make (first-fit, best-fit; topology with NVLink domains inside a node),
          and no node with ``k`` free GPUs now: the first end after which a node the attempt
          touched has ``k`` free GPUs is the shadow time (no other node has them: none had them
          before and the others are unchanged), on the node the placement picks among those
          touched: the lowest-numbered (first-fit) or the one with the fewest free GPUs, then
          the lowest-numbered (best-fit).
        * Several nodes, with fewer than ``k`` idle GPUs now: the first end after which the
          idle nodes hold ``k`` GPUs, on the nodes the placement picks from them (its choice
          reads only which nodes are idle and the cluster's fixed layout)."""
        st = self.st
        k = m // WHOLE
        if st.pooled or mask is not None or m < WHOLE:
            return None
        multi = k > st.max_node_gpus
        if multi:
            if st.idle_node_gpus >= k:
                return None
            best = False
        else:
            rule = self.placer._rule(st)
            if rule is None or any(st.by_full[k:]):
                return None
            best = rule == "best"
        free, idle = st.free_milli, st.idle_node_gpus
        full_l, up_l, gpus_l, alloc_of = st.full_l, st.up_l, st.gpus_l, self.alloc
        full: dict[int, int] = {}
        for tend, j in self._ends_in_order():
            hit, hit_key = -1, None
            for node, idx, milli in alloc_of[j]:
                if milli != WHOLE:
                    return None
                if not up_l[node]:
                    continue  # the node's books were cleared when it failed
                g, was = gpus_l[node], full.get(node, full_l[node])
                f = full[node] = was + len(idx)
                free += WHOLE * len(idx)
                idle += (g if f == g else 0) - (g if was == g else 0)
                key = (f, node) if best else (0, node)
                if f >= k and (hit_key is None or key < hit_key):
                    hit, hit_key = node, key
            if free < m:
                continue
            if multi and idle >= k:
                return self._shadow_nodes(tend, full, k)
            if not multi and hit >= 0:
                nodes_arr = np.zeros(self.spec.nodes, dtype=bool)
                nodes_arr[hit] = True
                return tend, nodes_arr, 0
        return math.inf, None, 0

    def _shadow_nodes(self, tend: float, full: dict[int, int],
                      k: int) -> tuple[float, np.ndarray | None, int] | None:
        """The nodes a head of ``k`` GPUs over several nodes gets at ``tend``, when the nodes
        idle then are those idle now plus those in ``full`` (free GPUs per node after the
        attempts given back) with every GPU free: the placement's choice from them."""
        st = self.st
        ok = st.full == st.node_gpus
        gpus_l = st.gpus_l
        ok[[x for x, f in full.items() if f == gpus_l[x]]] = True
        nodes = self.placer.pick_nodes(st, ok.nonzero()[0], k)
        if nodes is None:
            return None
        nodes_arr = np.zeros(self.spec.nodes, dtype=bool)
        nodes_arr[nodes] = True
        return tend, nodes_arr, 0

    def _shadow_hyp(self, m: int, mask: np.ndarray | None) -> tuple[float, np.ndarray | None, int]:
        """The shadow of a head of ``m`` milli-GPUs: the running attempts given back one by one,
        earliest end first, to a copy of the cluster state until the head can be placed there
        (the placement itself decides, so this form holds for every case)."""
        st = self.st
        hyp = copy_state(st)
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
