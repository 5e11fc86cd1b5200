"""The single-tier Monte Carlo of :func:`.montecarlo.simulate`, number for number the same as
the event-by-event reference :func:`.montecarlo.simulate_events`, in far fewer NumPy calls.

The reference spends its time on overhead: every event draws its arrivals with a dozen small
calls and masks every state update (``where`` chains) for the few (interval, trial) pairs
that end there, on a plan's small batches (25 intervals x 256 trials, or 1,000 trials;
~600-750 events). Here:

- arrivals come a block of events at a time from :class:`.arrivals.ArrivalChunks` (the same
  generator calls in the same order);
- a pair that is still running has failed at every event so far, so its recovery (repair
  wait end, restart end, waiting and restart totals, productive time before the next event)
  is its trial's: :class:`_Trials` keeps it once per trial, and a pair that ends takes its
  trial's totals;
- at an event where no pair ends, every pair fails, and :func:`_fail_all` applies the
  reference's checkpoint arithmetic with the masks dropped, in place (``where(fail, x, y)``
  is ``x``, ``d * active`` is ``d``). A pair can only finish once its trial's clock has
  passed the work it has to do (work kept plus work since the last recovery never exceeds
  the time elapsed), so until then the exact finishing test is skipped;
- while every pair runs (the bulk phase) the pair state is ``(intervals, trials)`` arrays;
  from the first event at which a pair ends, :class:`.singleflat.Flat` keeps a flat list of
  the running pairs that reads its trial's values by index;
- a pair's interruption counts are its trial's counts of unplanned and planned events before
  it ended, taken from running counts per block.
"""

from __future__ import annotations

import numpy as np

from clustertwin.reliability.arrivals import ArrivalChunks, Block
from clustertwin.reliability.runspec import Outcome, RunawayError, RunSpec
from clustertwin.reliability.singleflat import Flat
from clustertwin.reliability.singlestate import Counter, Out, Trials, fail_all, fail_window

#: the bulk phase skips the exact finishing test while every trial's clock is this far short of
#: the work (a relative margin far above the rounding of a million summed events)
CLOCK_MARGIN = 1e-6


class _Sim:
    """One :func:`run_single` call: the totals, the trials, and the pairs in the bulk phase
    (``state`` rows kept, stall, lost, tau, period, each (intervals, trials))."""

    def __init__(self, spec: RunSpec, tau: np.ndarray, n: int, n_causes: int | None,
                 record: bool) -> None:
        g = tau.shape[0]
        self.g, self.n, self.record = g, n, record
        self.work, self.limit, self.delta = spec.work_h, spec.wall_limit_h, spec.blocking_h
        self.out = Out(g, n, n_causes)
        self.trials = Trials(n, spec.wall_limit_h, spec.restart_h)
        self.counter = Counter(n, self.out.counts)
        self.state = np.zeros((5, g, n))
        self.state[3] = tau
        self.state[4] = tau + spec.blocking_h             # the reference's period, per interval
        self.fail = fail_all if spec.persist_h <= 0 else fail_window(spec.persist_h)
        self.flat: Flat | None = None

    def start_block(self, blk: Block) -> None:
        """Per-block arrays: planned as 1.0/0.0."""
        self.pf = blk.planned.astype(float)
        self.uf = 1.0 - self.pf

    def _finishing(self, s: np.ndarray) -> bool:
        """Whether any pair finishes at this event (the reference's test, ``s >= need``)."""
        kept, tau = self.state[0], self.state[3]
        remaining = self.work - kept
        if not (s >= remaining).any():                   # need >= remaining
            return False
        n_ck = np.maximum(np.ceil(remaining / tau) - 1.0, 0.0)
        return bool((s >= remaining + n_ck * self.delta).any())

    def run_bulk(self, blk: Block, stop: int) -> int:
        """Events ``0 .. stop-1`` of ``blk`` while none ends a pair; returns where it stopped.
        With several intervals the trials' values are first copied to full rows (NumPy
        broadcasts a row over a 2-D ``out=`` several times slower)."""
        t_all, limit, g, n, trials = blk.t, self.limit, self.g, self.n, self.trials
        ends = (t_all[:stop] > limit).any(axis=1) if limit is not None else None
        safe = t_all[:stop].max(axis=1) < self.work * (1.0 - CLOCK_MARGIN)
        st, bufs = tuple(self.state), np.empty((4, g, n))
        full = np.empty((3, g, n)) if g > 1 else None
        fail, delta, timeline = self.fail, self.delta, self.out.timeline
        b = 0
        while b < stop:
            if ends is not None and ends[b]:
                break
            t = t_all[b]
            s = trials.productive(t)
            if not safe[b] and self._finishing(s):
                break
            trials.recover(t, blk.avail[b])
            if full is None:
                at_fail = fail(st, s, self.pf[b], self.uf[b], bufs, delta)
            else:
                full[0], full[1], full[2] = s, self.pf[b], self.uf[b]
                at_fail = fail(st, full[0], full[1], full[2], bufs, delta)
            if self.record:
                timeline.append((float(t[0]), int(blk.cause[b, 0]), at_fail,
                                 float(st[0][0, 0]), float(trials.rec_end[0])))
            b += 1
        return b


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
            if sim.flat is None:
                b = sim.run_bulk(blk, rows)
                if b < rows:
                    sim.flat = Flat(sim, sim.state.reshape(5, -1))
            while sim.flat is not None and b < rows:
                b += 1
                if sim.flat.step(blk, b - 1):
                    sim.counter.close(blk, b)
                    src.rewind(blk.first + b)
                    return sim.out.outcome(tau, blk.first + b)
            if rows < blk.rows:
                src.rewind(max_events)
                raise RunawayError(f"more than {max_events} interruptions in one run")
            sim.counter.close(blk, blk.rows)
