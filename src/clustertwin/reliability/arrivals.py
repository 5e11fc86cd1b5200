"""Failure arrivals of a batch of trials: :class:`Arrivals` draws one event per call,
:class:`ArrivalChunks` a block of events per call with the same numbers in the same order.

Arrivals do not depend on what the job is doing, so a block of events can be drawn ahead of
the loop that consumes them: per event the generator is called exactly as :class:`Arrivals`
calls it (``exponential`` then ``random``, ``trials`` values each), and the per-event
arithmetic that follows (running sum of the gaps, cause lookup, replacement-ready times) is
done once per block on ``(events, trials)`` arrays. :meth:`ArrivalChunks.rewind` then leaves
the generator where drawing event by event would have left it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clustertwin.reliability.runspec import RunSpec
from clustertwin.reliability.scratch import down_rows, scratch


class Arrivals:
    """The failure process of a batch of trials, shared by every configuration simulated
    together: Poisson arrivals (unexpected causes plus planned), and for each arrival the time a
    replacement node is ready (a spare, or the failed node back from ``repair_h`` of repair)."""

    def __init__(self, spec: RunSpec, trials: int, rng: np.random.Generator) -> None:
        rates = np.asarray(spec.rates_per_h, dtype=float)
        self.n_causes = rates.size
        self.lam = float(rates.sum()) + spec.planned_per_h
        self.cum = (np.cumsum(np.append(rates, spec.planned_per_h)) / self.lam
                    if self.lam > 0 else None)
        self.repair_of = np.append(np.asarray(spec.needs_repair, dtype=bool), False)
        self.spares, self.hold = int(spec.spare_nodes), spec.repair_h
        self.n, self.rng = int(trials), rng
        self.idx = np.arange(self.n)
        self.ring = np.zeros((self.n, self.spares)) if self.spares > 0 else None
        self.n_rep = np.zeros(self.n, dtype=np.int64)

    def next(self, t_prev: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Next arrival after ``t_prev`` per trial: ``(time_h, cause, planned, replacement_ready_h)``;
        ``cause == n_causes`` is a planned interruption."""
        n, rng = self.n, self.rng
        if self.lam > 0:
            t_now = t_prev + rng.exponential(1.0 / self.lam, n)
            cause = np.minimum(np.searchsorted(self.cum, rng.random(n), side="right"),
                               self.n_causes)
        else:
            t_now = np.full(n, np.inf)
            cause = np.zeros(n, dtype=np.int64)
        planned = cause == self.n_causes
        rep = self.repair_of[cause]
        if self.spares == 0:
            avail = np.where(rep, t_now + self.hold, t_now)
        else:
            # with a fixed repair time the node that frees the job is the one that failed
            # ``spares`` repair-needing failures earlier
            slot = self.n_rep % self.spares
            back = self.ring[self.idx, slot] + self.hold
            avail = np.where(rep & (self.n_rep >= self.spares), np.maximum(back, t_now), t_now)
            self.ring[self.idx[rep], slot[rep]] = t_now[rep]
            self.n_rep += rep
        return t_now, cause, planned, avail


@dataclass
class Block:
    """``rows`` consecutive events of every trial, arrays of shape (rows, trials): arrival time
    (hours), cause (``n_causes`` = planned), planned, replacement ready (hours)."""

    first: int                  #: index of the first event in the run
    t: np.ndarray
    cause: np.ndarray
    planned: np.ndarray
    avail: np.ndarray

    @property
    def rows(self) -> int:
        return self.t.shape[0]


#: equal bins of [0, 1) in the cause table (a power of two: ``u * CAUSE_BINS`` is exact)
CAUSE_BINS = 4096
_UNSURE = 127


def _cause_table(cum: np.ndarray, n_causes: int, repair_of: np.ndarray) -> np.ndarray:
    """Per bin ``[i, i + 1) / CAUSE_BINS`` the cause of every draw in it (the sorted shares
    ``cum`` below the bin, at most ``n_causes``, less than ``_UNSURE``), plus 128 where it
    needs a repair; ``_UNSURE`` where a share falls inside the bin."""
    lo = np.arange(CAUSE_BINS) / CAUSE_BINS
    below = np.searchsorted(cum, lo, side="left")
    below_next = np.searchsorted(cum, lo + 1.0 / CAUSE_BINS, side="left")
    cause = np.minimum(below, n_causes)
    table = (cause | repair_of[cause] * 128).astype(np.uint8)
    table[below != below_next] = _UNSURE
    return table


def _rows_of_rank(rank: np.ndarray, cols: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per ``(cols[i], target[i])`` the first row whose running count ``rank`` (rows x cols,
    non-decreasing down each column) reaches ``target[i]``: a binary search per column."""
    flat, width = rank.ravel(), rank.shape[1]
    lo = np.zeros(cols.size, dtype=np.intp)
    hi = np.full(cols.size, rank.shape[0] - 1, dtype=np.intp)
    while (lo < hi).any():
        mid = (lo + hi) // 2
        below = flat[mid * width + cols] < target
        lo = np.where(below, mid + 1, lo)
        hi = np.where(below, hi, mid)
    return lo


class ArrivalChunks:
    """:class:`Arrivals`, ``ROWS`` events at a time (the first block ``first`` events when
    given: a caller that expects a short run draws no more than it needs); the generator's
    state is saved every ``MARK`` events so that :meth:`rewind` redraws at most that many.
    (Larger blocks draw more events past the end of a run than they save in per-block work;
    measured on a plan's runs.) A block's times and replacement-ready times are written over
    two blocks later (fresh arrays of this size cost page faults): a caller keeps no view of a
    block beyond the next one."""

    ROWS, MARK = 128, 16

    def __init__(self, spec: RunSpec, trials: int, rng: np.random.Generator,
                 first: int | None = None) -> None:
        one = Arrivals(spec, 0, rng)
        self.n, self.n_causes, self.lam, self.cum = int(trials), one.n_causes, one.lam, one.cum
        self.repair_of, self.spares, self.hold, self.rng = one.repair_of, one.spares, one.hold, rng
        self.t_last = np.zeros(self.n)
        # the last ``spares`` events' times (-inf before the run) and repair-needing failures'
        # times, in rings (see _back_times, _keep_last), and the repair-needing failures so far
        self.t_tail = np.full((self.spares, self.n), -np.inf)
        self.hist = np.zeros((self.n, self.spares))
        self.n_rep = np.zeros(self.n, dtype=np.int64)
        self.drawn, self.blocks = 0, 0
        self.rows = self.ROWS if first is None else max(1, min(int(first), self.ROWS))
        self.marks: list[tuple[int, dict]] = []
        cum = self.cum
        # searchsorted(cum, u, "right") counts the cumulative shares <= u when they are sorted
        self.by_count = (cum is not None and cum.size < _UNSURE
                         and bool(np.all(cum[1:] >= cum[:-1])))
        self.lookup = _cause_table(cum, self.n_causes, self.repair_of) if self.by_count else None
        self.times = np.empty((2, 2, self.ROWS, self.n))  # (t, avail) of this block, the last

    def _draw(self, rows: int) -> tuple[np.ndarray, np.ndarray]:
        n, rng = self.n, self.rng
        gaps = self.times[self.blocks % 2, 0, :rows]
        u = scratch()("arrivals.u", (rows, n))
        exponential, uniform = rng.standard_exponential, rng.random
        bits = rng.bit_generator
        self.marks = []
        for b in range(rows):
            if b % self.MARK == 0:
                self.marks.append((self.drawn + b, bits.state))
            exponential(out=gaps[b])
            uniform(out=u[b])
        # exponential(scale) is scale * standard_exponential(), value for value: scaled in
        # one pass over the block instead of a new array per row
        gaps *= 1.0 / self.lam
        gaps[0] += self.t_last                  # t_prev + gap, summed in event order
        down_rows(np.add, gaps[None])
        return gaps, u

    def _causes(self, u: np.ndarray) -> np.ndarray:
        """The causes of uniform draws ``u``: ``searchsorted(cum, u, "right")``, at most
        ``n_causes``."""
        if not self.by_count:
            return np.minimum(np.searchsorted(self.cum, u, side="right"), self.n_causes)
        return self._codes(u) & 127

    def _codes(self, u: np.ndarray) -> np.ndarray:
        """:meth:`_causes` with sorted shares, plus 128 where the cause needs a repair: from a
        table of ``CAUSE_BINS`` equal bins of [0, 1), exact where no share falls inside a
        draw's bin (``u * CAUSE_BINS`` is exact), the search itself where one does."""
        tmp = scratch()
        bins = tmp("arrivals.bins", u.shape, np.uint16)
        scaled = np.multiply(u, CAUSE_BINS, out=tmp("arrivals.scaled", u.shape))
        np.copyto(bins, scaled, casting="unsafe")
        code = self.lookup.take(bins)
        unsure = np.flatnonzero(code == _UNSURE)
        if unsure.size:
            found = np.minimum(np.searchsorted(self.cum, u.ravel()[unsure], side="right"),
                               self.n_causes)
            code.ravel()[unsure] = found | self.repair_of[found] * 128
        return code

    def block(self) -> Block:
        """The next block of events."""
        rows, first = self.rows, self.drawn
        rep = None
        if self.lam > 0:
            t, u = self._draw(rows)
            if self.by_count:
                code = self._codes(u)
                cause, rep = code & 127, code >= 128
            else:
                cause = self._causes(u)
        else:
            t = np.full((rows, self.n), np.inf)
            cause = np.zeros((rows, self.n), dtype=np.int64)
        avail = self.times[self.blocks % 2, 1, :rows]
        self.drawn, self.blocks, self.rows = self.drawn + rows, self.blocks + 1, self.ROWS
        self.t_last = t[-1].copy()
        if rep is None:
            rep = self.repair_of.take(cause)
        np.copyto(avail, t)
        if self.spares == 0:
            np.add(t, self.hold, out=avail, where=rep)
        else:
            self._ring(t, rep, first, avail)
        return Block(first, t, cause, cause == self.n_causes, avail)

    def _ring(self, t: np.ndarray, rep: np.ndarray, first: int, avail: np.ndarray) -> None:
        """Replacement-ready times with spares, into ``avail`` (holding ``t``): the node that
        frees the job is the one that failed ``spares`` repair-needing failures earlier in the
        same trial, back ``repair_h`` after it failed. That failure came no later than the
        event ``spares`` places back, so only where that event is less than ``repair_h`` old
        can the job wait; there the failure is found by its rank (running count of
        repair-needing failures)."""
        s, hold, tmp = self.spares, self.hold, scratch()
        rank = tmp("arrivals.rank", t.shape, np.int32)
        rank[:] = rep
        down_rows(np.add, rank[None])
        wait = rep
        if hold >= 0:
            back = self._back_times(t, first, tmp("arrivals.back", t.shape))
            back += hold
            wait = np.greater(back, t, out=tmp("arrivals.wait", t.shape, bool))
            wait &= rep
        if wait.any():
            cell = np.flatnonzero(wait)
            col = cell % self.n
            r = rank.ravel()[cell].astype(np.int64)          # this failure's rank in the block
            before = self.n_rep[col] + r - 1                 # repair-needing failures before it
            freed = np.empty(cell.size)
            old = r - s < 1                                  # the one that frees it: an earlier block
            freed[old] = self.hist[col[old], before[old] % s]
            new = ~old
            freed[new] = t[_rows_of_rank(rank, col[new], r[new] - s), col[new]]
            ok = before >= s
            avail.ravel()[cell[ok]] = np.maximum(freed[ok] + hold, t.ravel()[cell[ok]])
        self._keep_last(t, rep, rank)

    def _back_times(self, t: np.ndarray, first: int, back: np.ndarray) -> np.ndarray:
        """The time of the event ``spares`` places before each event of the block (-inf before
        the run), into ``back``; ``t_tail`` holds the last ``spares`` events' times, event ``e``
        in row ``e % spares``."""
        s, rows = self.spares, t.shape[0]
        slots = (first + np.arange(rows)) % s
        if rows <= s:
            back[:] = self.t_tail[slots]
            self.t_tail[slots] = t
            return back
        back[:s] = self.t_tail[slots[:s]]
        back[s:] = t[:rows - s]
        self.t_tail[slots[rows - s:]] = t[rows - s:]
        return back

    def _keep_last(self, t: np.ndarray, rep: np.ndarray, rank: np.ndarray) -> None:
        """Carry each trial's last ``spares`` repair-needing failure times to the next block
        (``hist``: the failure of rank ``k`` in column ``k % spares``)."""
        s, total = self.spares, rank[-1].astype(np.int64)
        past = (total - s).astype(rank.dtype)
        lo, hi = 0, rank.shape[0] - 1       # the first row where a count passes ``past``
        while lo < hi:                      # (counts only grow down a column)
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if (rank[mid] > past).any() else (mid + 1, hi)
        rank, rep, t = rank[lo:], rep[lo:], t[lo:]
        cell = np.flatnonzero(rep & (rank > past))
        col = cell % self.n
        self.hist[col, (self.n_rep[col] + rank.ravel()[cell] - 1) % s] = t.ravel()[cell]
        self.n_rep += total

    def rewind(self, used: int) -> None:
        """Leave the generator as if exactly ``used`` events had been drawn (``used`` falls in
        the last block)."""
        if self.lam <= 0 or used >= self.drawn:
            return
        start, state = max((m for m in self.marks if m[0] <= used), key=lambda m: m[0])
        self.rng.bit_generator.state = state
        for _ in range(used - start):
            self.rng.exponential(1.0 / self.lam, self.n)
            self.rng.random(self.n)


class BlockRows:
    """:class:`ArrivalChunks` read one event at a time, with :class:`Arrivals`' ``next``
    (the numbers do not depend on ``t_prev``: the blocks carry the clock); ``peek`` shows the
    next event without taking it."""

    def __init__(self, spec: RunSpec, trials: int, rng: np.random.Generator) -> None:
        self.src = ArrivalChunks(spec, trials, rng)
        self.n, self.n_causes, self.repair_of = self.src.n, self.src.n_causes, self.src.repair_of
        self.blk: Block | None = None
        self.b = 0

    def peek(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The next event: ``(time_h, cause, planned, replacement_ready_h)`` per trial."""
        if self.blk is None or self.b == self.blk.rows:
            self.blk, self.b = self.src.block(), 0
        blk, b = self.blk, self.b
        return blk.t[b], blk.cause[b], blk.planned[b], blk.avail[b]

    def next(self, t_prev: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        row = self.peek()
        self.b += 1
        return row

    def rewind(self, used: int) -> None:
        self.src.rewind(used)
