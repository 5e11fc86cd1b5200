"""The scheduling pass: walk the queue in policy order and start what fits, within team limits
and reservations, backfilling behind a blocked head (EASY) or preempting for it."""

from __future__ import annotations

import bisect
import math

import numpy as np

from clustertwin.scheduling.backfill import Backfill
from clustertwin.scheduling.preemption import Preemption


class Dispatch(Preemption, Backfill):
    """One scheduling pass after the events of an instant."""

    def _rekey(self) -> None:
        if not self.queue:
            return
        jobs = np.fromiter((e[2] for e in self.queue), dtype=np.int64, count=len(self.queue))
        keys = self.order.keys(self.ctx, jobs, self.now)
        sub = self.w.submit_s[jobs]
        idx = np.lexsort((jobs, sub, keys))
        self.queue = list(zip(keys[idx].tolist(), sub[idx].tolist(), jobs[idx].tolist(),
                              strict=True))

    def _schedule(self) -> None:
        if not self.queue:
            return
        self.in_pass = True
        try:
            self._pass()
        finally:
            self.in_pass = False
            for e in self.deferred:
                bisect.insort(self.queue, e)
            self.deferred.clear()

    def _pass(self) -> None:
        if self.order.dynamic and self.now >= self.next_calc:
            self._rekey()
            self.next_calc = self.now + self.order.calc_period_s
        pol = self.pol
        st = self.st
        q = self.queue
        depth = self.cfg.scan_depth
        limits = self.team_limit
        resv = bool(self.cfg.reservations)
        failed: dict[tuple[int, int, int], int] = {}
        head: int | None = None
        reserved: np.ndarray | None = None
        shadow_t = math.inf
        pool_extra = 0
        i = 0
        seen = 0
        tried_preempt = not pol.preempt
        while i < len(q):
            if st.free_milli <= 0 and tried_preempt:
                break
            if depth is not None and seen > depth:
                break
            seen += 1
            j = q[i][2]
            m = self.milli[j]
            if limits:
                lim = limits.get(self.team[j])
                if lim is not None and self.team_milli[self.team[j]] + m > lim:
                    i += 1
                    continue
            if resv and self.resv_of[j] >= 0 and not self._resv_open(j):
                i += 1
                continue
            mode = 0
            if head is not None:
                mode = 1 if self.now + self.req[j] > shadow_t else 0
            ck = (mode, 0, 0) if not resv else (mode,) + self._mask_class(j)
            fm = failed.get(ck)
            alloc = None
            if m <= st.free_milli and (fm is None or m < fm):
                if mode == 1 and st.pooled:
                    if m <= pool_extra:
                        alloc = self.placer.place(st, m)
                        if alloc is not None:
                            pool_extra -= m
                else:
                    alloc = self.placer.place(st, m, self._mask(j, reserved if mode else None))
                if alloc is None:
                    failed[ck] = m if fm is None else min(fm, m)
            if alloc is not None:
                del q[i]
                self._start(j, alloc)
                continue
            # j is blocked
            if head is None:
                if not tried_preempt:
                    tried_preempt = True
                    if self._try_preempt(j):
                        del q[i]
                        continue
                if pol.backfill:
                    head = j
                    shadow_t, reserved, pool_extra = self._shadow(j)
                    i += 1
                    continue
                if not pol.greedy:
                    break
            i += 1
