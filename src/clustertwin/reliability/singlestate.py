"""What the single-tier loop (:mod:`.singletier`, :mod:`.singleflat`) keeps: the totals per
pair, the recovery per trial, and one event's checkpoint arithmetic for pairs that fail."""

from __future__ import annotations

import numpy as np

from clustertwin.reliability.arrivals import Block
from clustertwin.reliability.runspec import Outcome

#: the per-pair totals of an Outcome kept in one float array, in this order
OUT_FLOAT = ("wall", "work", "stall", "lost", "restart", "waiting")


class Out:
    """The per-pair totals of :class:`.runspec.Outcome`, shape (intervals, trials); the float
    ones (:data:`OUT_FLOAT`) and the two interruption counts each in one array."""

    def __init__(self, g: int, n: int, n_causes: int | None) -> None:
        self.floats = np.zeros((len(OUT_FLOAT), g, n))
        self.ints = np.zeros((2, g, n), dtype=np.int64)        # unplanned, planned
        self.counts = np.zeros((n, n_causes), dtype=np.int64) if n_causes is not None else None
        self.timeline: list[tuple[float, int, float, float, float]] = []

    def outcome(self, tau: np.ndarray, events: int) -> Outcome:
        wall, work, stall, lost, restart, waiting = self.floats
        return Outcome(tau[:, 0], wall, work, stall, lost, restart, waiting, self.ints[0],
                       self.ints[1], self.counts, self.timeline, events)


class Trials:
    """Recovery state per trial, shared by the trial's running pairs (hours). The reference's
    clipped waiting time ``max(min(t, wait_end) - t_prev, 0)`` is ``min(t, wait_end) -
    t_prev`` as it stands (a running trial's recovery and clock never lag its previous event),
    and ``max(max(wait_end, avail), t)`` is ``max(wait_end, avail)`` (a replacement is never
    ready before the failure)."""

    def __init__(self, n: int, limit: float | None, rst: float) -> None:
        self.limit, self.rst = limit, rst
        self.t_prev, self.wait_end, self.rec_end = np.zeros(n), np.zeros(n), np.zeros(n)
        self.waiting, self.restart = np.zeros(n), np.zeros(n)
        self.s, self.a, self.zero = np.empty(n), np.empty(n), np.zeros(n)

    def productive(self, t: np.ndarray) -> np.ndarray:
        """Productive time before the event at ``t`` (hours since the restart ended)."""
        t_eff = np.minimum(t, self.limit) if self.limit is not None else t
        np.subtract(t_eff, self.rec_end, out=self.s)
        np.maximum(self.s, self.zero, out=self.s)
        return self.s

    def recover(self, t: np.ndarray, avail: np.ndarray) -> None:
        """Book the waiting and restart time before the event at ``t``, then start the
        recovery from it (for the pairs that fail there)."""
        t_eff = np.minimum(t, self.limit) if self.limit is not None else t
        a, wait_end = self.a, self.wait_end
        np.minimum(t_eff, wait_end, out=a)
        a -= self.t_prev
        self.waiting += a
        np.minimum(t_eff, self.rec_end, out=a)
        a -= wait_end
        np.maximum(a, self.zero, out=a)
        self.restart += a
        np.maximum(wait_end, avail, out=wait_end)
        np.add(wait_end, self.rst, out=self.rec_end)
        self.t_prev = t


def fail_all(st: tuple[np.ndarray, ...], s: np.ndarray, pf: np.ndarray, uf: np.ndarray,
             bufs: np.ndarray, delta: float) -> float:
    """Every pair ``st = (kept, stall, lost, tau, period)`` fails after ``s`` productive hours
    (no checkpoint write window, finite intervals: the reference's ``k_ok`` is ``k``);
    ``pf``/``uf`` 1.0 where the event is planned/unplanned, ``bufs`` four scratch arrays.
    Returns the first pair's work at the failure."""
    kept, stall, lost, tau, period = st
    a, k, c, d = bufs
    np.divide(s, period, out=k)
    np.floor(k, out=k)
    np.multiply(k, period, out=a)
    np.subtract(s, a, out=a)                          # rem
    np.minimum(a, tau, out=c)                         # comp
    a -= c                                            # partial
    np.multiply(k, delta, out=d)
    d += a
    stall += d
    np.multiply(k, tau, out=k)                        # k tau = k_ok tau
    at_fail = kept.flat[0] + k.flat[0] + c.flat[0]
    np.multiply(c, pf, out=a)                         # + comp when planned, + 0 otherwise
    k += a
    kept += k
    np.multiply(c, uf, out=a)                         # comp + 0 tau when unplanned
    lost += a
    return float(at_fail)


def fail_window(persist: float):
    """:func:`fail_all` with a checkpoint write window (the reference's ``k_ok`` terms)."""

    def fail(st: tuple[np.ndarray, ...], s: np.ndarray, pf: np.ndarray, uf: np.ndarray,
             bufs: np.ndarray, delta: float) -> float:
        kept, stall, lost, tau, period = st
        k = np.floor(s / period)
        rem = s - k * period
        comp = np.minimum(rem, tau)
        k_ok = np.where((rem < persist) & (k >= 1), k - 1.0, k)
        at_fail = kept.flat[0] + k.flat[0] * tau.flat[0] + comp.flat[0]
        kept += np.where(pf > 0, k * tau + comp, k_ok * tau)
        stall += k * delta + (rem - comp)
        lost += (comp + (k - k_ok) * tau) * uf
        return float(at_fail)

    return fail


class Counter:
    """Interruption counts per pair from running counts per trial: a pair that ends at event
    ``e`` failed at every event before it, ``u`` of them unplanned and ``e - u`` planned; the
    causes are counted for the first interval's pairs (``counts``, trials x causes)."""

    def __init__(self, n: int, counts: np.ndarray | None) -> None:
        self.n, self.counts = n, counts
        self.end0 = np.full(n, np.iinfo(np.int64).max)    # event at which interval 0 ended
        self.unexp_before = np.zeros(n, dtype=np.int64)    # before the current block
        self.cu: np.ndarray | None = None

    def unexp_upto(self, blk: Block, b: int, trials: np.ndarray) -> np.ndarray:
        """Unplanned events of ``trials`` before event ``b`` of ``blk``."""
        if self.cu is None:
            self.cu = np.zeros((blk.rows + 1, self.n), dtype=np.int32)
            np.cumsum(~blk.planned, axis=0, dtype=np.int32, out=self.cu[1:])
        return self.unexp_before.take(trials) + self.cu[b].take(trials)

    def ended(self, pid: np.ndarray, event: int) -> None:
        self.end0[pid[pid < self.n]] = event

    def close(self, blk: Block, rows: int) -> None:
        """End of a block after ``rows`` events: carry the unplanned counts; count the causes
        of interval 0's unplanned interruptions (its events before it ended)."""
        planned, counts = blk.planned[:rows], self.counts
        self.unexp_before = self.unexp_before + (rows - np.count_nonzero(planned, axis=0))
        self.cu = None
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
