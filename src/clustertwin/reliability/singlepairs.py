"""The running (interval, trial) pairs of the single-tier loop (:mod:`.singletier`), moved a run
of events (rows) at a time.

A pair that is still running has failed at every event so far, so over a run of rows each
pair's totals follow from its trial's productive times alone (:func:`.singlestate.fail_rows`,
summed in event order); a pair ends at the first row where it finishes (the reference's test
``s >= need`` on its totals before that row) or its trial's clock passes the wall-clock limit,
and what it did after that row is never read. The pairs are a list in (interval, trial) order,
pairs that ended dropped; until the first one ends it is the whole grid, which reads its trials'
values by copying them once per interval (from then on by index)."""

from __future__ import annotations

from typing import Any

import numpy as np

from clustertwin.reliability.arrivals import Block
from clustertwin.reliability.scratch import Scratch, row_totals
from clustertwin.reliability.singlestate import (
    KEPT,
    OUT_FLOAT,
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
BUDGET = 1 << 16


class Pairs:
    """The running pairs as a list: totals ``acc`` (kept, stall, lost) x pairs, intervals
    ``tau`` and cycles ``period`` (``tau`` + stall) per pair, each pair's number ``pid``
    (interval * trials + trial) and trial ``tr``. While ``grid`` (no pair dropped yet) the list
    is every (interval, trial) pair in order."""

    def __init__(self, tau: np.ndarray, n: int, delta: float, scratch: Scratch) -> None:
        g = tau.shape[0]
        self.grid, self.n, self.scratch = True, n, scratch
        self.acc = np.zeros((3, g * n))
        period = tau + delta                              # the reference's period, (g, 1)
        self.tau, self.period = (np.repeat(a[:, 0], n) for a in (tau, period))
        self.pid, self.tr = np.arange(g * n), np.tile(np.arange(n), g)

    @property
    def size(self) -> int:
        return self.pid.size

    def rows_at_once(self) -> int:
        return max(1, BUDGET // self.size)

    def spread(self, x: np.ndarray, name: str) -> np.ndarray:
        """Per-trial values ``x`` (..., trials) for each pair (..., pairs), in the scratch
        array ``name`` (``x`` itself while the pairs are the trials of one interval)."""
        if self.grid and self.size == self.n:
            return x
        out = self.scratch(name, x.shape[:-1] + (self.size,), x.dtype)
        if self.grid:
            grid = out.reshape(x.shape[:-1] + (self.size // self.n, self.n))
            np.copyto(grid, x[..., None, :])
        else:
            np.take(x, self.tr, axis=-1, out=out)
        return out

    def move(self, sim: Any, blk: Block, b0: int, b1: int) -> int | None:
        """Events ``b0 .. b1-1`` of ``blk``; returns the row after the last pair's end when no
        pair runs any more, else None. Where no pair can end in these rows, only the totals
        after them are added up (:func:`.scratch.row_totals`)."""
        n_rows, tmp, size = b1 - b0, self.scratch, self.size
        start = self._test_from(sim, blk.t[b0:b1])
        quiet = start == n_rows
        x = tmp("x", (3, n_rows + 1, size))               # kept, stall, lost: before, after each
        per_trial = tmp("per_trial", (2, n_rows, self.n))  # s, planned as 1.0/0.0
        trials = sim.trials.rows(blk.t[b0:b1], blk.avail[b0:b1], per_trial[0], not quiet)
        per_trial[1] = blk.planned[b0:b1]
        s, pf = self.spread(per_trial, "per_pair")
        x[:, 0] = self.acc
        if sim.persist <= 0:
            shape = (n_rows, size)
            kt, comp = fail_rows(s, self.tau, self.period, sim.delta, x[:, 1:], tmp("k", shape),
                                 tmp("rem", shape))
            first = kt[:, 0].copy(), comp[:, 0].copy()    # the first pair's, for its timeline
            plan_rows(x[:, 1:], pf, tmp("rem", shape))
        else:
            kt, comp = sim.fail(s, self.tau, self.period, sim.delta, x[:, 1:], pf, 1.0 - pf)
            first = kt[:, 0], comp[:, 0]
        if quiet:
            if sim.record and self.pid[0] == 0:
                self._record(sim, blk, b0, trials, np.cumsum(x[KEPT, :, 0]), first, n_rows)
            self.acc = row_totals(x)
            return None
        running_sums(x)
        end = self._ends(sim, blk, b0, b1, s, x, start)
        if sim.record and self.pid[0] == 0:
            self._record(sim, blk, b0, trials, x[KEPT, :, 0], first, min(int(end[0]), n_rows))
        idx = np.flatnonzero(end < n_rows)
        if idx.size == 0:
            self.acc = x[:, -1].copy()
            return None
        self._end(sim, blk, b0, trials, x, idx, end.take(idx))
        if idx.size == size:
            return b0 + int(end.max()) + 1
        keep = np.flatnonzero(end == n_rows)
        self.tau, self.period, self.pid, self.tr = (
            a.take(keep) for a in (self.tau, self.period, self.pid, self.tr))
        self.acc, self.grid = x[:, -1].take(keep, axis=1), False
        return None

    @staticmethod
    def _record(sim: Any, blk: Block, b0: int, trials: TrialRows, kept: np.ndarray,
                first: tuple[np.ndarray, np.ndarray], upto: int) -> None:
        """The first pair's failures in rows ``0 .. upto-1`` on the timeline: the work at the
        failure (kept before it + k tau + comp), kept after it, its trial's recovery end."""
        at_fail = kept[:upto] + first[0][:upto] + first[1][:upto]
        for r in range(upto):
            sim.out.timeline.append((float(blk.t[b0 + r, 0]), int(blk.cause[b0 + r, 0]),
                                     float(at_fail[r]), float(kept[r + 1]),
                                     float(trials.rec[r + 1, 0])))

    def _test_from(self, sim: Any, t: np.ndarray) -> int:
        """The first of the rows at times ``t`` at which a pair may end: on the grid where a
        trial's clock nears the work (:data:`CLOCK_MARGIN`) or passes the limit; after the
        first end, the first row. ``len(t)`` where none may."""
        if not self.grid:
            return 0
        test = t.max(axis=1) >= sim.work * (1.0 - CLOCK_MARGIN)
        if sim.limit is not None:
            test |= (t > sim.limit).any(axis=1)
        return int(test.argmax()) if test.any() else t.shape[0]

    def _ends(self, sim: Any, blk: Block, b0: int, b1: int, s: np.ndarray,
              x: np.ndarray, start: int) -> np.ndarray:
        """Per pair the first row at which it ends (``R`` where it does not), testing from
        row ``start`` (:meth:`_test_from`). A pair can only finish where its work left is in
        reach (``s >= work - kept``, ``need`` being no less): the exact ``need`` is worked out
        at each pair's first such row, and where it does not finish there, at its next (what
        the arithmetic did with a pair after its end is never read); the first row at which
        its trial's clock passes the wall-clock limit ends it too."""
        n_rows, size = b1 - b0, self.size
        tmp, shape = self.scratch, (n_rows - start, size)
        remaining = np.subtract(sim.work, x[KEPT, start:n_rows], out=tmp("remaining", shape))
        hit = np.greater_equal(s[start:], remaining, out=tmp("hit", shape, bool))
        end = np.full(size, n_rows)
        cells = np.flatnonzero(hit.any(axis=0))
        rows = hit.argmax(axis=0).take(cells)             # each pair's first row in reach
        s_flat, rem_flat = s[start:].reshape(-1), remaining.reshape(-1)
        while cells.size:
            flat = rows * size + cells
            rem = rem_flat.take(flat)
            n_ck = np.maximum(np.ceil(rem / self.tau.take(cells)) - 1.0, 0.0)
            ok = s_flat.take(flat) >= rem + n_ck * sim.delta
            end[cells[ok]] = rows[ok] + start
            cells, rows = cells[~ok], rows[~ok]           # the event interrupts these: on
            if cells.size:
                hit.reshape(-1)[rows * size + cells] = False
                later = hit[:, cells]
                more = later.any(axis=0)
                cells, rows = cells[more], later.argmax(axis=0)[more]
        if sim.limit is not None:                         # the trial's window closed
            lim = blk.t[b0 + start:b1] > sim.limit
            lim_row = np.where(lim.any(axis=0), lim.argmax(axis=0) + start, n_rows)
            np.minimum(end, lim_row.take(self.tr), out=end)
        return end

    def _end(self, sim: Any, blk: Block, b0: int, trials: TrialRows, x: np.ndarray,
             idx: np.ndarray, row: np.ndarray) -> None:
        """Write out the totals of the pairs ``idx`` that finish or reach the wall-clock limit
        at rows ``row`` (the reference's arithmetic for them)."""
        kept, stall, lost = x[:, row, idx]
        tau = self.tau.take(idx)
        pid, tr, out, delta = self.pid.take(idx), self.tr.take(idx), sim.out, sim.delta
        remaining = sim.work - kept
        n_ck = np.maximum(np.ceil(remaining / tau) - 1.0, 0.0)
        ck_stall = n_ck * delta                           # the checkpoints still to write
        need = remaining + ck_stall
        vals = np.empty((len(OUT_FLOAT), idx.size))       # wall, work, stall, lost, restart, waiting
        vals[3] = lost
        vals[5], vals[4] = trials.acc[:, row + 1, tr]
        wall_finish = trials.rec[row, tr] + need
        if sim.limit is None:                             # every one finishes
            vals[0], vals[1] = wall_finish, sim.work
            np.add(stall, ck_stall, out=vals[2])
        else:
            s, period = trials.s[row, tr], self.period.take(idx)
            finish = s >= need
            k = np.floor(s / period)
            rem = s - k * period
            comp = np.minimum(rem, tau)
            vals[0] = np.where(finish, wall_finish, sim.limit if sim.limit else 0.0)
            vals[1] = np.where(finish, sim.work, kept + k * tau + comp)
            vals[2] = stall + np.where(finish, ck_stall, k * delta + (rem - comp))
        out.floats.reshape(len(OUT_FLOAT), -1)[:, pid] = vals
        event = blk.first + b0 + row
        n_unexp = sim.counter.unexp_upto(blk, b0 + row, tr)
        out.ints.reshape(2, -1)[:, pid] = (n_unexp, event - n_unexp)
        sim.counter.ended(pid, event)
        if sim.record and pid[0] == 0:
            out.timeline.append((float(vals[0, 0]), -1, float(vals[1, 0]), float(vals[1, 0]),
                                 float(vals[0, 0])))
