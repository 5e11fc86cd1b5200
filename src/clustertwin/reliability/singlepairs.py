"""The running (interval, trial) pairs of the single-tier loop (:mod:`.singletier`), moved a run
of events (rows) at a time.

A pair that is still running has failed at every event so far, so over a run of rows each
pair's totals follow from its trial's productive times alone (:func:`.singlestate.fail_rows`,
summed in event order); a pair ends at the first row where it finishes (the reference's test
``s >= need`` on its totals before that row) or its trial's clock passes the wall-clock limit,
and what it did after that row is never read. Until the first pair ends, the pairs are an
``(intervals, trials)`` grid that reads its trials' values by broadcasting; from then on a flat
list in (interval, trial) order that reads them by index, pairs that ended dropped."""

from __future__ import annotations

from typing import Any

import numpy as np

from clustertwin.reliability.arrivals import Block
from clustertwin.reliability.singlestate import (
    KEPT,
    OUT_FLOAT,
    Scratch,
    TrialRows,
    fail_rows,
    plan_rows,
    running_sums,
)

#: the exact finishing test is skipped while every trial's clock is this far short of the work
#: (a relative margin far above the rounding of a million summed events): work kept plus work
#: since the last recovery never exceeds the time elapsed
CLOCK_MARGIN = 1e-6
#: rows x pairs moved at once (bounds the scratch arrays, and the work done for a pair after
#: it ended within a run of rows)
BUDGET = 1 << 15
#: the first pair's column of (rows, pairs) and (rows, intervals, trials) arrays
_FIRST = {2: (slice(None), 0), 3: (slice(None), 0, 0)}


class Pairs:
    """The running pairs: totals ``acc`` (kept, stall, lost) and intervals ``tau``, cycles
    ``period`` (``tau`` + stall), shape (intervals, trials) as a grid, (pairs,) as a list with
    each pair's number ``pid`` (interval * trials + trial) and trial ``tr``."""

    def __init__(self, tau: np.ndarray, n: int, delta: float, scratch: Scratch) -> None:
        g = tau.shape[0]
        self.grid, self.n, self.scratch = True, n, scratch
        self.acc = np.zeros((3, g, n))
        self.tau, self.period = tau, tau + delta        # (g, 1): the reference's period
        self.pid, self.tr = np.arange(g * n), np.tile(np.arange(n), g)

    @property
    def size(self) -> int:
        return self.pid.size

    def rows_at_once(self) -> int:
        return max(1, BUDGET // self.size)

    def per_pair(self, x: np.ndarray, name: str | None = None) -> np.ndarray:
        """Per-trial rows ``x`` (R, trials) read by each pair (broadcast over the grid; in the
        scratch array ``name`` when given)."""
        if self.grid:
            return x[:, None, :]
        out = None if name is None else self.scratch(name, (x.shape[0], self.size), x.dtype)
        return np.take(x, self.tr, axis=1, out=out)

    def _flat(self, a: np.ndarray) -> np.ndarray:
        """A per-pair array of the grid as a list (trailing axes ``(g, n)`` or ``(g, 1)``)."""
        if not self.grid:
            return a
        full = np.broadcast_to(a, a.shape[:-1] + (self.n,))
        return full.reshape(a.shape[:-2] + (self.pid.size,))

    def move(self, sim: Any, blk: Block, b0: int, b1: int) -> int | None:
        """Events ``b0 .. b1-1`` of ``blk``; returns the row after the last pair's end when no
        pair runs any more, else None."""
        n_rows, tmp, n_pairs = b1 - b0, self.scratch, self.acc[0].size
        both = tmp("sums", (n_rows + 1, 3 * n_pairs + 2 * self.n))    # pairs' and trials' totals
        x = both[:, :3 * n_pairs].reshape((n_rows + 1,) + self.acc.shape)
        trials = sim.trials.rows(blk.t[b0:b1], blk.avail[b0:b1],
                                 both[:, 3 * n_pairs:].reshape(n_rows + 1, 2, self.n))
        s = self.per_pair(trials.s, "s_pairs")
        pf = self.per_pair(blk.planned[b0:b1].astype(float), "pf_pairs")
        x[0] = self.acc
        if sim.persist <= 0:
            shape = (n_rows,) + self.acc.shape[1:]
            kt, comp = fail_rows(s, self.tau, self.period, sim.delta, x[1:], tmp("k", shape),
                                 tmp("rem", shape))
            first_kt, first_comp = kt[_FIRST[kt.ndim]].copy(), comp[_FIRST[kt.ndim]].copy()
            plan_rows(x[1:], pf, tmp("rem", shape))
        else:
            kt, comp = sim.fail(s, self.tau, self.period, sim.delta, x[1:], pf, 1.0 - pf)
            first_kt, first_comp = kt[_FIRST[kt.ndim]], comp[_FIRST[kt.ndim]]
        running_sums(both)
        sim.trials.settle(trials)
        flat = x.reshape(n_rows + 1, 3, -1)
        end = self._ends(sim, blk, b0, b1, s, x)
        if sim.record and self.pid[0] == 0:
            upto = int(end[0]) if end[0] < n_rows else n_rows
            at_fail = flat[:upto, KEPT, 0] + first_kt[:upto] + first_comp[:upto]
            for r in range(upto):
                sim.out.timeline.append((float(blk.t[b0 + r, 0]), int(blk.cause[b0 + r, 0]),
                                         float(at_fail[r]), float(flat[r + 1, KEPT, 0]),
                                         float(trials.rec[r + 1, 0])))
        idx = np.flatnonzero(end < n_rows)
        if idx.size == 0:
            self.acc = x[-1].copy()
            return None
        self._end(sim, blk, b0, trials, flat, idx, end.take(idx))
        if idx.size == self.size:
            return b0 + int(end.max()) + 1
        keep = np.flatnonzero(end == n_rows)
        self.tau, self.period = (self._flat(a).take(keep) for a in (self.tau, self.period))
        self.acc = flat[-1].take(keep, axis=1)
        self.pid, self.tr, self.grid = self.pid.take(keep), self.tr.take(keep), False
        return None

    def _ends(self, sim: Any, blk: Block, b0: int, b1: int, s: np.ndarray,
              x: np.ndarray) -> np.ndarray:
        """Per pair the first row at which it ends (``R`` where it does not). On the grid the
        test starts at the first row at which a trial's clock nears the work or passes the
        limit (:data:`CLOCK_MARGIN`), and a row where no pair has its work left in reach
        (``s >= work - kept``, ``need`` being no less) skips the exact ``need``."""
        n_rows, t, limit = b1 - b0, blk.t[b0:b1], sim.limit
        last = t.max(axis=1)
        lim = t > limit if limit is not None else None
        start = 0
        if self.grid:
            test = last >= sim.work * (1.0 - CLOCK_MARGIN)
            if lim is not None:
                test |= lim.any(axis=1)
            start = int(test.argmax()) if test.any() else n_rows
        end = np.full(self.size, n_rows)
        if start == n_rows:
            return end
        tmp, shape = self.scratch, (n_rows - start,) + x.shape[2:]
        remaining = np.subtract(sim.work, x[start:n_rows, KEPT], out=tmp("remaining", shape))
        hit = np.greater_equal(s[start:], remaining, out=tmp("hit", shape, bool))
        reach = hit.reshape(shape[0], -1).any(axis=1)
        if reach.any():
            r0 = int(reach.argmax())
            rem, n_ck, hit_r = remaining[r0:], tmp("n_ck", shape)[r0:], hit[r0:]
            np.divide(rem, self.tau, out=n_ck)
            np.ceil(n_ck, out=n_ck)
            n_ck -= 1.0
            np.maximum(n_ck, 0.0, out=n_ck)
            n_ck *= sim.delta
            n_ck += rem                                   # need
            np.greater_equal(s[start + r0:], n_ck, out=hit_r)
        if lim is not None:
            hit |= self.per_pair(lim[start:])
        flat = hit.reshape(shape[0], -1)
        if not flat.any():
            return end
        weight = np.arange(shape[0], 0, -1, dtype=np.int16)   # R - row: the first row most
        score = np.multiply(flat, weight[:, None], out=tmp("score", flat.shape, np.int16))
        score = score.max(axis=0)
        return np.where(score > 0, n_rows - score.astype(np.intp), end)

    def _end(self, sim: Any, blk: Block, b0: int, trials: TrialRows, flat: np.ndarray,
             idx: np.ndarray, row: np.ndarray) -> None:
        """Write out the totals of the pairs ``idx`` that finish or reach the wall-clock limit
        at rows ``row`` (the reference's arithmetic for them)."""
        kept, stall, lost = flat[row, :, idx].T
        tau, period = (self._flat(a).take(idx) for a in (self.tau, self.period))
        pid, tr, out, delta = self.pid.take(idx), self.tr.take(idx), sim.out, sim.delta
        s = trials.s[row, tr]
        remaining = sim.work - kept
        n_ck = np.maximum(np.ceil(remaining / tau) - 1.0, 0.0)
        need = remaining + n_ck * delta
        vals = np.empty((len(OUT_FLOAT), idx.size))       # wall, work, stall, lost, restart, waiting
        vals[3] = lost
        vals[5], vals[4] = trials.acc[row + 1, :, tr].T
        wall_finish = trials.rec[row, tr] + need
        if sim.limit is None:                             # every one finishes
            vals[0], vals[1] = wall_finish, sim.work
            np.add(stall, n_ck * delta, out=vals[2])
        else:
            finish = s >= need
            k = np.floor(s / period)
            rem = s - k * period
            comp = np.minimum(rem, tau)
            vals[0] = np.where(finish, wall_finish, sim.limit if sim.limit else 0.0)
            vals[1] = np.where(finish, sim.work, kept + k * tau + comp)
            vals[2] = stall + np.where(finish, n_ck * delta, k * delta + (rem - comp))
        out.floats.reshape(len(OUT_FLOAT), -1)[:, pid] = vals
        event = blk.first + b0 + row
        n_unexp = sim.counter.unexp_upto(blk, b0 + row, tr)
        out.ints.reshape(2, -1)[:, pid] = (n_unexp, event - n_unexp)
        sim.counter.ended(pid, event)
        if sim.record and pid[0] == 0:
            out.timeline.append((float(vals[0, 0]), -1, float(vals[1, 0]), float(vals[1, 0]),
                                 float(vals[0, 0])))
