"""Vectorized Monte Carlo over the step graph.

Durations are an ``N x S`` array, node-major (one contiguous row of S samples per step), which
measured fastest for a 200-node DAG (ecosystem-style 2c: 2.7-3.0 ms for 10,000 samples vs 4.8 s
with networkx per sample). Triangular samples come from the inverse CDF of one shared uniform
matrix, so a what-if run with the same seed is paired sample by sample with the baseline
(common random numbers): a shift in P50 is the change, not noise. PERT uses ``Generator.beta``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

import numpy as np

from clustertwin.buildout.cpm import Network

Distribution = Literal["triangular", "pert"]
#: A step whose float in a sample is at most this many days counts as critical in that sample.
FLOAT_TOL_DAYS = 1e-6
#: sampled durations kept between the forward and backward passes while they fit in this
#: (:class:`TriangularRows`); larger runs draw each row twice instead
ROW_CACHE_BYTES = 64 * 2**20


#: ``N x S`` scratch blocks a finished Monte Carlo handed back (:func:`simulate`), at most this
#: many: the next plan of the same shape writes into them instead of into fresh memory, whose
#: every page the kernel must zero and fault in (a 10,000-sample plan's two blocks are 32 MB)
SPARE_BLOCKS = 2
_spare: list[np.ndarray] = []
_spare_lock = threading.Lock()


def scratch(shape: tuple[int, int]) -> np.ndarray:
    """An uninitialised float block of ``shape``: a spare one if there is one, else new."""
    with _spare_lock:
        for k, a in enumerate(_spare):
            if a.shape == shape:
                return _spare.pop(k)
    return np.empty(shape)


def give_back(block: np.ndarray) -> None:
    """Keep ``block`` for a later :func:`scratch` (the newest :data:`SPARE_BLOCKS` are kept);
    the caller holds no view of it any more."""
    with _spare_lock:
        _spare.append(block)
        del _spare[:-SPARE_BLOCKS]


def drop_spares() -> None:
    """Forget the spare blocks (a memory measurement that should see a plan's own blocks)."""
    with _spare_lock:
        _spare.clear()


def uniforms(seed: int, n: int, samples: int) -> np.ndarray:
    """The shared ``n x samples`` uniform matrix for one plan (SeedSequence -> Generator)."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    return rng.random((n, samples))


class TriangularRows:
    """The triangular durations ``triangular(o, m, p, uniforms(seed, rows, samples)[numbers -
    1])`` row by row, bit for bit, never held as an ``N x S`` matrix: row ``i`` (step
    ``numbers[i]``) redraws uniform row ``numbers[i] - 1`` by advancing a copy of the stream
    to it (a ``(rows, samples)`` draw takes one 64-bit output per double, row-major) and
    samples it again. The Monte Carlo passes read a row twice (forward, then backward), so a
    plan holds only the earliest finishes (8 B per step and sample) and the frontier rows.
    Step ``k`` takes uniform row ``k - 1`` in every run over the same book (common random
    numbers for what-ifs). While all rows fit in :data:`ROW_CACHE_BYTES` (a plan's 198 steps x
    10,000 samples are 16 MB) each is kept once drawn, in one :func:`scratch` block, so the
    backward pass reads instead of redrawing (a third of a plan's build-out time); past that,
    or after :meth:`release`, rows are drawn again. Rows drawn in uniform-row order read
    the stream on from where the last one stopped (no reset and advance)."""

    def __init__(self, o: np.ndarray, m: np.ndarray, p: np.ndarray, numbers: list[int],
                 seed: int, samples: int) -> None:
        self.o, self.m, self.p = (np.asarray(a, dtype=float) for a in (o, m, p))
        self.numbers = list(numbers)
        self.samples = samples
        self.shape = (len(self.numbers), samples)
        self._bits = np.random.PCG64(np.random.SeedSequence(seed))
        self._start = self._bits.state
        self._gen = np.random.Generator(self._bits)
        self._at = 0  # the uniform row the stream stands at (one 64-bit output per double)
        # triangular()'s per-row constants, computed once (the same element-wise arithmetic)
        o, m, p = self.o, self.m, self.p
        span = p - o
        safe = np.where(span > 0, span, 1.0)
        self._fc = ((m - o) / safe).tolist()
        self._low = (safe * (m - o)).tolist()
        self._high = (safe * (p - m)).tolist()
        self._o, self._p = o.tolist(), p.tolist()
        self._bufs = tuple(np.empty(samples) for _ in range(5))
        keep = len(self.numbers) * samples * 8 <= ROW_CACHE_BYTES
        # kept rows live in one block: one allocation (a few large pages) instead of a fresh
        # heap row per step, whose first writes each fault a page in
        self._kept: np.ndarray | None = scratch(self.shape) if keep else None
        self._drawn = [False] * len(self.numbers)

    def release(self) -> None:
        """Hand the kept rows' block back (:func:`give_back`); later rows are drawn again."""
        if self._kept is not None:
            give_back(self._kept)
            self._kept = None

    def __getitem__(self, i: int) -> np.ndarray:
        """Row ``i``: :func:`triangular` of its uniform row, with one square root per sample
        (of the branch it takes) instead of two. The branches are picked without branching
        (``a * 1.0 + b * 0.0`` is ``a`` exactly for finite ``b``; random masks defeat branch
        prediction). The row is written into a buffer that the next call overwrites (the
        passes read each row once, before asking for the next), or, while rows are kept, into
        a row of its own."""
        kept = self._kept
        u, low, high, x, y = self._bufs
        if kept is not None:
            y = kept[i]
            if self._drawn[i]:
                return y
            self._drawn[i] = True
        if self._o[i] == self._p[i]:     # no spread: every sample is o (triangular's arithmetic
            y.fill(self._o[i])           # gives o + sqrt(0) or p - sqrt(0)); nothing to draw
            return y
        row = self.numbers[i] - 1
        if row != self._at:  # the stream stands after the row drawn last: the next is free
            self._bits.state = self._start
            self._bits.advance(row * self.samples)
        self._gen.random(out=u)
        self._at = row + 1
        np.less(u, self._fc[i], out=low, casting="unsafe")       # 1.0 on the left branch
        np.subtract(1.0, low, out=high)
        np.subtract(1.0, u, out=y)
        y *= self._high[i]
        y *= high
        u *= self._low[i]
        u *= low
        y += u                                  # u (p-o)(m-o) on the left, (1-u)(p-o)(p-m) right
        np.sqrt(y, out=y)
        np.add(y, self._o[i], out=x)
        x *= low
        np.subtract(self._p[i], y, out=y)
        y *= high
        y += x
        return y


def triangular(o: np.ndarray, m: np.ndarray, p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF triangular samples; rows with o == p return o."""
    o, m, p = (np.asarray(a, dtype=float)[:, None] for a in (o, m, p))
    span = p - o
    safe = np.where(span > 0, span, 1.0)
    fc = (m - o) / safe
    # the same arithmetic as o + sqrt(u (p-o)(m-o)) and p - sqrt((1-u)(p-o)(p-m)), in place:
    # two N x S temporaries instead of six (this is most of a plan's build-out time)
    left = u * (safe * (m - o))
    np.sqrt(left, out=left)
    left += o
    right = np.subtract(1.0, u)
    right *= safe * (p - m)
    np.sqrt(right, out=right)
    np.subtract(p, right, out=right)
    np.copyto(right, left, where=u < fc)
    return right


def pert(o: np.ndarray, m: np.ndarray, p: np.ndarray, seed: int, samples: int) -> np.ndarray:
    """PERT (beta with lambda = 4) samples; rows with o == p return o."""
    o, m, p = (np.asarray(a, dtype=float) for a in (o, m, p))
    span = p - o
    safe = np.where(span > 0, span, 1.0)
    alpha = 1.0 + 4.0 * (m - o) / safe
    beta = 1.0 + 4.0 * (p - m) / safe
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    x = rng.beta(alpha[:, None], beta[:, None], size=(len(o), samples))
    return o[:, None] + x * span[:, None]


@dataclass(frozen=True)
class MCResult:
    """The Monte Carlo's go-live day per sample and each step's criticality."""

    finish: np.ndarray  # (S,) go-live day of each sample
    criticality: np.ndarray  # (N,) share of samples in which each step is critical


def forward(net: Network, d: np.ndarray | TriangularRows, out: np.ndarray | None = None) -> np.ndarray:
    """Earliest finish of every step in every sample (``N x S``; into ``out`` if given)."""
    ef = np.empty(d.shape) if out is None else out
    for i, pr in enumerate(net.preds):
        row = ef[i]
        di = d[i]
        if not pr:
            row[:] = di
            continue
        if len(pr) == 1:
            np.add(ef[pr[0]], di, out=row)
            continue
        np.maximum(ef[pr[0]], ef[pr[1]], out=row)
        for k in pr[2:]:
            np.maximum(row, ef[k], out=row)
        row += di
    return ef


def criticality(net: Network, d: np.ndarray | TriangularRows, ef: np.ndarray) -> np.ndarray:
    """Share of samples in which each step has zero total float (backward pass per sample).
    A step's latest-start row is dropped as soon as every predecessor has read it, so only
    the rows of the current frontier are held (not ``N x S``)."""
    n, s = d.shape
    ls: dict[int, np.ndarray] = {}
    uses = [len(pr) for pr in net.preds]
    crit = np.empty(n)
    buf, tight = np.empty(s), np.empty(s, dtype=bool)
    spare: list[np.ndarray] = []     # rows every predecessor has read, written again
    for i in range(n - 1, -1, -1):
        su = net.succs[i]
        row = spare.pop() if spare else np.empty(s)
        di = d[i]
        if not su:
            np.subtract(ef[i], di, out=row)
        elif len(su) == 1:
            np.subtract(ls[su[0]], di, out=row)
        else:
            np.minimum(ls[su[0]], ls[su[1]], out=row)
            for k in su[2:]:
                np.minimum(row, ls[k], out=row)
            row -= di
        for k in su:
            uses[k] -= 1
            if not uses[k]:
                spare.append(ls.pop(k))
        # float = LS - ES = LS - (EF - d)
        np.subtract(row, ef[i], out=buf)
        buf += di
        crit[i] = np.count_nonzero(np.less_equal(buf, FLOAT_TOL_DAYS, out=tight)) / s
        if uses[i]:
            ls[i] = row
        else:
            spare.append(row)
    return crit


def simulate(net: Network, d: np.ndarray | TriangularRows) -> MCResult:
    """Run the forward and backward passes over sampled durations ``d`` (``N x S``, or rows
    drawn on demand). The earliest-finish block and the rows' kept block are handed back for
    the next run (:func:`give_back`); rows read from ``d`` afterwards are drawn again."""
    ef = forward(net, d, scratch(d.shape))
    res = MCResult(finish=ef[net.sink].copy(), criticality=criticality(net, d, ef))
    give_back(ef)
    if isinstance(d, TriangularRows):
        d.release()
    return res
