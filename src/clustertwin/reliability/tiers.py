"""Monte Carlo of a two-tier checkpoint schedule, vectorized across trials and schedules.

The schedule (times in hours of compute unless stated):

- Every ``local`` hours of compute training stalls for a blocking copy of the state into host
  memory; from there the copy is persisted in the background to the *local tier* (node-local
  NVMe or host memory, plus ``replicas`` peer-node copies as in Gemini, SOSP'23). Every
  ``every``-th checkpoint is also written to the parallel file system (PFS), so the PFS
  interval is ``every x local``. The schedule counts checkpoints from the last PFS position,
  like a trainer that saves "every N steps": after a restore from the local tier the next PFS
  save comes where it would have come anyway.
- Only the blocking copy stalls training (``local_blocking_h`` for a local-only checkpoint,
  ``spec.blocking_h`` for one that also goes to the PFS). A copy becomes durable in its tier
  ``local_persist_h`` / ``spec.persist_h`` after its stall ends; a failure before that falls
  back to the previous completed checkpoint *of that tier*.
- Which tier survives a failure: a cause that ``needs_repair`` takes its node out of the job
  (the job continues on a spare that holds no copy), so the local tier is lost unless
  ``replicas >= 1`` (one node's copy also lives on a peer; two simultaneous losses of a node and
  its peer are ignored). Causes without repair (software, hangs) and planned restarts keep the
  local copies. The job restores from the newest durable checkpoint among the surviving tiers:
  ``local_restart_h`` of recovery from the local tier, ``spec.restart_h`` from the PFS.
- A planned interruption saves to every tier first and loses nothing (as in :mod:`.montecarlo`).

Everything else (arrivals, spares, repair waits, accounting) is :mod:`.montecarlo`'s, and with
``every == 1`` and the local tier switched off the two simulators agree to rounding.
"""

from __future__ import annotations

import numpy as np

from clustertwin.reliability.montecarlo import Booking, Keep, Outcome, RunSpec, TrialLoop
from clustertwin.reliability.runspec import TierSpec
from clustertwin.reliability.tierbulk import Resume, Schedule, need, newest_copies, run_bulk
from clustertwin.reliability.tierflat import run_flat


def schedule(spec: RunSpec, tiers: TierSpec, local_h: np.ndarray | float,
             every: np.ndarray | int, local_on: np.ndarray | bool) -> Schedule:
    """The schedules as column vectors (one row per schedule)."""
    tau = np.atleast_1d(np.asarray(local_h, dtype=float))[:, None]
    g_n = tau.shape[0]
    kk = np.broadcast_to(np.atleast_1d(np.asarray(every, dtype=float)), (g_n,))[:, None]
    on = np.broadcast_to(np.atleast_1d(np.asarray(local_on, dtype=bool)), (g_n,))[:, None]
    d_s = spec.blocking_h
    d_f = np.where(on, tiers.local_blocking_h, d_s)
    return Schedule(
        tau=tau, kk=kk, on=on, d_f=d_f, d_s=d_s, p_f=tiers.local_persist_h, p_s=spec.persist_h,
        r_l=np.where(on, tiers.local_restart_h, spec.restart_h), r_s=spec.restart_h,
        keeps=tiers.replicas >= 1, work=spec.work_h,
        p_loc=tau + d_f,                            # compute + stall of a local-only checkpoint
        p_sup=kk * tau + (kk - 1.0) * d_f + d_s)    # from one PFS stall end to the next


# the simulator's entry point (tests and benchmarks call it): the schedule arrays, the trials and
# the keyword switches simulate() also takes
def simulate_tiers(spec: RunSpec, tiers: TierSpec, local_h: np.ndarray | float,
                   every: np.ndarray | int, trials: int, rng: np.random.Generator,
                   local_on: np.ndarray | bool = True, count_causes: bool = False,
                   record: bool = False, max_events: int = 2_000_000) -> Outcome:
    """Simulate ``trials`` runs for each schedule ``(local_h[i], every[i], local_on[i])``.

    ``local_on[i] = False`` is file-system-only checkpointing every ``local_h[i]`` (use
    ``every = 1``): every checkpoint stalls ``spec.blocking_h`` and restores come from the PFS.
    Callers keep ``local_h >= local_persist_h`` and ``every x local_h >= spec.persist_h``
    (the previous checkpoint of a tier is then always durable). Returns an :class:`Outcome`
    whose ``intervals_h`` are the local intervals; ``local_restores`` counts unexpected
    interruptions restored from the local tier. The events before any schedule can end run
    unmasked (:mod:`.tierbulk`), the rest on the running pairs only (:mod:`.tierflat`), with
    :class:`.montecarlo.TrialLoop`'s masked events where a time is not finite."""
    sch = schedule(spec, tiers, local_h, every, local_on)
    loop = TrialLoop(spec, sch.tau.shape[0], trials, rng, Keep(count_causes, record, max_events),
                     blocks=True)
    shape = (sch.tau.shape[0], loop.n)
    st = Resume(w0=np.zeros(shape), p0=np.zeros(shape), j0=np.zeros(shape),
                w0_local=np.zeros(shape, dtype=bool), n_local=np.zeros(shape, dtype=np.int64))
    with np.errstate(invalid="ignore"):  # finished trials hold inf - inf; masked
        if loop.active.size:                     # any schedule and trial
            run_bulk(loop, sch, st)
            run_flat(loop, sch, st)
        while loop.active.any():
            _masked_event(loop, sch, st)
    return loop.outcome(sch.tau[:, 0], st.n_local)


def _masked_event(loop: TrialLoop, sch: Schedule, st: Resume) -> None:
    """One event of the event loop, every state update masked by what each pair does."""
    tau, kk, on = sch.tau, sch.kk, sch.on
    w0, p0, j0, w0_local = st.w0, st.p0, st.j0, st.w0_local
    cause, planned, s = loop.next()
    node_lost = loop.arrivals.repair_of[cause]
    remaining, need_h = need(sch, st)
    verdict = loop.classify(need_h)
    finish, stop, fail, unexp = verdict

    k_done, comp, at_fail, k_loc, w_pfs, use_loc, w_new = newest_copies(sch, s, st, node_lost)

    kept_after = np.where(planned, at_fail, w_new)
    st.n_local += unexp & use_loc
    st.w0 = np.where(fail, kept_after, w0)
    st.p0 = np.where(fail, np.where(planned, at_fail, w_pfs), p0)
    st.j0 = np.where(fail & ~planned & use_loc, np.mod(j0 + k_loc, kk), np.where(fail, 0.0, j0))
    st.w0_local = np.where(fail, np.where(planned, on, use_loc), w0_local)
    loop.settle(verdict, need_h, Booking(
        stall=np.where(finish, need_h - remaining, np.where(fail | stop, s - k_done * tau - comp, 0.0)),
        lost=np.where(unexp, at_fail - w_new, 0.0),
        at_fail=at_fail, kept=st.w0,
        restart_h=np.where(np.where(planned, on, use_loc), sch.r_l, sch.r_s)))
