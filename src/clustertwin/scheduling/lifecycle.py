"""Job life cycle: arrival and dependencies, start, stop, finish, cancel and interrupt
(preemption or node failure: the job is requeued and keeps the work up to its checkpoint)."""

from __future__ import annotations

import heapq
import math

import numpy as np

from clustertwin.scheduling.runstate import RunState
from clustertwin.scheduling.simtypes import (
    CANCELLED,
    DONE,
    END,
    HELD,
    QUEUED,
    RUNNING,
    TIMEOUT,
)
from clustertwin.scheduling.state import WHOLE, Alloc


class Lifecycle(RunState):
    """State transitions of one job."""

    def _arrive(self, j: int) -> None:
        if self._never_fits(j):
            self._cancel(j)
            return
        ds = self.w.deps.get(j)
        if ds:
            verdict = self._deps_verdict(ds)
            if verdict is False:
                self._cancel(j)
                return
            if verdict is None:
                self.status[j] = HELD
                return
        self._enqueue(j)

    def _never_fits(self, j: int) -> bool:
        """Larger than the cluster (or its reservation), or not whole GPUs above one GPU."""
        m = self.milli[j]
        r = self.resv_of[j]
        if r >= len(self.cfg.reservations):
            return True
        cap = self.st.capacity_milli if r < 0 else self.cfg.reservations[r].gpus * WHOLE
        if m > cap:
            return True
        if self.st.pooled or m < WHOLE:
            return False
        return m % WHOLE != 0

    def _deps_verdict(self, ds: tuple[tuple[str, int], ...]) -> bool | None:
        """True = all satisfied, False = can never be, None = wait."""
        ready = True
        for kind, d in ds:
            s = self.status[d]
            if s in (DONE, TIMEOUT, CANCELLED):
                if kind == "afterok" and s != DONE:
                    return False
            else:
                ready = False
        return True if ready else None

    def _enqueue(self, j: int) -> None:
        self.status[j] = QUEUED
        if self.static_keys is not None:
            key = self.static_keys[j]
        else:
            key = self.key_of(j, self.now)
        self.qclass.insert(self._queue_add(key, j), self.size_class[j])  # _queue_put, inline
        self.fresh.append((key, j))

    def _cancel(self, j: int) -> None:
        self.status[j] = CANCELLED
        self.end[j] = self.now
        self.outstanding -= 1
        self._release_waiters(j)

    def _release_waiters(self, j: int) -> None:
        for k in self.waiters.get(j, ()):
            if self.status[k] != HELD:
                continue
            verdict = self._deps_verdict(self.w.deps[k])
            if verdict is False:
                self._cancel(k)
            elif verdict:
                self._enqueue(k)

    def _start(self, j: int, alloc: Alloc) -> None:
        st = self.st
        st.take(alloc)
        self.status[j] = RUNNING
        if math.isnan(self.first_start[j]):
            self.first_start[j] = self.now
        self.alloc[j] = alloc
        if len(alloc) == 1:  # one node (or the pool): most jobs
            a = alloc[0]
            am = a[2] * max(1, len(a[1]))
        else:
            am = sum(a[2] * max(1, len(a[1])) for a in alloc)
        self.alloc_milli[j] = am
        self.team_milli[self.team[j]] += am
        overhead = self.cfg.restart_s if self.interrupt[j] or self.preempt[j] else 0.0
        ln = min(self.remaining[j] + overhead, self.req[j])
        self.run_start[j] = self.now
        self.run_len[j] = ln
        self.epoch[j] += 1
        self.running.add(j)
        end_t = self.now + ln
        heapq.heappush(self.run_ends, (end_t, j, self.epoch[j]))
        rk = self.rank[j]
        self.rank_count[rk] = self.rank_count.get(rk, 0) + 1
        if not st.pooled:
            if len(alloc) == 1:
                nodes = {alloc[0][0]}
                self.leafs[j] = self.sus[j] = 1
            else:
                nodes = {a[0] for a in alloc}
                leaf, su = self.leaf_of, self.su_of
                self.leafs[j] = len({leaf[x] for x in nodes})
                self.sus[j] = len({su[x] for x in nodes})
            if self.on_node is not None:
                for x in nodes:
                    self.on_node.setdefault(x, set()).add(j)
        self.push(end_t, END, (j, self.epoch[j]))

    def _stop(self, j: int) -> float:
        """Take a running job off its GPUs; return how long this attempt ran."""
        alloc = self.alloc[j]
        assert alloc is not None  # engine invariant, not user input
        self.st.give(alloc)
        self.team_milli[self.team[j]] -= self.alloc_milli[j]
        self.running.discard(j)
        # this attempt's entry in run_ends goes stale; stale entries leave from the top
        ends = self.run_ends
        epoch, status = self.epoch, self.status
        while ends:
            _, k, ep = ends[0]
            if k == j or epoch[k] != ep or status[k] != RUNNING:
                heapq.heappop(ends)
            else:
                break
        rk = self.rank[j]
        self.rank_count[rk] -= 1
        if not self.rank_count[rk]:
            del self.rank_count[rk]
        if self.on_node is not None:
            for a in alloc:
                s = self.on_node.get(a[0])
                if s:
                    s.discard(j)
        self.alloc[j] = None
        ran = self.now - self.run_start[j]
        self.run_total[j] += ran
        self.version += 1
        return ran

    def _finish(self, j: int) -> None:
        ran = self._stop(j)
        overhead = self.cfg.restart_s if self.interrupt[j] or self.preempt[j] else 0.0
        done_work = max(0.0, ran - overhead)
        if self.remaining[j] - done_work > 1e-6:
            self.status[j] = TIMEOUT
        else:
            self.status[j] = DONE
        self.remaining[j] = max(0.0, self.remaining[j] - done_work)
        self.end[j] = self.now
        self.outstanding -= 1
        self._release_waiters(j)

    def _interrupt(self, j: int, preempted: bool) -> None:
        """Requeue a running job; it keeps the work up to its last checkpoint."""
        ran = self._stop(j)
        overhead = self.cfg.restart_s if self.interrupt[j] or self.preempt[j] else 0.0
        work = max(0.0, ran - overhead)
        ck = self.ck[j]
        kept = math.floor(work / ck) * ck if math.isfinite(ck) and ck > 0 else 0.0
        kept = min(kept, self.remaining[j])
        self.remaining[j] -= kept
        lost = (ran - kept) * self.alloc_milli[j] / WHOLE
        if preempted:
            self.lost_p[j] += lost
        else:
            self.lost[j] += lost
        if preempted:
            self.preempt[j] += 1
        else:
            self.interrupt[j] += 1
        self.epoch[j] += 1
        self.status[j] = QUEUED
        key = self.static_keys[j] if self.static_keys is not None else \
            float(self.order.keys(self.ctx, np.array([j]), self.now)[0])
        if self.in_pass:
            self.deferred.append((key, j))
        else:
            self._queue_put(key, j)
        self.shadow = None
