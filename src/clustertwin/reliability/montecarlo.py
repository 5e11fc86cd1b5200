"""Monte Carlo of whole training runs under Poisson failures, vectorized across trials.

Model (times in hours):

- Unexpected failures arrive as a Poisson process in wall-clock time with one rate per cause;
  planned interruptions are a second Poisson stream. Arrivals do not depend on what the job is
  doing, so every trial's failure times are shared by all checkpoint intervals simulated
  together (common random numbers make the interval comparison nearly noise-free).
- Training alternates ``tau`` hours of compute with a ``blocking`` stall per checkpoint. An
  asynchronous checkpoint becomes durable ``persist`` hours after its stall ends; a failure
  inside that window falls back to the checkpoint before it.
- An unexpected failure loses the compute since the last durable checkpoint; a planned one
  saves first and loses nothing. Either way the job restarts: it waits until a replacement node
  is available (when the cause needs a repair), then spends ``restart`` hours (detect,
  reschedule, initialise, reload). A failure during recovery starts the recovery again.
- Spare nodes: a repair-needing failure sends its node away for ``repair_h`` hours; the job
  runs while at most ``spare_nodes`` nodes are away. With a fixed repair time the node that
  frees the job is the one that failed ``spare_nodes`` repair-needing failures earlier.
- A run ends when the preserved plus current work reaches ``work_h`` (no final checkpoint), or
  at ``wall_limit_h`` when given.

Wall time splits exactly into useful work + checkpoint stalls + lost progress + restart +
waiting for repair.

:func:`simulate` runs the single-tier model through :mod:`.singletier` (arrivals drawn a block
of events at a time, unmasked updates while no configuration ends); :func:`simulate_events`
is the same model one event at a time through :class:`TrialLoop`, the reference it is tested
against number for number and what :func:`simulate` falls back to for runs without failures
or with infinite or negative times. :mod:`.tiers` (two-tier schedules) uses :class:`TrialLoop`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from clustertwin.reliability.arrivals import Arrivals, BlockRows
from clustertwin.reliability.runspec import Outcome, RunawayError, RunSpec, stretch
from clustertwin.reliability.singletier import run_single

__all__ = ["Arrivals", "Booking", "Outcome", "RunawayError", "RunSpec", "TrialLoop", "simulate", "simulate_events",
           "stretch"]


class Verdict(NamedTuple):
    """What an event does to each trial (:meth:`TrialLoop.classify`)."""

    finish: np.ndarray  #: the trial finishes its work before the event
    stop: np.ndarray    #: its wall-clock window closed
    fail: np.ndarray    #: the event interrupts it
    unexp: np.ndarray   #: ... and was not planned


@dataclass(frozen=True)
class Booking:
    """What one event books per trial (:meth:`TrialLoop.settle`): the ``stall`` and ``lost``
    hours it adds, the work ``at_fail`` when it came, the work ``kept`` after it (for the
    timeline) and the ``restart_h`` of each recovery."""

    stall: np.ndarray
    lost: np.ndarray
    at_fail: np.ndarray
    kept: np.ndarray
    restart_h: np.ndarray | float


@dataclass(frozen=True)
class Keep:
    """What a run keeps besides its totals: the interruptions by cause, the first trial's
    timeline, and the most events it may take before it is declared hopeless."""

    count_causes: bool = False
    record: bool = False
    max_events: int = 2_000_000


class TrialLoop:
    """The event loop both simulators share (this module's single-tier one and
    :func:`.tiers.simulate_tiers`): arrivals, recovery accounting, ending trials, recording.

    Per event a simulator calls :meth:`next` (the productive time ``s`` each trial had since
    its last recovery), :meth:`classify` with ``need``, the productive time each trial still
    needs, works out its own checkpoint state, then :meth:`settle` with what the event
    stalled, lost and kept. State arrays have shape (configurations, trials); times in hours."""

    def __init__(self, spec: RunSpec, g_n: int, trials: int, rng: np.random.Generator,
                 keep: Keep, blocks: bool = False) -> None:
        count_causes, record, max_events = keep.count_causes, keep.record, keep.max_events
        n = int(trials)
        # blocks: the same arrivals drawn a block of events at a time (.arrivals.BlockRows)
        self.arrivals = BlockRows(spec, n, rng) if blocks else Arrivals(spec, n, rng)
        self.n, self.idx = n, np.arange(n)
        self.work, self.limit = spec.work_h, spec.wall_limit_h
        self.record, self.max_events = record, max_events
        shape = (g_n, n)
        self.t_prev = np.zeros(n)
        self.rec_end = np.zeros(shape)
        self.wait_end = np.zeros(shape)
        self.done_work = np.zeros(shape)
        self.wall = np.zeros(shape)
        self.stall, self.lost, self.restart, self.waiting = (np.zeros(shape) for _ in range(4))
        self.n_unexp = np.zeros(shape, dtype=np.int64)
        self.n_plan = np.zeros(shape, dtype=np.int64)
        self.active = np.ones(shape, dtype=bool)
        self.counts = (np.zeros((n, self.arrivals.n_causes), dtype=np.int64)
                       if count_causes else None)
        self.timeline: list[tuple[float, int, float, float, float]] = []
        self.events = 0

    def next(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw the next arrival; returns ``(cause, planned, s)`` with ``s`` the productive time
        before it (call inside ``np.errstate(invalid="ignore")``: finished trials hold inf)."""
        if self.events >= self.max_events:
            self.rewind()
            raise RunawayError(f"more than {self.max_events} interruptions in one run")
        self.events += 1
        t_now, cause, planned, avail = self.arrivals.next(self.t_prev)
        limit, t_prev, wait_end, rec_end = self.limit, self.t_prev, self.wait_end, self.rec_end
        self.ends = t_now > limit if limit is not None else np.zeros(self.n, dtype=bool)
        t_eff = np.minimum(t_now, limit) if limit is not None else t_now
        # recovery time spent since the previous event
        self.d_wait = np.clip(np.minimum(t_eff, wait_end) - t_prev, 0.0, None)
        self.d_rest = np.clip(np.minimum(t_eff, rec_end) - np.maximum(wait_end, t_prev), 0.0, None)
        self.t_now, self.cause, self.planned, self.avail = t_now, cause, planned, avail
        self.s = np.maximum(t_eff - rec_end, 0.0)        # productive time before this event
        return cause, planned, self.s

    def classify(self, need: np.ndarray) -> Verdict:
        """``(finish, stop, fail, unexpected)``: the trials that finish their work before the
        event, those whose wall-clock window closed, those the event interrupts, and of these
        the unplanned ones."""
        active = self.active
        finish = active & (self.s >= need)
        stop = active & ~finish & self.ends               # wall-clock window closed
        fail = active & ~finish & ~self.ends
        return Verdict(finish, stop, fail, fail & ~self.planned)

    def settle(self, verdict: Verdict, need: np.ndarray, book: Booking) -> None:
        """Book the event (:class:`Booking`) for the trials as ``verdict`` sorted them."""
        finish, stop, fail, unexp = verdict
        stall, lost, at_fail, kept, restart_h = book.stall, book.lost, book.at_fail, book.kept, book.restart_h
        act = self.active.astype(float)
        self.waiting += self.d_wait * act
        self.restart += self.d_rest * act
        self.stall += stall
        self.lost += lost
        limit = self.limit
        self.wall = np.where(finish, self.rec_end + need,
                             np.where(stop, limit if limit else 0.0, self.wall))
        self.done_work = np.where(finish, self.work, np.where(stop, at_fail, self.done_work))
        planned = self.planned
        self.n_unexp += unexp
        self.n_plan += planned & fail
        if self.counts is not None:
            hit = unexp[0] & ~planned
            self.counts[self.idx[hit], self.cause[hit]] += 1
        t_now = self.t_now
        self.wait_end = np.where(fail, np.maximum(np.maximum(self.wait_end, self.avail), t_now),
                                 self.wait_end)
        self.rec_end = np.where(fail, self.wait_end + restart_h, self.rec_end)
        if self.record and self.active[0, 0]:
            if fail[0, 0]:
                self.timeline.append((float(t_now[0]), int(self.cause[0]), float(at_fail[0, 0]),
                                      float(kept[0, 0]), float(self.rec_end[0, 0])))
            elif finish[0, 0] or stop[0, 0]:
                done, wall = float(self.done_work[0, 0]), float(self.wall[0, 0])
                self.timeline.append((wall, -1, done, done, wall))
        self.active &= fail
        self.t_prev = t_now

    def rewind(self) -> None:
        """Leave the generator where drawing event by event would have left it."""
        if isinstance(self.arrivals, BlockRows):
            self.arrivals.rewind(self.events)

    def outcome(self, intervals_h: np.ndarray, local_restores: np.ndarray | None = None) -> Outcome:
        self.rewind()
        return Outcome(intervals_h, self.wall, self.done_work, self.stall, self.lost,
                       self.restart, self.waiting, self.n_unexp, self.n_plan, self.counts,
                       self.timeline, self.events, local_restores)


def simulate(spec: RunSpec, intervals_h: np.ndarray | float, trials: int,
             rng: np.random.Generator, count_causes: bool = False, record: bool = False,
             max_events: int = 2_000_000, rewind: bool = True) -> Outcome:
    """Simulate ``trials`` runs for every checkpoint interval in ``intervals_h`` (hours).

    ``record`` keeps trial 0 of the first interval as a timeline of
    ``(failure_time_h, cause_index, progress_at_failure_h, preserved_after_h, resume_time_h)``
    with ``cause_index == len(causes)`` for a planned interruption. ``rewind`` leaves ``rng``
    where the event-by-event reference leaves it; a caller that drops the generator afterwards
    may save that work (the numbers are the same)."""
    tau = np.atleast_1d(np.asarray(intervals_h, dtype=float))[:, None]
    out = run_single(spec, tau, trials, rng, count_causes, record, max_events, rewind)
    if out is None:  # no failures, or infinite or negative times: event by event
        out = simulate_events(spec, intervals_h, trials, rng, count_causes, record, max_events)
    return out


def simulate_events(spec: RunSpec, intervals_h: np.ndarray | float, trials: int,
                    rng: np.random.Generator, count_causes: bool = False, record: bool = False,
                    max_events: int = 2_000_000) -> Outcome:
    """:func:`simulate` one event at a time through :class:`TrialLoop` (masked arrays of every
    configuration and trial): the reference the faster :mod:`.singletier` loop is tested
    against, number for number."""
    tau = np.atleast_1d(np.asarray(intervals_h, dtype=float))[:, None]
    g_n = tau.shape[0]
    delta, persist, rst = spec.blocking_h, spec.persist_h, spec.restart_h
    work = spec.work_h
    period = tau + delta
    loop = TrialLoop(spec, g_n, trials, rng, Keep(count_causes, record, max_events))
    kept = np.zeros((g_n, loop.n))

    with np.errstate(invalid="ignore"):  # finished trials hold inf - inf; masked
        while loop.active.any():
            _, planned, s = loop.next()
            remaining = work - kept
            n_ck = np.maximum(np.ceil(remaining / tau) - 1.0, 0.0)
            need = remaining + n_ck * delta
            verdict = loop.classify(need)
            finish, stop, fail, unexp = verdict

            k = np.floor(s / period)
            rem = s - k * period
            comp = np.minimum(rem, tau)
            partial = rem - comp
            if persist > 0:
                k_ok = np.where((rem < persist) & (k >= 1), k - 1.0, k)
            else:
                k_ok = k
            gained = np.where(planned, k * tau + comp, k_ok * tau)
            at_fail = kept + k * tau + comp
            kept += np.where(fail, gained, 0.0)
            loop.settle(verdict, need, Booking(
                stall=np.where(finish, n_ck * delta, np.where(fail | stop, k * delta + partial, 0.0)),
                lost=np.where(unexp, comp + (k - k_ok) * tau, 0.0),
                at_fail=at_fail, kept=kept, restart_h=rst))

    return loop.outcome(tau[:, 0])
