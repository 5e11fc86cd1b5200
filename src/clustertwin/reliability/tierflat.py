"""The tail of a two-tier run (:func:`.tiers.simulate_tiers`): from the first event at which a
(schedule, trial) pair may end, the running pairs as a flat list in (schedule, trial) order.

The masked loop (:func:`.tiers._masked_event`) computes every pair at every event and masks
what ended pairs do: they add ``d * 0.0`` (exactly ``+0.0`` for finite ``d``) to their waiting
and restart totals, zero to the rest, and keep every other value. So an ended pair never changes
again, and the running pairs can be computed alone, each with the same element-wise operations
in the same order, then written back when they end. A pair's restart end depends on the tier it
restored from, so every recovery value stays per pair (the single tier's per-trial trick does
not apply). This is exact only while the times are finite (``d * 0.0`` is NaN for an infinite
``d``): the phase is not used, or hands back to the masked loop, where they are not."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from clustertwin.reliability.runspec import RunawayError
from clustertwin.reliability.tierbulk import (
    Resume,
    Schedule,
    bounded,
    mod_counts,
    need,
    newest_copies,
    whole_counts,
)

#: per-pair arrays of the loop and of the resume state, carried in the flat list
LOOP_KEYS = ("rec_end", "wait_end", "done_work", "wall", "stall", "lost", "restart", "waiting",
             "n_unexp", "n_plan")
RESUME_KEYS = ("w0", "p0", "j0", "w0_local", "n_local")


class Flat:
    """The running pairs of ``loop`` (a :class:`.montecarlo.TrialLoop`) and ``st``."""

    def __init__(self, loop: Any, sch: Schedule, st: Resume) -> None:
        self.loop, self.st, self.full_sch = loop, st, sch
        pid = np.flatnonzero(loop.active.ravel())
        self.pid, self.tr, self.gi = pid, pid % loop.n, pid // loop.n
        self.vals = {k: getattr(loop, k).ravel().take(pid) for k in LOOP_KEYS}
        self.vals.update({k: getattr(st, k).ravel().take(pid) for k in RESUME_KEYS})
        self.sch = self._schedule()
        self.whole = whole_counts(sch)

    def _schedule(self) -> Schedule:
        sch, gi = self.full_sch, self.gi
        cols = {k: getattr(sch, k)[:, 0].take(gi)
                for k in ("tau", "kk", "on", "d_f", "r_l", "p_loc", "p_sup")}
        return replace(sch, **cols)

    def keep(self, keep: np.ndarray) -> None:
        """Write the pairs not in ``keep`` (a mask) back, and drop them from the list."""
        gone = np.flatnonzero(~keep)
        self.store(gone)
        np.put(self.loop.active, self.pid.take(gone), False)
        self.pid, self.tr, self.gi = (a[keep] for a in (self.pid, self.tr, self.gi))
        self.vals = {k: v[keep] for k, v in self.vals.items()}
        self.sch = self._schedule()

    def store(self, rows: np.ndarray) -> None:
        """Write the flat values of positions ``rows`` into the full arrays."""
        pid = self.pid.take(rows)
        for k in LOOP_KEYS:
            np.put(getattr(self.loop, k), pid, self.vals[k].take(rows))
        for k in RESUME_KEYS:
            np.put(getattr(self.st, k), pid, self.vals[k].take(rows))


def usable(loop: Any, sch: Schedule) -> bool:
    """Whether the flat phase is exact here: bounded schedules and finite recovery times."""
    lim = loop.limit
    return (bounded(sch) and (lim is None or bool(np.isfinite(lim)))
            and bool(np.isfinite(loop.rec_end).all() and np.isfinite(loop.wait_end).all()))


def run_flat(loop: Any, sch: Schedule, st: Resume) -> None:
    """Run the remaining events on the running pairs only; hands back to the masked loop (with
    the full arrays up to date) at an event with an infinite or NaN time."""
    if not loop.active.any() or not usable(loop, sch):
        return
    flat = Flat(loop, sch, st)
    rows = loop.arrivals
    while flat.pid.size:
        t, _, _, avail = rows.peek()
        if not (np.isfinite(t).all() and np.isfinite(avail).all()):
            flat.store(np.arange(flat.pid.size))
            return
        _flat_event(flat)


def _arrive(loop: Any) -> tuple[np.ndarray, ...]:
    """:meth:`.montecarlo.TrialLoop.next`'s draw and budget check."""
    if loop.events >= loop.max_events:
        loop.rewind()
        raise RunawayError(f"more than {loop.max_events} interruptions in one run")
    loop.events += 1
    return loop.arrivals.next(loop.t_prev)


def _flat_event(flat: Flat) -> None:
    """One event of the masked loop for the running pairs (all active, so ``active`` drops out
    of the masks and ``d * 1.0`` is ``d``)."""
    loop, sch, v, tr = flat.loop, flat.sch, flat.vals, flat.tr
    row = _arrive(loop)
    t_now, cause, planned, avail = (a.take(tr) for a in row)
    limit, t_prev = loop.limit, loop.t_prev.take(tr)
    wait_end, rec_end = v["wait_end"], v["rec_end"]
    ends = t_now > limit if limit is not None else np.zeros(tr.size, dtype=bool)
    t_eff = np.minimum(t_now, limit) if limit is not None else t_now
    d_wait = np.clip(np.minimum(t_eff, wait_end) - t_prev, 0.0, None)
    d_rest = np.clip(np.minimum(t_eff, rec_end) - np.maximum(wait_end, t_prev), 0.0, None)
    s = np.maximum(t_eff - rec_end, 0.0)
    st = Resume(w0=v["w0"], p0=v["p0"], j0=v["j0"], w0_local=v["w0_local"],
                n_local=v["n_local"])
    remaining, need_h = need(sch, st)
    finish = s >= need_h
    stop = ~finish & ends
    fail = ~finish & ~ends
    unexp = fail & ~planned
    kept, restart_h, stall, lost, at_fail = _checkpoints(flat, st, s, cause, planned, fail,
                                                         unexp)
    v["waiting"] += d_wait
    v["restart"] += d_rest
    v["stall"] += np.where(finish, need_h - remaining, np.where(fail | stop, stall, 0.0))
    v["lost"] += lost
    v["wall"] = np.where(finish, rec_end + need_h, np.where(stop, limit if limit else 0.0,
                                                             v["wall"]))
    v["done_work"] = np.where(finish, loop.work, np.where(stop, at_fail, v["done_work"]))
    v["n_unexp"] += unexp
    v["n_plan"] += planned & fail
    if loop.counts is not None:
        hit = unexp & (flat.gi == 0)
        loop.counts[tr[hit], cause[hit]] += 1
    v["wait_end"] = np.where(fail, np.maximum(np.maximum(wait_end, avail), t_now), wait_end)
    v["rec_end"] = np.where(fail, v["wait_end"] + restart_h, rec_end)
    if loop.record and flat.pid[0] == 0:
        if fail[0]:
            loop.timeline.append((float(t_now[0]), int(cause[0]), float(at_fail[0]),
                                  float(kept[0]), float(v["rec_end"][0])))
        else:
            done, wall = float(v["done_work"][0]), float(v["wall"][0])
            loop.timeline.append((wall, -1, done, done, wall))
    loop.t_prev = row[0]
    if not fail.all():
        flat.keep(fail)


def _checkpoints(flat: Flat, st: Resume, s: np.ndarray, cause: np.ndarray,
                 planned: np.ndarray, fail: np.ndarray, unexp: np.ndarray) -> tuple:
    """The masked event's checkpoint arithmetic; updates ``flat.vals``' resume state.
    Returns ``(kept, restart_h, stall if failing or stopped, lost, at_fail)``."""
    sch, v = flat.sch, flat.vals
    tau, kk = sch.tau, sch.kk
    w0, p0, j0, w0_local = st.w0, st.p0, st.j0, st.w0_local
    node_lost = flat.loop.arrivals.repair_of[cause]
    k_done, comp, at_fail, k_loc, w_pfs, use_loc, w_new = newest_copies(sch, s, st, node_lost)
    kept_after = np.where(planned, at_fail, w_new)
    v["n_local"] += unexp & use_loc
    v["w0"] = np.where(fail, kept_after, w0)
    v["p0"] = np.where(fail, np.where(planned, at_fail, w_pfs), p0)
    v["j0"] = np.where(fail & ~planned & use_loc, mod_counts(j0 + k_loc, kk, flat.whole),
                       np.where(fail, 0.0, j0))
    v["w0_local"] = np.where(fail, np.where(planned, sch.on, use_loc), w0_local)
    restart_h = np.where(np.where(planned, sch.on, use_loc), sch.r_l, sch.r_s)
    return (v["w0"], restart_h, s - k_done * tau - comp, np.where(unexp, at_fail - w_new, 0.0),
            at_fail)
