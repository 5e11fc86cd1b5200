"""The scheduling pass: walk the queue in policy order and start what fits, within team limits
and reservations, backfilling behind a blocked head (EASY) or preempting for it."""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator
from itertools import starmap

import numpy as np

from clustertwin.scheduling.backfill import Backfill
from clustertwin.scheduling.preemption import Preemption
from clustertwin.scheduling.state import WHOLE

#: tails behind a blocked EASY head up to this long are scanned entry by entry in plain Python
#: (:meth:`Dispatch._fill_at`); longer ones with one NumPy test per try. Same entries tried.
SHORT_TAIL = 256

#: byte translation tables: ``_BELOW[n]`` maps a size class below ``n`` to 1, the others to 0
_BELOW = [b"\x01" * n + b"\x00" * (256 - n) for n in range(257)]



class Dispatch(Preemption, Backfill):
    """One scheduling pass after the events of an instant."""

    #: serve the queue behind a blocked EASY head with :meth:`_fill_behind` (False: the
    #: per-entry loop; the tests compare the two)
    fast_fill = True

    def _rekey(self) -> None:
        """Sort the queue by the order's keys now, ties by submit time, then job. Sorted
        stably by key alone when no two keys are equal (nor NaN), which is the same order;
        else the jobs are first put in (submit time, job) order by their ranks in it."""
        q = self.queue
        if not q:
            return
        jobs = np.fromiter(q, dtype=np.int64, count=len(q))
        keys = self.order.keys(self.ctx, jobs, self.now)
        idx = np.argsort(keys, kind="stable")
        sk = keys[idx]
        if (sk[1:] == sk[:-1]).any() or np.isnan(sk[-1]):
            rank = self.__dict__.get("_arrival")
            if rank is None:  # every job's place in (submit time, job) order
                by = np.argsort(self.w.submit_s, kind="stable")
                rank = self._arrival = np.empty_like(by)
                rank[by] = np.arange(len(by))
            first = np.argsort(rank[jobs])          # the queue in arrival order (ranks unique)
            jobs, keys = jobs[first], keys[first]
            idx = np.argsort(keys, kind="stable")
            sk = keys[idx]
        jobs = jobs[idx]
        self.queue = jobs.tolist()
        self.qkey = sk.tolist()
        self.qclass = bytearray(np.frombuffer(self.size_class, dtype=np.uint8)[jobs].tobytes())

    def _schedule(self) -> None:
        if not self.queue:
            self.fresh.clear()
            return
        self.in_pass = True
        try:
            self._pass()
        finally:
            self.in_pass = False
            for key, j in self.deferred:
                self._queue_put(key, j)
            self.deferred.clear()
            self.fresh.clear()

    def _pass(self) -> None:
        if self.order.dynamic and self.now >= self.next_calc:
            self._rekey()
            self.next_calc = self.now + self.order.calc_period_s
            self.dead = None
        if self.dead is not None and self._fill_fresh():
            return
        pol = self.pol
        st = self.st
        q = self.queue
        qk = self.qkey
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
            j = q[i]
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
                elif head is not None or self.shadow is None or not self._shadowed(j):
                    alloc = self.placer.place(st, m, self._mask(j, reserved if mode else None))
                if alloc is None:
                    failed[ck] = m if fm is None else min(fm, m)
            if alloc is not None:
                del q[i], qk[i], self.qclass[i]
                self._start(j, alloc)
                continue
            # j is blocked
            if head is None:
                if not tried_preempt:
                    tried_preempt = True
                    if self._try_preempt(j):
                        del q[i], qk[i], self.qclass[i]
                        continue
                if pol.backfill:
                    head = j
                    shadow_t, reserved, pool_extra = self._shadow(j)
                    i += 1
                    if self.fast_fill and not limits and not resv:  # the common case
                        changes = st.changes
                        self._fill_behind(i, seen, failed, shadow_t, reserved, pool_extra)
                        if seen == 1 and st.changes == changes and not pol.preempt:
                            self.dead = (changes, j)
                        return
                    continue
                if not pol.greedy:
                    break
            i += 1

    def _shadowed(self, h: int) -> bool:
        """Whether the cached shadow of ``h`` says it cannot start now, so that placing it
        would fail (fast path; no reservations, whose masks change with time, nor preemption):
        ``now`` is before its shadow time. When it was computed ``h`` did not fit (it was
        placed and failed, or needed more than was free), and the shadow is the first end of
        a running attempt after which it fits the state with those attempts given back.
        Every end since came before that, so the state then had at least the free GPUs there
        are now (starts since only took some), and placement is monotone: more free capacity
        never turns a fit into none. With preemption a head may be blocked untried (a victim
        frees GPUs after a larger entry failed, and the pass skips entries no smaller)."""
        sh = self.shadow
        return sh is not None and sh[0] == h and self.now < sh[2] and self.fast_fill \
            and not self.cfg.reservations and not self.pol.preempt

    def _late_mask(self, reserved: np.ndarray | None) -> np.ndarray | None:
        """The nodes a job that runs past the shadow time may use (all but the held ones), one
        array per cached shadow, with its bit set (bit n: node n; see :meth:`_late_bits`),
        which the placement is given so that it need not convert the array."""
        if reserved is None:
            return None
        last = self.__dict__.get("_late")
        if last is None or last[0] is not reserved:
            late = ~reserved
            bits = (1 << len(reserved)) - 1
            for node in np.flatnonzero(reserved).tolist():
                bits ^= 1 << node
            self.placer.know_bits(late, bits)
            last = self._late = (reserved, late, bits)
        return last[1]

    def _late_bits(self, reserved: np.ndarray | None) -> int:
        """:meth:`_late_mask` as a bit set (-1: every node)."""
        if reserved is None:
            return -1
        last = self.__dict__.get("_late")
        if last is None or last[0] is not reserved:
            self._late_mask(reserved)
            last = self._late
        return last[2]

    def _fill_fresh(self) -> bool:
        """Run the pass on the fresh entries alone if it may (returns whether it did): a fast-path EASY pass (backfill, no team limits, reservations or preemption) when
        the last one started nothing, the cluster's free GPUs have not changed since (no start,
        end, failure or repair) and the head is the same job: only the entries queued since
        (``self.fresh``) can start, so only they are tried, in queue order.

        Why that is the full pass: the head fails again (same free GPUs). Every other entry in
        the window was in the last pass's window (entries only leave the queue by starting, and
        new ones only push others back) and failed there, or was skipped by a threshold, which
        stands for a failure (placement is monotone: a job that does not fit, in a mode, is no
        smaller than one that failed in that mode). It fails again: its mode can only have gone
        from 0 to 1 (``now`` grew, the cached shadow did not move) and the free GPUs are the
        same or, after a fresh entry starts in this pass, fewer. The thresholds of the full pass
        only skip entries that would fail, so trying the fresh entries alone starts the same
        jobs on the same GPUs. The per-entry loop (``fast_fill = False``) checks it in tests."""
        q = self.queue
        st = self.st
        if self.dead != (st.changes, q[0]):
            self.dead = None
            return False
        h = q[0]
        shadow_t, reserved, pool_extra = self._shadow(h)
        depth = self.cfg.scan_depth
        stop = len(q) if depth is None else min(len(q), depth + 1)
        fresh = self.fresh
        if len(fresh) == 1:  # most often
            p = self._queue_pos(*fresh[0])
            pos = [p] if 0 < p < stop else []
        else:
            pos = sorted(p for p in starmap(self._queue_pos, fresh) if 0 < p < stop)
        if not pos or st.free_milli <= 0:
            return True
        changes = st.changes
        self._fill_at(pos, {(0, 0, 0): self.milli[h]}, shadow_t, reserved, pool_extra)
        if st.changes != changes:  # the window moves up behind the started jobs: a full pass
            self.dead = None
        return True

    def _fill_behind(self, i: int, seen: int, failed: dict[tuple[int, int, int], int],
                     shadow_t: float, reserved: np.ndarray | None, pool_extra: int) -> None:
        """The rest of an EASY pass behind the blocked head at ``q[i - 1]`` (no team limits, no
        reservations): exactly the entries and outcomes of the per-entry loop of :meth:`_pass`,
        found faster. The loop would visit the next ``depth + 1 - seen`` entries; an entry is
        tried only if it fits the free capacity and is smaller than the smallest that failed
        for its mode (1 = runs past the shadow time). Free capacity and those thresholds only
        fall during a pass, so the next entry the loop would try is the first one after the
        last tried that passes both tests with the current values: one vector test per try."""
        q = self.queue
        st = self.st
        depth = self.cfg.scan_depth
        stop = len(q) if depth is None else min(len(q), i + depth + 1 - seen)
        if stop <= i or st.free_milli <= 0:
            return
        if stop - i <= SHORT_TAIL:  # entry by entry, without building arrays
            if not self._none_fits(i, stop, shadow_t, reserved):
                self._fill_at(range(i, stop), failed, shadow_t, reserved, pool_extra)
            return
        jobs = np.array(q[i:stop], dtype=np.int64)
        m = self.w.gpus_milli[jobs]
        late = (self.now + self.w.requested_s[jobs]) > shadow_t
        fm = [failed.get((0, 0, 0), math.inf), failed.get((1, 0, 0), math.inf)]
        mask_late = self._late_mask(reserved)
        thr = np.where(late, fm[1], fm[0])  # recomputed only when a threshold falls
        started: list[int] = []
        c = 0
        while st.free_milli > 0:
            mc = m[c:]
            cond = (mc <= st.free_milli) & (mc < thr[c:])
            nxt = int(cond.argmax()) if cond.size else 0
            if not cond.size or not cond[nxt]:
                break
            c += nxt
            j = q[i + c]
            mj, mode = self.milli[j], int(late[c])
            c += 1
            alloc = None
            if mode == 1 and st.pooled:
                if mj <= pool_extra:
                    alloc = self.placer.place(st, mj)
                    if alloc is not None:
                        pool_extra -= mj
            else:
                alloc = self.placer.place(st, mj, mask_late if mode else None)
            if alloc is None:
                if mj < fm[mode]:
                    fm[mode] = mj
                    thr = np.where(late, fm[1], fm[0])
                continue
            started.append(i + c - 1)
            self._start(j, alloc)
        qk, qc = self.qkey, self.qclass
        for k in reversed(started):
            del q[k], qk[k], qc[k]

    def _none_fits(self, i: int, stop: int, shadow_t: float, reserved: np.ndarray | None) -> bool:
        """Whether no entry of ``q[i:stop]`` can start behind the blocked head, told from the
        cluster state alone, so that the fill would try entries that all fail: every entry
        of the workload runs past the shadow time (placed off the held nodes), none of the
        nodes it may use is idle (which an entry over several nodes would need), and every
        entry in the window needs more whole GPUs than any of them has free (its size class
        says at least how many; a share of one GPU always counts as fitting)."""
        st = self.st
        if st.pooled or self.now + self.min_req <= shadow_t:
            return False
        allowed = self._late_bits(reserved)
        by = st.by_full  # the most free GPUs on a node it may use (down nodes count 0)
        most = len(by) - 1
        while most > 0 and not by[most] & allowed:
            most -= 1
        if most >= self.min_node_gpus:
            return False
        level = bisect.bisect_left(self.milli_levels, (most + 1) * WHOLE)
        return self.qclass[i:stop].translate(_BELOW[min(level, 256)]).find(1) < 0

    def _fill_at(self, positions: Iterable[int], failed: dict[tuple[int, int, int], int],
                 shadow_t: float, reserved: np.ndarray | None, pool_extra: int) -> None:
        """Try the queue entries at ``positions`` (ascending) one by one, as the per-entry
        loop of :meth:`_pass` would behind the blocked head: skip one that does not fit the
        free capacity or is no smaller than the smallest that failed in its mode, start one
        that can be placed. Started entries leave the queue at the end.

        Two bounds of the workload cut the scan short without changing what it tries: when even
        its shortest time limit ends past the shadow time, every entry is in mode 1 (so the
        mode-0 threshold never applies), and once no job of the workload is below the limit of
        what may still be tried, nothing further is (typically a one-GPU job failed). An entry of
        the blocked head's size (the mode-0 failure in ``failed``, the head's own without
        preemption) fails in mode 1 without a placement: the cluster state is the one the
        head failed in or has less free, and the mask only narrows it."""
        q = self.queue
        st = self.st
        milli, req, now = self.milli, self.req, self.now
        place = self.placer.place
        pooled = st.pooled
        fm0 = failed.get((0, 0, 0), math.inf)
        fm1 = failed.get((1, 0, 0), math.inf)
        head_m = -1 if self.pol.preempt else fm0  # see the last paragraph above
        mask_late = self._late_mask(reserved)
        free = st.free_milli  # changes only when a job starts (the caller checked it is > 0)
        late = now + self.min_req > shadow_t  # every entry runs past the shadow time
        smallest = self.min_milli
        # an entry of lim or more is skipped: more than the free capacity (whole milli) or no
        # smaller than the thresholds of the modes it may be in
        lim = min(free + 1, fm1 if late else max(fm0, fm1))
        started: list[int] = []
        box = [lim]  # what _entries_below reads
        if isinstance(positions, range) and positions.step == 1:
            positions = self._entries_below(positions.start, positions.stop, box)
        for c in positions if lim > smallest else ():
            j = q[c]
            mj = milli[j]
            if mj >= lim:
                continue
            if now + req[j] > shadow_t:  # mode 1: runs past the shadow time
                if mj >= fm1:
                    continue
                if pooled:
                    alloc = place(st, mj) if mj <= pool_extra else None
                    if alloc is not None:
                        pool_extra -= mj
                else:  # the head's size fails too (the same state or less, and a mask)
                    alloc = None if mj == head_m else place(st, mj, mask_late)
                if alloc is None:
                    fm1 = mj
            else:
                if mj >= fm0:
                    continue
                alloc = place(st, mj, None)
                if alloc is None:
                    fm0 = mj
            if alloc is not None:
                started.append(c)
                self._start(j, alloc)
                free = st.free_milli
            lim = box[0] = min(free + 1, fm1 if late else max(fm0, fm1))
            if free <= 0 or lim <= smallest:  # nothing left that may be tried
                break
        qk, qc = self.qkey, self.qclass
        for k in reversed(started):
            del q[k], qk[k], qc[k]

    def _entries_below(self, lo: int, hi: int, lim: list[int]) -> Iterator[int]:
        """The positions in ``[lo, hi)`` of the queue entries that may need fewer than
        ``lim[0]`` milli-GPUs, ascending, found by a bytes scan of their size classes
        (``qclass``, see :meth:`RunState._queue_put`): every entry below is among them, and
        where a workload has over 255 distinct demands the classes are too coarse to tell
        some above (the caller tests each entry anyway). ``lim[0]`` may fall while the caller
        works on an entry; it is read again before the next is looked for."""
        levels = self.milli_levels
        seen = lim[0]
        level = bisect.bisect_left(levels, seen)
        row = self.qclass[lo:hi].translate(_BELOW[min(level, 256)])
        k = row.find(1)
        while k >= 0:
            yield lo + k
            if lim[0] != seen:
                seen = lim[0]
                now_level = bisect.bisect_left(levels, seen)
                if now_level != level:
                    level = now_level
                    row = self.qclass[lo:hi].translate(_BELOW[min(level, 256)])
            k = row.find(1, k + 1)
