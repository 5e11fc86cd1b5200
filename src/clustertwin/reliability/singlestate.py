"""What the single-tier loop (:mod:`.singletier`, :mod:`.singlepairs`) keeps: the totals per
pair, the recovery per trial, and the checkpoint arithmetic of a run of events for pairs that
fail at each of them.

Everything here works on a run of ``R`` consecutive events at once (rows). Sums that the
reference builds one event at a time (``total += increment``) are built the same way: the
increments of all rows first, then added in event order from the total before the run (so
each row holds the reference's running total, rounding included), by
:func:`.scratch.down_rows` (or :func:`.scratch.row_totals` where only the last row is read)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clustertwin.reliability.arrivals import Block
from clustertwin.reliability.runspec import Outcome
from clustertwin.reliability.scratch import Scratch, down_rows, row_totals

#: the per-pair totals of an Outcome kept in one float array, in this order
OUT_FLOAT = ("wall", "work", "stall", "lost", "restart", "waiting")
#: the running per-pair totals (:func:`fail_rows`), in this order
KEPT, STALL, LOST = range(3)


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


def running_sums(x: np.ndarray) -> np.ndarray:
    """``x[:, 0]`` totals, ``x[:, 1:]`` increments (axis 1 the rows): each row becomes the
    totals after its increments, added in row order (in place)."""
    return down_rows(np.add, x)


@dataclass
class TrialRows:
    """A run of ``R`` events of every trial: productive time before each (``s``, (R, trials)),
    and per trial the repair-wait end ``wait``, recovery end ``rec`` and the waiting and
    restart totals ``acc`` ((R + 1, trials), and (2, R + 1, trials): before the run, then after
    each event's recovery starts)."""

    s: np.ndarray
    wait: np.ndarray
    rec: np.ndarray
    acc: np.ndarray


class Trials:
    """Recovery state per trial, shared by the trial's running pairs (hours). The reference's
    clipped waiting time ``max(min(t, wait_end) - t_prev, 0)`` is ``min(t, wait_end) -
    t_prev`` as it stands (a running trial's recovery and clock never lag its previous event),
    and ``max(max(wait_end, avail), t)`` is ``max(wait_end, avail)`` (a replacement is never
    ready before the failure). After its first failure a trial's recovery ends ``rst`` after
    its repair wait; before it, both are 0."""

    def __init__(self, n: int, limit: float | None, rst: float, scratch: Scratch) -> None:
        self.limit, self.rst, self.scratch = limit, rst, scratch
        self.t_prev, self.wait_end, self.rec_end = np.zeros(n), np.zeros(n), np.zeros(n)
        self.acc = np.zeros((2, n))                       # waiting, restart

    def rows(self, t: np.ndarray, avail: np.ndarray, s: np.ndarray,
             running: bool = True) -> TrialRows:
        """The events at times ``t`` (R, trials), replacements ready at ``avail``, booked for
        every trial (for the pairs that fail there), and the state moved past them (the rows
        are scratch arrays, valid until the next call); the productive times go to ``s``.
        Without ``running`` the waiting and restart totals are kept for the last row only
        (``acc`` then holds the increments)."""
        n_rows, tmp = t.shape[0], self.scratch
        t_eff = t if self.limit is None else np.minimum(t, self.limit, out=tmp("t_eff", t.shape))
        zero = tmp.zeros(t.shape)
        wait = tmp("wait", (n_rows + 1,) + t.shape[1:])
        wait[0], wait[1:] = self.wait_end, avail
        down_rows(np.maximum, wait[None])
        rec = np.add(wait, self.rst, out=tmp("rec", wait.shape))
        rec[0] = self.rec_end
        np.subtract(t_eff, rec[:-1], out=s)
        np.maximum(s, zero, out=s)
        acc = tmp("acc", (2,) + wait.shape)
        acc[:, 0] = self.acc
        waiting, restart = acc[0, 1:], acc[1, 1:]
        np.minimum(t_eff, wait[:-1], out=waiting)
        waiting[0] -= self.t_prev
        waiting[1:] -= t[:-1]
        np.minimum(t_eff, rec[:-1], out=restart)
        restart -= wait[:-1]
        np.maximum(restart, zero, out=restart)
        if running:
            self.acc = running_sums(acc)[:, -1].copy()
        else:
            self.acc = row_totals(acc)
        self.t_prev, self.wait_end, self.rec_end = t[-1], wait[-1].copy(), rec[-1].copy()
        return TrialRows(s, wait, rec, acc)


def fail_rows(s: np.ndarray, tau: np.ndarray, period: np.ndarray, delta: float,
              out: np.ndarray, k: np.ndarray, rem: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of intervals ``tau``, cycles ``period`` fails after ``s`` productive hours at
    each of ``R`` events (no checkpoint write window, finite intervals: the reference's ``k_ok``
    is ``k``). Writes the increments of the running totals to ``out`` ((3, R, pairs): kept,
    stall, lost), as for unplanned events; returns ``(k tau, comp)`` (the work at the
    failure is ``kept + k tau + comp``). :func:`plan_rows` then fixes the planned ones. ``k``
    and ``rem`` are scratch arrays of the pairs' rows."""
    kt, st, comp = out[KEPT], out[STALL], out[LOST]
    np.divide(s, period, out=k)
    np.floor(k, out=k)
    np.multiply(k, period, out=rem)
    np.subtract(s, rem, out=rem)                      # rem
    np.minimum(rem, tau, out=comp)                    # comp, lost when unplanned
    rem -= comp                                       # partial
    np.multiply(k, delta, out=st)
    st += rem                                         # k delta + partial
    np.multiply(k, tau, out=kt)                       # k tau = k_ok tau, kept when unplanned
    return kt, comp


def plan_rows(out: np.ndarray, pf: np.ndarray, a: np.ndarray) -> None:
    """The increments of :func:`fail_rows` where the event is planned (``pf`` 1.0 there, 0.0
    elsewhere; ``a`` a scratch array of the pairs' rows): a planned failure saves first (kept
    ``k tau + comp``) and loses nothing (``comp - comp`` is 0, as the reference's
    ``comp * 0.0``; elsewhere ``comp - 0.0`` is ``comp``)."""
    kt, comp = out[KEPT], out[LOST]
    np.multiply(comp, pf, out=a)
    kt += a
    comp -= a


def window_rows(persist: float):
    """:func:`fail_rows` and :func:`plan_rows` in one, with a checkpoint write window of
    ``persist`` hours (the reference's ``k_ok`` terms); ``pf``/``uf`` are 1.0 where the event
    is planned/unplanned (broadcast against ``s``)."""

    def fail(s: np.ndarray, tau: np.ndarray, period: np.ndarray, delta: float, out: np.ndarray,
             pf: np.ndarray, uf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = np.floor(s / period)
        rem = s - k * period
        comp = np.minimum(rem, tau)
        k_ok = np.where((rem < persist) & (k >= 1), k - 1.0, k)
        kt = k * tau
        out[KEPT] = np.where(pf > 0, kt + comp, k_ok * tau)
        out[STALL] = k * delta + (rem - comp)
        out[LOST] = (comp + (k - k_ok) * tau) * uf
        return kt, comp

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
        self.cells: np.ndarray | None = None                # scratch for a block's cause cells

    def unexp_upto(self, blk: Block, b: np.ndarray, trials: np.ndarray) -> np.ndarray:
        """Unplanned events of ``trials`` before events ``b`` of ``blk``."""
        if self.cu is None:
            self.cu = np.zeros((blk.rows + 1, self.n), dtype=np.int32)
            self.cu[1:] = ~blk.planned
            running_sums(self.cu[None])
        return self.unexp_before.take(trials) + self.cu[b, trials]

    def ended(self, pid: np.ndarray, event: np.ndarray) -> None:
        first = pid < self.n
        self.end0[pid[first]] = event[first]

    def close(self, blk: Block, rows: int) -> None:
        """End of a block after ``rows`` events: carry the unplanned counts; count the causes
        of interval 0's unplanned interruptions (its events before it ended)."""
        planned, counts = blk.planned[:rows], self.counts
        n_planned = np.add.reduce(planned.view(np.uint8), axis=0, dtype=np.int32)
        self.unexp_before = self.unexp_before + (rows - n_planned)
        self.cu = None
        if counts is None:
            return
        n, n_causes = counts.shape
        upto = np.clip(self.end0 - blk.first, 0, rows)
        if (upto == rows).all():     # planned events count in an extra column, dropped
            if self.cells is None or self.cells.shape != planned.shape:
                self.cells = np.empty(planned.shape, dtype=np.intp)
            cell = np.add(blk.cause[:rows], np.arange(n) * (n_causes + 1), out=self.cells)
            counts += np.bincount(cell.ravel(), minlength=n * (n_causes + 1)).reshape(
                n, n_causes + 1)[:, :n_causes]
            return
        keep = (np.arange(rows)[:, None] < upto) & ~planned
        cell = (blk.cause[:rows] + np.arange(n) * n_causes)[keep]
        counts += np.bincount(cell, minlength=n * n_causes).reshape(n, n_causes)
