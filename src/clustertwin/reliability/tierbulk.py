"""The opening events of a two-tier run (:func:`.tiers.simulate_tiers`) while no schedule ends:
every (schedule, trial) pair fails at each, so the masked arithmetic of the event loop reduces
to its failing branch (``where(fail, x, y)`` is ``x``, ``d * active`` is ``d``) and the
finishing test can wait until a trial's clock passes the work (the work at the last resume
plus the productive time since never exceeds the time elapsed). Same operations in the same
order as the masked loop, so the same numbers; the masked loop takes over at the first event
that may end a pair."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: skip the exact finishing test while every trial's clock is this far short of the work
CLOCK_MARGIN = 1e-6


@dataclass
class Schedule:
    """Per schedule (column vectors, hours): local interval ``tau``, local checkpoints per PFS
    checkpoint ``kk``, local tier ``on``; stalls ``d_f`` (local) / ``d_s`` (PFS), write windows
    ``p_f`` / ``p_s``, restarts ``r_l`` / ``r_s``; ``p_loc``, ``p_sup`` cycle lengths."""

    tau: np.ndarray
    kk: np.ndarray
    on: np.ndarray
    d_f: np.ndarray
    d_s: float
    p_f: float
    p_s: float
    r_l: np.ndarray
    r_s: float
    keeps: bool
    work: float
    p_loc: np.ndarray
    p_sup: np.ndarray


@dataclass
class Resume:
    """Per pair: work at the last resume, newest durable PFS work before it, local checkpoints
    since the last PFS position, whether the local tier holds the resume point, local
    restores."""

    w0: np.ndarray
    p0: np.ndarray
    j0: np.ndarray
    w0_local: np.ndarray
    n_local: np.ndarray


def bounded(sch: Schedule) -> bool:
    """Whether the clock bound holds: positive intervals, non-negative stalls and windows."""
    return bool(np.all(sch.tau > 0) and np.all(sch.kk >= 1) and np.all(sch.d_f >= 0)
                and sch.d_s >= 0 and sch.p_f >= 0 and sch.p_s >= 0 and np.isfinite(sch.work))


def need(sch: Schedule, st: Resume) -> tuple[np.ndarray, np.ndarray]:
    """``(remaining, need)``: work left and productive time to finish it, stalls included."""
    remaining = sch.work - st.w0
    n_ck = np.maximum(np.ceil(remaining / sch.tau) - 1.0, 0.0)
    n_pfs = np.floor((n_ck + st.j0) / sch.kk)
    return remaining, remaining + n_ck * sch.d_f + n_pfs * (sch.d_s - sch.d_f)


def run_bulk(loop: Any, sch: Schedule, st: Resume) -> None:
    """Events while no pair can end; ``loop`` (a :class:`.montecarlo.TrialLoop` reading
    :class:`.arrivals.BlockRows`) and ``st`` are advanced in place."""
    rows, limit = loop.arrivals, loop.limit
    safe_below = sch.work * (1.0 - CLOCK_MARGIN) if bounded(sch) else -np.inf
    while loop.events < loop.max_events:
        t, cause, planned, avail = rows.peek()
        if limit is not None and bool((t > limit).any()):
            return
        s = np.maximum(t - loop.rec_end, 0.0)
        if not t.max() < safe_below and bool((s >= need(sch, st)[1]).any()):
            return
        rows.next()
        loop.events += 1
        _event(loop, sch, st, t, cause, planned, avail, s)


def _event(loop: Any, sch: Schedule, st: Resume, t: np.ndarray, cause: np.ndarray,
           planned: np.ndarray, avail: np.ndarray, s: np.ndarray) -> None:
    """One event at which every pair fails: the masked loop's failing branch."""
    wait_end, t_prev = loop.wait_end, loop.t_prev
    d_wait = np.maximum(np.minimum(t, wait_end) - t_prev, 0.0)
    d_rest = np.maximum(np.minimum(t, loop.rec_end) - np.maximum(wait_end, t_prev), 0.0)
    tau, kk, w0, j0 = sch.tau, sch.kk, st.w0, st.j0
    u = s + j0 * sch.p_loc
    q = np.floor(u / sch.p_sup)
    r = u - q * sch.p_sup
    c = np.minimum(np.floor(r / sch.p_loc), kk - 1.0)
    r2 = r - c * sch.p_loc
    k_done = q * kk + c - j0
    comp = np.minimum(r2, tau)
    at_fail = w0 + k_done * tau + comp
    k_loc = np.where((r2 >= sch.p_f) | (k_done <= 0), k_done, k_done - 1.0)
    i_pfs = q * kk - j0
    i_pfs = np.where(r >= sch.p_s, i_pfs, i_pfs - kk)
    w_pfs = np.where(i_pfs >= 1.0, w0 + i_pfs * tau, st.p0)
    w_loc = w0 + k_loc * tau
    survives = sch.on & (~loop.arrivals.repair_of[cause] | sch.keeps)
    use_loc = survives & ((k_loc >= 1.0) | st.w0_local) & (w_loc >= w_pfs)
    w_new = np.where(use_loc, w_loc, w_pfs)
    unexp = ~planned
    st.n_local += unexp & use_loc
    st.w0 = np.where(planned, at_fail, w_new)
    st.p0 = np.where(planned, at_fail, w_pfs)
    st.j0 = np.where(unexp & use_loc, np.mod(j0 + k_loc, kk), 0.0)
    st.w0_local = np.where(planned, sch.on, use_loc)
    _settle(loop, t, cause, planned, avail, d_wait, d_rest, s - k_done * tau - comp,
            np.where(unexp, at_fail - w_new, 0.0), at_fail, st.w0,
            np.where(np.where(planned, sch.on, use_loc), sch.r_l, sch.r_s))


def _settle(loop: Any, t: np.ndarray, cause: np.ndarray, planned: np.ndarray,
            avail: np.ndarray, d_wait: np.ndarray, d_rest: np.ndarray, stall: np.ndarray,
            lost: np.ndarray, at_fail: np.ndarray, kept: np.ndarray,
            restart_h: np.ndarray) -> None:
    """:meth:`.montecarlo.TrialLoop.settle` with every pair failing (totals of ended pairs and
    the running mask do not change)."""
    loop.waiting += d_wait
    loop.restart += d_rest
    loop.stall += stall
    loop.lost += lost
    loop.n_unexp += ~planned
    loop.n_plan += planned
    if loop.counts is not None:
        hit = ~planned
        loop.counts[loop.idx[hit], cause[hit]] += 1
    loop.wait_end = np.maximum(np.maximum(loop.wait_end, avail), t)
    loop.rec_end = loop.wait_end + restart_h
    if loop.record and loop.active[0, 0]:
        loop.timeline.append((float(t[0]), int(cause[0]), float(at_fail[0, 0]),
                              float(kept[0, 0]), float(loop.rec_end[0, 0])))
    loop.t_prev = t
