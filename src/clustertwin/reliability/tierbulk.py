"""The opening events of a two-tier run (:func:`.tiers.simulate_tiers`) while no schedule ends:
every (schedule, trial) pair fails at each, so the masked arithmetic of the event loop reduces
to its failing branch (``where(fail, x, y)`` is ``x``, ``d * active`` is ``d``) and the
finishing test can wait until a trial's clock passes the work (the work at the last resume
plus the productive time since never exceeds the time elapsed). Same operations in the same
order as the masked loop, so the same numbers; the masked loop takes over at the first event
that may end a pair."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from clustertwin.reliability.montecarlo import Booking

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


def whole_counts(sch: Schedule) -> bool:
    """Whether every ``kk`` is a whole number from 1 to 2**20 (then the checkpoint counts are
    whole numbers too)."""
    kk = sch.kk
    return bool(np.all((kk == np.floor(kk)) & (kk >= 1.0) & (kk <= 2.0**20)))


def mod_counts(x: np.ndarray, kk: np.ndarray, whole: bool) -> np.ndarray:
    """``np.mod(x, kk)`` for checkpoint counts, bit for bit. With whole ``kk >= 1`` the counts
    ``x`` are whole numbers; below 2**50 in size, ``x / kk`` is then never rounded across a
    whole number, so ``x - kk * floor(x / kk)`` is exact (and gives +0.0 where the remainder
    is zero, as ``np.mod`` does): a few fast operations instead of a slow one."""
    if whole and x.size and x.max() < 2.0**50 and x.min() > -2.0**50:
        return x - kk * np.floor(x / kk)
    return np.mod(x, kk)


def run_bulk(loop: Any, sch: Schedule, st: Resume) -> None:
    """Events while no pair can end; ``loop`` (a :class:`.montecarlo.TrialLoop` reading
    :class:`.arrivals.BlockRows`) and ``st`` are advanced in place."""
    rows, limit = loop.arrivals, loop.limit
    safe_below = sch.work * (1.0 - CLOCK_MARGIN) if bounded(sch) else -np.inf
    ws = Work(loop.rec_end.shape, sch)
    while loop.events < loop.max_events:
        arrival = Arrival(*rows.peek())
        t = arrival.t
        if limit is not None and bool((t > limit).any()):
            return
        s = np.maximum(t - loop.rec_end, 0.0)
        if not t.max() < safe_below and bool((s >= need(sch, st)[1]).any()):
            return
        rows.next()
        loop.events += 1
        _recovery(loop, t, ws)
        _event(loop, sch, st, arrival, s, ws)


class Work:
    """Reused (schedule, trial) buffers of one run's opening, and ``kk - 1``."""

    def __init__(self, shape: tuple[int, int], sch: Schedule) -> None:
        self.f = np.empty((10, *shape))
        self.b = np.empty((3, *shape), dtype=bool)
        self.kk1 = sch.kk - 1.0
        self.whole = whole_counts(sch)


def _recovery(loop: Any, t: np.ndarray, ws: Work) -> None:
    """Book the waiting and restart time since the previous event (every pair is active)."""
    wait_end, t_prev = loop.wait_end, loop.t_prev
    a, b = ws.f[0], ws.f[1]
    np.minimum(t, wait_end, out=a)
    np.subtract(a, t_prev, out=a)
    loop.waiting += np.maximum(a, 0.0, out=a)
    np.minimum(t, loop.rec_end, out=a)
    np.maximum(wait_end, t_prev, out=b)
    np.subtract(a, b, out=a)
    loop.restart += np.maximum(a, 0.0, out=a)


def _position(sch: Schedule, st: Resume, s: np.ndarray, ws: Work) -> tuple[np.ndarray, ...]:
    """Where each pair stands in its schedule at the failure (the masked loop's arithmetic):
    ``(k_done, comp, at_fail, k_loc, w_pfs, w_loc, r2)``."""
    u, q, r, c, k_done, comp, at_fail, k_loc, w_pfs, w_loc = ws.f
    np.multiply(st.j0, sch.p_loc, out=u)
    np.add(s, u, out=u)
    np.floor(np.divide(u, sch.p_sup, out=q), out=q)
    np.subtract(u, np.multiply(q, sch.p_sup, out=r), out=r)
    np.floor(np.divide(r, sch.p_loc, out=c), out=c)
    np.minimum(c, ws.kk1, out=c)
    r2 = u                                          # u is not needed any more
    np.subtract(r, np.multiply(c, sch.p_loc, out=r2), out=r2)
    qk = q
    np.multiply(q, sch.kk, out=qk)
    np.add(qk, c, out=k_done)
    np.subtract(k_done, st.j0, out=k_done)
    np.minimum(r2, sch.tau, out=comp)
    np.multiply(k_done, sch.tau, out=at_fail)
    np.add(st.w0, at_fail, out=at_fail)
    np.add(at_fail, comp, out=at_fail)
    fresh, m2, keep = ws.b
    np.greater_equal(r2, sch.p_f, out=fresh)
    np.less_equal(k_done, 0, out=m2)
    np.logical_or(fresh, m2, out=fresh)
    np.subtract(k_done, 1.0, out=k_loc)
    np.copyto(k_loc, k_done, where=fresh)
    i_pfs = c                                       # c is not needed any more
    np.subtract(qk, st.j0, out=i_pfs)
    np.greater_equal(r, sch.p_s, out=keep)
    np.subtract(i_pfs, sch.kk, out=i_pfs, where=~keep)
    np.multiply(i_pfs, sch.tau, out=w_pfs)
    np.add(st.w0, w_pfs, out=w_pfs)
    np.greater_equal(i_pfs, 1.0, out=keep)
    np.copyto(w_pfs, st.p0, where=~keep)
    np.multiply(k_loc, sch.tau, out=w_loc)
    np.add(st.w0, w_loc, out=w_loc)
    return k_done, comp, at_fail, k_loc, w_pfs, w_loc, r2


class Arrival(NamedTuple):
    """One interruption of every trial: when (``t``), its cause, whether it was planned, and
    when the failed node's replacement is available (``avail``)."""

    t: np.ndarray
    cause: np.ndarray
    planned: np.ndarray
    avail: np.ndarray


def _event(loop: Any, sch: Schedule, st: Resume, arrival: Arrival, s: np.ndarray, ws: Work) -> None:
    """One event at which every pair fails: the masked loop's failing branch."""
    tau, kk = sch.tau, sch.kk
    cause, planned = arrival.cause, arrival.planned
    k_done, comp, at_fail, k_loc, w_pfs, w_loc, _ = _position(sch, st, s, ws)
    survives = sch.on & (~loop.arrivals.repair_of[cause] | sch.keeps)
    use_loc = survives & ((k_loc >= 1.0) | st.w0_local) & (w_loc >= w_pfs)
    w_new = np.where(use_loc, w_loc, w_pfs)
    unexp = ~planned
    st.n_local += unexp & use_loc
    st.j0 = np.where(unexp & use_loc, mod_counts(st.j0 + k_loc, kk, ws.whole), 0.0)
    st.w0 = np.where(planned, at_fail, w_new)
    st.p0 = np.where(planned, at_fail, w_pfs)
    st.w0_local = np.where(planned, sch.on, use_loc)
    stall = np.subtract(s, np.multiply(k_done, tau, out=k_done), out=k_done)
    _settle(loop, arrival, Booking(np.subtract(stall, comp, out=stall),
                                   np.where(unexp, at_fail - w_new, 0.0), at_fail, st.w0,
                                   np.where(st.w0_local, sch.r_l, sch.r_s)))


def _settle(loop: Any, arrival: Arrival, book: Booking) -> None:
    """:meth:`.montecarlo.TrialLoop.settle` with every pair failing (totals of ended pairs and
    the running mask do not change; waiting and restart are booked by :func:`_recovery`)."""
    t, cause, planned, avail = arrival
    at_fail, kept, restart_h = book.at_fail, book.kept, book.restart_h
    loop.stall += book.stall
    loop.lost += book.lost
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


def newest_copies(sch: Any, s: np.ndarray, st: Any, node_lost: np.ndarray) -> tuple:
    """Where an event ``s`` hours of work after the resume falls in the schedule, and the
    newest durable copy of each tier then (the masked loop's and the flat tail's arithmetic,
    one copy): ``(k_done, comp, at_fail, k_loc, w_pfs, use_loc, w_new)`` with ``k_done`` the
    checkpoints completed since the resume and ``comp`` the work since the last stall."""
    tau, kk, p_loc, p_sup = sch.tau, sch.kk, sch.p_loc, sch.p_sup
    w0, j0 = st.w0, st.j0
    # position in the schedule, measured from the last PFS position before the resume
    u = s + j0 * p_loc
    q = np.floor(u / p_sup)
    r = u - q * p_sup                               # time since that PFS stall ended
    c = np.minimum(np.floor(r / p_loc), kk - 1.0)
    r2 = r - c * p_loc                              # time since the last stall ended
    k_done = q * kk + c - j0                        # checkpoints completed since resume
    comp = np.minimum(r2, tau)
    at_fail = w0 + k_done * tau + comp
    k_loc = np.where((r2 >= sch.p_f) | (k_done <= 0), k_done, k_done - 1.0)
    i_pfs = q * kk - j0
    i_pfs = np.where(r >= sch.p_s, i_pfs, i_pfs - kk)
    w_pfs = np.where(i_pfs >= 1.0, w0 + i_pfs * tau, st.p0)
    w_loc = w0 + k_loc * tau
    survives = sch.on & (~node_lost | sch.keeps)
    use_loc = survives & ((k_loc >= 1.0) | st.w0_local) & (w_loc >= w_pfs)
    return k_done, comp, at_fail, k_loc, w_pfs, use_loc, np.where(use_loc, w_loc, w_pfs)
