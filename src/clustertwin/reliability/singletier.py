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
  is its trial's: :class:`.singlestate.Trials` keeps it once per trial, and a pair that ends
  takes its trial's totals;
- the pairs move a run of events (rows) at a time (:class:`.singlepairs.Pairs`): the
  reference's checkpoint arithmetic of a failure with the masks dropped (``where(fail, x, y)``
  is ``x``, ``d * active`` is ``d``) for every row at once, then the running totals added
  row by row in event order (the same sums, rounding included); each pair's end is the first
  row at which the reference's test ends it, and what the arithmetic did with it after that
  row is never read. A pair can only finish once its trial's clock has passed the work it has
  to do (work kept plus work since the last recovery never exceeds the time elapsed), so until
  then the exact finishing test is skipped;
- a pair's interruption counts are its trial's counts of unplanned and planned events before
  it ended, taken from running counts per block.
"""

from __future__ import annotations

import math

import numpy as np

from clustertwin.reliability.arrivals import ArrivalChunks
from clustertwin.reliability.runspec import Outcome, RunawayError, RunSpec
from clustertwin.reliability.scratch import scratch as thread_scratch
from clustertwin.reliability.singlepairs import Pairs
from clustertwin.reliability.singlestate import Counter, Out, Trials, window_rows


class _Sim:
    """One :func:`run_single` call: the totals, the trials and the running pairs."""

    def __init__(self, spec: RunSpec, tau: np.ndarray, n: int, n_causes: int | None,
                 record: bool) -> None:
        self.record = record
        self.work, self.limit, self.delta = spec.work_h, spec.wall_limit_h, spec.blocking_h
        self.persist = spec.persist_h
        self.out = Out(tau.shape[0], n, n_causes)
        scratch = thread_scratch()
        self.trials = Trials(n, spec.wall_limit_h, spec.restart_h, scratch)
        self.counter = Counter(n, self.out.counts)
        self.pairs = Pairs(tau, n, spec.blocking_h, scratch)
        self.fail = window_rows(spec.persist_h) if spec.persist_h > 0 else None


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


def first_block(spec: RunSpec, tau: np.ndarray) -> int:
    """Events to draw in the first block: about the most a trial of the slowest interval is
    expected to see (its wall-clock time from a first-order ETTR, the arrivals Poisson; four
    standard deviations and a few events more), in whole ``MARK`` steps. Only the amount
    drawn ahead depends on it, never a number: a run that needs more draws another block."""
    lam = sum(spec.rates_per_h) + spec.planned_per_h
    loss = (lam * (spec.restart_h + spec.blocking_h + 0.5 * float(tau.max()))
            + spec.blocking_h / float(tau.min()))
    wall = spec.work_h / max(0.5, 1.0 - loss)
    if spec.wall_limit_h is not None:
        wall = min(wall, spec.wall_limit_h)
    mu = lam * wall
    mark = ArrivalChunks.MARK
    return int(min(ArrivalChunks.ROWS, mark * math.ceil((mu + 4.0 * math.sqrt(mu) + 8.0) / mark)))


def run_single(spec: RunSpec, tau: np.ndarray, trials: int, rng: np.random.Generator,
               count_causes: bool, record: bool, max_events: int,
               rewind: bool = True) -> Outcome | None:
    """:func:`.montecarlo.simulate` of intervals ``tau`` (hours, shape (intervals, 1)); None
    where :func:`usable` says no (the caller then runs the reference). Without ``rewind`` the
    generator is left past the events drawn ahead (for a caller that drops it)."""
    if not usable(spec, tau):
        return None
    src = ArrivalChunks(spec, trials, rng, first_block(spec, tau))
    sim = _Sim(spec, tau, src.n, src.n_causes if count_causes else None, record)
    if src.n == 0:
        return sim.out.outcome(tau, 0)
    with np.errstate(invalid="ignore", over="ignore"):
        while True:
            blk = src.block()
            b, rows = 0, min(blk.rows, max_events - blk.first)
            while b < rows:
                b1 = min(rows, b + sim.pairs.rows_at_once())
                done = sim.pairs.move(sim, blk, b, b1)
                if done is not None:
                    sim.counter.close(blk, done)
                    if rewind:
                        src.rewind(blk.first + done)
                    return sim.out.outcome(tau, blk.first + done)
                b = b1
            if rows < blk.rows:
                src.rewind(max_events)
                raise RunawayError(f"more than {max_events} interruptions in one run")
            sim.counter.close(blk, blk.rows)
