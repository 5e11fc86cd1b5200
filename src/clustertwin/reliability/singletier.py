"""The single-tier Monte Carlo of :func:`.montecarlo.simulate`, number for number the same as
the event-by-event reference :func:`.montecarlo.simulate_events`, in far fewer NumPy calls.

The reference spends its time on overhead: every event draws its arrivals with a dozen small
calls and masks every state update (``where`` chains) for the few (interval, trial) pairs
that end there, on a plan's small batches (25 intervals x 256 trials, or 1,000 trials;
~600-750 events). Here:

- arrivals come a block of events at a time from :class:`.arrivals.ArrivalChunks` (the same
  generator calls in the same order);
- at an event where no pair ends, every pair fails, and :func:`_fail_all` applies the
  reference's arithmetic with the masks dropped, in place (``where(fail, x, y)`` is ``x``,
  ``d * active`` is ``d``; recovery always ends after the previous event, so the clipped
  waiting time is ``min(t, wait_end) - t_prev`` as it stands). A pair can only finish once
  its trial's clock has passed the work it has to do (work kept plus work since the last
  recovery never exceeds the time elapsed), so until then the exact finishing test is skipped;
- while every pair runs (the bulk phase) the state is ``(intervals, trials)`` arrays and the
  arrivals broadcast; from the first event at which a pair ends, the state is a flat list of
  the running pairs that reads its trial's arrivals by index, and ended pairs leave it with
  their totals at once;
- a pair's interruption counts are its trial's counts of unplanned and planned events before
  it ended, taken from running counts per block.
"""

from __future__ import annotations

import numpy as np

from clustertwin.reliability.arrivals import ArrivalChunks, Block
from clustertwin.reliability.runspec import Outcome, RunawayError, RunSpec

#: the bulk phase skips the exact finishing test while every trial's clock is this far short of
#: the work (a relative margin far above the rounding of a million summed events)
CLOCK_MARGIN = 1e-6
#: rows of the flat state (the first nine are what :func:`_fail_all` updates)
KEPT, REC, WAIT_END, WAITING, RESTART, STALL, LOST, TAU, PERIOD, T_PREV = range(10)


class _Out:
    """The per-pair totals of :class:`.runspec.Outcome`, shape (intervals, trials)."""

    def __init__(self, g: int, n: int, n_causes: int | None) -> None:
        shape = (g, n)
        self.wall, self.work = np.zeros(shape), np.zeros(shape)
        self.stall, self.lost, self.restart, self.waiting = (np.zeros(shape) for _ in range(4))
        self.n_unexp = np.zeros(shape, dtype=np.int64)
        self.n_plan = np.zeros(shape, dtype=np.int64)
        self.counts = np.zeros((n, n_causes), dtype=np.int64) if n_causes is not None else None
        self.timeline: list[tuple[float, int, float, float, float]] = []

    def outcome(self, tau: np.ndarray, events: int) -> Outcome:
        return Outcome(tau[:, 0], self.wall, self.work, self.stall, self.lost, self.restart,
                       self.waiting, self.n_unexp, self.n_plan, self.counts, self.timeline, events)


def _fail_all(st: tuple[np.ndarray, ...], s: np.ndarray, t: np.ndarray, t_prev: np.ndarray,
              avail: np.ndarray, pf: np.ndarray, uf: np.ndarray, bufs: np.ndarray,
              zero: np.ndarray, delta: float, rst: float) -> float:
    """Every pair fails at this event (no checkpoint write window, finite intervals: the
    reference's ``k_ok`` is ``k``). ``s``: productive time before it (overwritten); ``pf``/``uf``
    1.0 where the event is planned/unplanned. Returns trial 0's work at the failure."""
    kept, rec, wait_end, waiting, restart, stall, lost, tau, period = st
    a, k, c = bufs
    np.minimum(t, wait_end, out=a)
    a -= t_prev
    waiting += a
    np.minimum(t, rec, out=a)
    a -= wait_end
    np.maximum(a, zero, out=a)
    restart += a
    np.divide(s, period, out=k)
    np.floor(k, out=k)
    np.multiply(k, period, out=a)
    np.subtract(s, a, out=a)                          # rem
    np.minimum(a, tau, out=c)                         # comp
    a -= c                                            # partial
    np.multiply(k, delta, out=s)
    s += a
    stall += s
    np.multiply(k, tau, out=k)                        # k tau = k_ok tau
    at_fail = kept.flat[0] + k.flat[0] + c.flat[0]
    np.multiply(c, pf, out=a)                         # + comp when planned, + 0 otherwise
    k += a
    kept += k
    np.multiply(c, uf, out=a)                         # comp + 0 tau when unplanned
    lost += a
    np.maximum(wait_end, avail, out=wait_end)
    np.maximum(wait_end, t, out=wait_end)
    np.add(wait_end, rst, out=rec)
    return float(at_fail)


def _fail_window(persist: float):
    """:func:`_fail_all` with a checkpoint write window (the reference's ``k_ok`` terms)."""

    def fail(st: tuple[np.ndarray, ...], s: np.ndarray, t: np.ndarray, t_prev: np.ndarray,
             avail: np.ndarray, pf: np.ndarray, uf: np.ndarray, bufs: np.ndarray,
             zero: np.ndarray, delta: float, rst: float) -> float:
        kept, rec, wait_end, waiting, restart, stall, lost, tau, period = st
        waiting += np.minimum(t, wait_end) - t_prev
        restart += np.maximum(np.minimum(t, rec) - wait_end, zero)
        k = np.floor(s / period)
        rem = s - k * period
        comp = np.minimum(rem, tau)
        k_ok = np.where((rem < persist) & (k >= 1), k - 1.0, k)
        at_fail = kept.flat[0] + k.flat[0] * tau.flat[0] + comp.flat[0]
        kept += np.where(pf > 0, k * tau + comp, k_ok * tau)
        stall += k * delta + (rem - comp)
        lost += (comp + (k - k_ok) * tau) * uf
        np.maximum(wait_end, avail, out=wait_end)
        np.maximum(wait_end, t, out=wait_end)
        np.add(wait_end, rst, out=rec)
        return float(at_fail)

    return fail


class _Sim:
    """One :func:`run_single` call: the state, the totals and the two phases."""

    def __init__(self, spec: RunSpec, tau: np.ndarray, n: int, n_causes: int | None,
                 record: bool) -> None:
        g = tau.shape[0]
        self.g, self.n, self.record = g, n, record
        self.work, self.limit, self.delta, self.rst = (spec.work_h, spec.wall_limit_h,
                                                       spec.blocking_h, spec.restart_h)
        self.out = _Out(g, n, n_causes)
        self.state = np.zeros((T_PREV + 1, g * n))
        grid = self.state.reshape(T_PREV + 1, g, n)
        grid[TAU] = tau
        grid[PERIOD] = tau + spec.blocking_h
        self.grid = tuple(grid[:T_PREV])                  # the bulk phase's (g, n) views
        self.pid, self.tr = np.arange(g * n), np.tile(np.arange(n), g)
        self.t_prev = np.zeros(n)
        self.bufs, self.zero = np.empty((4, g * n)), np.zeros(g * n)
        self.fail = _fail_all if spec.persist_h <= 0 else _fail_window(spec.persist_h)
        self.bulk = True
        self.end0 = np.full(n, np.iinfo(np.int64).max)   # event at which interval 0 ended
        self.unexp_before = np.zeros(n, dtype=np.int64)

    def start_block(self, blk: Block) -> None:
        """Per-block arrays: planned as 1.0/0.0."""
        self.pf = blk.planned.astype(float)
        self.uf = 1.0 - self.pf
        self.stack = self.cu = None

    def unexp_upto(self, blk: Block, b: int, trials: np.ndarray) -> np.ndarray:
        """Unplanned events of ``trials`` before event ``b`` of ``blk``."""
        if self.cu is None:
            self.cu = np.zeros((blk.rows + 1, self.n), dtype=np.int32)
            np.cumsum(~blk.planned, axis=0, dtype=np.int32, out=self.cu[1:])
        return self.unexp_before.take(trials) + self.cu[b].take(trials)

    def end_block(self, blk: Block, rows: int) -> None:
        """Carry the unplanned counts; count the causes of interval 0's unplanned
        interruptions (its events before it ended, of the first ``rows``)."""
        planned = blk.planned[:rows]
        self.unexp_before = self.unexp_before + (rows - np.count_nonzero(planned, axis=0))
        counts = self.out.counts
        if counts is None:
            return
        n, n_causes = counts.shape
        upto = np.clip(self.end0 - blk.first, 0, rows)
        if (upto == rows).all():     # planned events count in an extra column, dropped
            cell = blk.cause[:rows] + np.arange(n) * (n_causes + 1)
            counts += np.bincount(cell.ravel(), minlength=n * (n_causes + 1)).reshape(
                n, n_causes + 1)[:, :n_causes]
            return
        keep = (np.arange(rows)[:, None] < upto) & ~planned
        cell = (blk.cause[:rows] + np.arange(n) * n_causes)[keep]
        counts += np.bincount(cell, minlength=n * n_causes).reshape(n, n_causes)

    def _finishing(self, s: np.ndarray) -> bool:
        """Whether any pair finishes at this event (the reference's test, ``s >= need``)."""
        kept, tau = self.grid[KEPT], self.grid[TAU]
        remaining = self.work - kept
        if not (s >= remaining).any():                   # need >= remaining
            return False
        n_ck = np.maximum(np.ceil(remaining / tau) - 1.0, 0.0)
        return bool((s >= remaining + n_ck * self.delta).any())

    def run_bulk(self, blk: Block, stop: int) -> int:
        """Events ``0 .. stop-1`` of ``blk`` while none ends a pair; returns where it stopped.
        With several intervals the trials' arrivals are first copied to full rows (NumPy
        broadcasts a row over a 2-D ``out=`` several times slower)."""
        t_all, limit, st, g, n = blk.t, self.limit, self.grid, self.g, self.n
        ends = (t_all[:stop] > limit).any(axis=1) if limit is not None else None
        safe = t_all[:stop].max(axis=1) < self.work * (1.0 - CLOCK_MARGIN)
        bufs, zero = self.bufs.reshape(4, g, n), self.zero.reshape(g, n)
        s, full = bufs[0], np.empty((5, g, n)) if g > 1 else None
        rows = (t_all, None, blk.avail, self.pf, self.uf)
        if full is not None:
            full[1] = self.t_prev
        fail, delta, rst, timeline = self.fail, self.delta, self.rst, self.out.timeline
        b = 0
        while b < stop:
            if ends is not None and ends[b]:
                break
            if full is None:
                t, t_prev, avail, pf, uf = t_all[b], self.t_prev, blk.avail[b], self.pf[b], self.uf[b]
            else:
                for i in (0, 2, 3, 4):
                    full[i] = rows[i][b]
                t, t_prev, avail, pf, uf = full
            np.subtract(t, st[REC], out=s)
            np.maximum(s, zero, out=s)
            if not safe[b] and self._finishing(s):
                break
            at_fail = fail(st, s, t, t_prev, avail, pf, uf, bufs[1:], zero, delta, rst)
            if self.record:
                timeline.append((float(t_all[b, 0]), int(blk.cause[b, 0]), at_fail,
                                 float(st[KEPT][0, 0]), float(st[REC][0, 0])))
            self.t_prev = t_all[b]
            if full is not None:
                full[1] = full[0]
            b += 1
        return b

    def to_flat(self) -> None:
        """Leave the bulk phase: the trials' previous event times become a row of the state."""
        self.state.reshape(T_PREV + 1, self.g, self.n)[T_PREV] = self.t_prev
        self.bulk = False

    def step(self, blk: Block, b: int) -> bool:
        """One event of the flat phase; True when no pair runs any more."""
        if self.stack is None:
            self.stack = np.stack([blk.t, blk.avail, self.pf, self.uf], axis=1)
        rows = self.stack[b].take(self.tr, axis=1)         # t, avail, pf, uf per pair
        st, t, limit = self.state, rows[0], self.limit
        t_eff = np.minimum(t, limit) if limit is not None else t
        s = np.maximum(t_eff - st[REC], 0.0)
        remaining = self.work - st[KEPT]
        n_ck = np.maximum(np.ceil(remaining / st[TAU]) - 1.0, 0.0)
        need = remaining + n_ck * self.delta
        end = s >= need
        if limit is not None:
            end |= t > limit
        if end.any():
            self._end(blk, b, end, s, need, n_ck, t_eff)
            keep = np.flatnonzero(~end)
            if keep.size == 0:
                return True
            self.state = st = st.take(keep, axis=1)
            self.pid, self.tr = self.pid.take(keep), self.tr.take(keep)
            rows, s = rows.take(keep, axis=1), s.take(keep)
        m = s.size
        at_fail = self.fail(tuple(st[:T_PREV]), s, rows[0], st[T_PREV], rows[1], rows[2], rows[3],
                            self.bufs[1:, :m], self.zero[:m], self.delta, self.rst)
        if self.record and self.pid[0] == 0:
            self.out.timeline.append((float(rows[0, 0]), int(blk.cause[b, 0]), at_fail,
                                      float(st[KEPT, 0]), float(st[REC, 0])))
        st[T_PREV] = rows[0]
        return False

    def _end(self, blk: Block, b: int, end: np.ndarray, s: np.ndarray, need: np.ndarray,
             n_ck: np.ndarray, t_eff: np.ndarray) -> None:
        """Write out the totals of the pairs that finish or reach the wall-clock limit at event
        ``b`` (the reference's arithmetic for them)."""
        idx = np.flatnonzero(end)
        kept, rec, wait_end, waiting, restart, stall, lost, tau, period, t_prev = (
            self.state.take(idx, axis=1))
        pid, tr = self.pid.take(idx), self.tr.take(idx)
        s, need, t_eff = s.take(idx), need.take(idx), t_eff.take(idx)
        finish = s >= need
        k = np.floor(s / period)
        rem = s - k * period
        comp = np.minimum(rem, tau)
        limit, out, event = self.limit, self.out, blk.first + b
        n_unexp = self.unexp_upto(blk, b, tr)
        done = np.where(finish, self.work, kept + k * tau + comp)
        wall = np.where(finish, rec + need, limit if limit else 0.0)
        for name, value in (
                ("wall", wall), ("work", done), ("lost", lost),
                ("waiting", waiting + np.maximum(np.minimum(t_eff, wait_end) - t_prev, 0.0)),
                ("restart", restart + np.maximum(np.minimum(t_eff, rec)
                                                 - np.maximum(wait_end, t_prev), 0.0)),
                ("stall", stall + np.where(finish, n_ck.take(idx) * self.delta,
                                           k * self.delta + (rem - comp))),
                ("n_unexp", n_unexp), ("n_plan", event - n_unexp)):
            getattr(out, name).reshape(-1)[pid] = value
        first = pid < self.n
        self.end0[pid[first]] = event
        if self.record and pid[0] == 0:
            out.timeline.append((float(wall[0]), -1, float(done[0]), float(done[0]),
                                 float(wall[0])))


def usable(spec: RunSpec, tau: np.ndarray) -> bool:
    """Whether :func:`run_single` applies: failures arrive, the work, intervals and recovery
    are finite and the times non-negative (the reference handles the rest)."""
    lam = sum(spec.rates_per_h) + spec.planned_per_h
    limit = spec.wall_limit_h
    return bool(lam > 0 and np.isfinite(lam) and np.isfinite(spec.work_h)
                and tau.size > 0 and np.all(np.isfinite(tau)) and np.all(tau > 0)
                and 0 <= spec.blocking_h < np.inf and 0 <= spec.persist_h < np.inf
                and 0 <= spec.restart_h < np.inf and 0 <= spec.repair_h < np.inf
                and (limit is None or 0 <= limit < np.inf))


def run_single(spec: RunSpec, tau: np.ndarray, trials: int, rng: np.random.Generator,
               count_causes: bool, record: bool, max_events: int) -> Outcome | None:
    """:func:`.montecarlo.simulate` of intervals ``tau`` (hours, shape (intervals, 1)); None
    where :func:`usable` says no (the caller then runs the reference)."""
    if not usable(spec, tau):
        return None
    src = ArrivalChunks(spec, trials, rng)
    sim = _Sim(spec, tau, src.n, src.n_causes if count_causes else None, record)
    if src.n == 0:
        return sim.out.outcome(tau, 0)
    with np.errstate(invalid="ignore", over="ignore"):
        while True:
            blk = src.block()
            sim.start_block(blk)
            b, rows = 0, min(blk.rows, max_events - blk.first)
            if sim.bulk:
                b = sim.run_bulk(blk, rows)
                if b < rows:
                    sim.to_flat()
            while not sim.bulk and b < rows:
                b += 1
                if sim.step(blk, b - 1):
                    sim.end_block(blk, b)
                    src.rewind(blk.first + b)
                    return sim.out.outcome(tau, blk.first + b)
            if rows < blk.rows:
                src.rewind(max_events)
                raise RunawayError(f"more than {max_events} interruptions in one run")
            sim.end_block(blk, blk.rows)
