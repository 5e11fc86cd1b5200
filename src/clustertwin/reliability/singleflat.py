"""The flat phase of the single-tier loop (:mod:`.singletier`): from the first event at which
an (interval, trial) pair ends, the running pairs as a flat list in (interval, trial) order
that reads its trials' values by index. Pairs that end are written out with the reference's
arithmetic and switched off (their work kept set to -inf, so they never end again; what the
arithmetic then does with them is never read) until they are a quarter of the list, then
dropped."""

from __future__ import annotations

from typing import Any

import numpy as np

from clustertwin.reliability.arrivals import Block
from clustertwin.reliability.singlestate import OUT_FLOAT, Counter

KEPT, STALL, LOST, TAU, PERIOD = range(5)


class Flat:
    """The running pairs: ``state`` rows (kept, stall, lost, tau, period) x pairs."""

    def __init__(self, sim: Any, state: np.ndarray) -> None:
        g, n = sim.g, sim.n
        self.sim, self.state = sim, state
        self.pid, self.tr = np.arange(g * n), np.tile(np.arange(n), g)
        self.alive, self.left = np.ones(g * n, dtype=bool), g * n
        self.bufs = np.empty((4, g * n))
        self.pfuf: np.ndarray | None = None

    def step(self, blk: Block, b: int) -> bool:
        """Event ``b`` of ``blk``; True when no pair runs any more."""
        sim, st, tr = self.sim, self.state, self.tr
        trials, limit, t = sim.trials, sim.limit, blk.t[b]
        s = trials.productive(t).take(tr)
        remaining = sim.work - st[KEPT]
        n_ck = np.maximum(np.ceil(remaining / st[TAU]) - 1.0, 0.0)
        need = remaining + n_ck * sim.delta
        end = s >= need
        if limit is not None:
            end |= (t > limit).take(tr)
            end &= self.alive
        ending = bool(end.any())
        rec_old = trials.rec_end.copy() if ending else None
        trials.recover(t, blk.avail[b])
        if ending:
            idx = np.flatnonzero(end)
            self._end(blk, b, idx, s, need, n_ck, rec_old)
            self.left -= idx.size
            if self.left == 0:
                return True
            if self.left <= 0.75 * s.size:
                s = self._drop(s)
        if self.pfuf is None or self.pfuf[1] is not blk:
            self.pfuf = (np.stack([sim.pf, sim.uf], axis=1), blk)
        pf, uf = self.pfuf[0][b].take(self.tr, axis=1)
        at_fail = sim.fail(tuple(self.state), s, pf, uf, self.bufs[:, :s.size], sim.delta)
        if sim.record and self.pid[0] == 0 and self.alive[0]:
            sim.out.timeline.append((float(t[0]), int(blk.cause[b, 0]), at_fail,
                                     float(self.state[KEPT, 0]), float(trials.rec_end[0])))
        return False

    def _drop(self, s: np.ndarray) -> np.ndarray:
        keep = np.flatnonzero(self.alive)
        self.state = self.state.take(keep, axis=1)
        self.pid, self.tr, self.alive = (a.take(keep) for a in (self.pid, self.tr, self.alive))
        return s.take(keep)

    def _end(self, blk: Block, b: int, idx: np.ndarray, s: np.ndarray, need: np.ndarray,
             n_ck: np.ndarray, rec_old: np.ndarray) -> None:
        """Write out the totals of the pairs ``idx`` that finish or reach the wall-clock limit
        at event ``b`` (the reference's arithmetic for them), and switch them off."""
        sim, trials = self.sim, self.sim.trials
        kept, stall, lost, tau, period = self.state.take(idx, axis=1)
        pid, tr, out, event = self.pid.take(idx), self.tr.take(idx), sim.out, blk.first + b
        s, need, n_ck = s.take(idx), need.take(idx), n_ck.take(idx)
        vals = np.empty((len(OUT_FLOAT), idx.size))       # wall, work, stall, lost, restart, waiting
        vals[3], vals[4], vals[5] = lost, trials.restart.take(tr), trials.waiting.take(tr)
        wall_finish = rec_old.take(tr) + need
        if sim.limit is None:                             # every one finishes
            vals[0], vals[1] = wall_finish, sim.work
            np.add(stall, n_ck * sim.delta, out=vals[2])
        else:
            finish = s >= need
            k = np.floor(s / period)
            rem = s - k * period
            comp = np.minimum(rem, tau)
            vals[0] = np.where(finish, wall_finish, sim.limit if sim.limit else 0.0)
            vals[1] = np.where(finish, sim.work, kept + k * tau + comp)
            vals[2] = stall + np.where(finish, n_ck * sim.delta, k * sim.delta + (rem - comp))
        out.floats.reshape(len(OUT_FLOAT), -1)[:, pid] = vals
        counter: Counter = sim.counter
        n_unexp = counter.unexp_upto(blk, b, tr)
        out.ints.reshape(2, -1)[:, pid] = (n_unexp, event - n_unexp)
        counter.ended(pid, event)
        self.state[KEPT, idx] = -np.inf
        self.alive[idx] = False
        if sim.record and pid[0] == 0:
            out.timeline.append((float(vals[0, 0]), -1, float(vals[1, 0]), float(vals[1, 0]),
                                 float(vals[0, 0])))
