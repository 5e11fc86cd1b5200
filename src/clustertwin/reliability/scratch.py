"""Scratch arrays for the Monte Carlo's blocks and runs of rows, kept per thread from one call
to the next.

A fresh NumPy array of a few hundred kB comes as fresh pages from the system (the allocator
hands such blocks back when they are freed), and touching them costs more than the arithmetic
done on them; a run of the reliability stage makes thousands of such temporaries. Arrays up to
:data:`KEEP` elements are kept per thread and name and reused (contents undefined); larger ones
are made fresh, so what a thread keeps stays bounded (about 12 MB after the default example's
plan; some 20 names of at most 2 MB each)."""

from __future__ import annotations

import math
import threading

import numpy as np

#: the largest array kept for reuse, elements (2 MB of floats)
KEEP = 1 << 18

_LOCAL = threading.local()


class Scratch:
    """``scratch(name, shape, dtype)`` is the array ``name`` of that shape (contents
    undefined, valid until the next request for ``name`` in this thread); :meth:`zeros` an
    array of zeros (never to be written)."""

    def __init__(self) -> None:
        self._bufs: dict[tuple[str, str], np.ndarray] = {}

    def __call__(self, name: str, shape: tuple[int, ...], dtype: type = float) -> np.ndarray:
        return self._kept(name, shape, dtype, np.empty)

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        """Zeros of ``shape`` (``np.maximum`` against an array of zeros is faster than
        against the scalar 0.0, the same numbers)."""
        return self._kept("zeros", shape, float, np.zeros)

    def _kept(self, name: str, shape: tuple[int, ...], dtype: type, make) -> np.ndarray:  # noqa: ANN001
        """The kept array ``name`` (grown by ``make`` when too small), or a fresh one past
        :data:`KEEP` elements."""
        size = math.prod(shape)
        if size > KEEP:
            return make(shape, dtype)
        key = (name, np.dtype(dtype).str)
        buf = self._bufs.get(key)
        if buf is None or buf.size < size:
            buf = self._bufs[key] = make(size, dtype)
        return buf[:size].reshape(shape)


def down_rows(op: np.ufunc, x: np.ndarray) -> np.ndarray:
    """``x[:, r] = op(x[:, r - 1], x[:, r])`` for each row ``r`` (axis 1) in row order, in
    place: running sums or maxima of ``k`` quantities over rows. NumPy's own
    ``op.accumulate`` along that axis runs column by column (a few ns an element), a loop
    over the rows costs a call per row (about a microsecond): the first for narrow rows, the
    second for wide ones and for rows of a multiple of 64 elements (walking down the columns
    of those, every step lands on the same cache sets: two to five times slower); both combine
    in row order, so the numbers are the same."""
    k, width = x.shape[0], x[0, 0].size
    if k * width * 8 < 1300 + 1000 * k and width % 64:
        op.accumulate(x, axis=1, out=x)
        return x
    for r in range(1, x.shape[1]):
        op(x[:, r - 1], x[:, r], out=x[:, r])
    return x


def row_totals(x: np.ndarray) -> np.ndarray:
    """``down_rows(np.add, x)[:, -1]`` without the rows between: ``x[:, 0]`` totals plus the
    increments ``x[:, 1:]``, added in row order. ``add.reduce`` down the rows adds them row by
    row when the rows are contiguous and at least two elements wide (NumPy sums pairwise only
    along the innermost axis); 16 elements are required, to be safe."""
    if x[0, 0].size >= 16 and x.strides[-1] == x.itemsize:
        return np.add.reduce(x, axis=1)
    return down_rows(np.add, x)[:, -1].copy()


def scratch() -> Scratch:
    """This thread's scratch arrays."""
    pool = getattr(_LOCAL, "pool", None)
    if pool is None:
        pool = _LOCAL.pool = Scratch()
    return pool
