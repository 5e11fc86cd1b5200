"""Megatron-LM iteration lines read a block at a time by their ``|`` columns: the fast path
for multi-GB logs (:mod:`.fastmeg` is the general block path, the line reader the last one).

Megatron prints every iteration line with the same fields in the same order, each behind a
``|``. So in a block (cut at a newline) this reader finds the newlines and the ``|`` bytes
once; the lines with as many ``|`` as the first iteration line and a ``[YYYY-MM-DD HH:MM:SS``
stamp at their start are iteration lines, and their ``|`` positions form one matrix (a row per
line, a column per field). The first line names the columns; every line's key bytes of a column
read are compared with it (so a key in another place is caught), and the value of a column
lies between its colon and the next ``|``. Whole numbers (consumed samples, skipped and nan
iterations) and numbers every line writes in one layout (``%.6E`` losses, a steady step time)
are read by digit arithmetic, others by numpy's float parser; all are the doubles
:func:`float` reads.

Anything else returns None and the caller falls back: a block with no iteration line, an
iteration line with other fields or not ending with ``|``, a stamp with a time zone, a value
that is not a number or is infinite, a step time that is not positive, or another line that
looks like an iteration line.
"""

from __future__ import annotations

import re
import threading

import numpy as np

from clustertwin.track.fastmeg import KEYS, PAD, other_lines, stamps

#: column key (the text between ``|`` and ``:``, stripped) -> field name of the block columns
COLUMN_KEYS = {v.removeprefix(b"| ").decode(): k for k, v in KEYS.items()}
INTEGERS = ("samples", "tokens", "skipped", "nan")
WIDTH_MAX = 40  #: the widest value field read (wider: fall back)
FIELD0_MAX = 96  #: the widest stamp-and-counter field read


_SCRATCH = threading.local()  #: two reused masks per thread: a fresh 4 MiB array costs its page faults each block


def _marks(head: np.ndarray) -> np.ndarray:
    """Positions of the newlines and ``|`` bytes, in one pass over two reused masks."""
    masks = getattr(_SCRATCH, "masks", None)  # a thread-local: each thread makes its own on first use
    if masks is None or len(masks[0]) < len(head):
        masks = _SCRATCH.masks = (np.empty(len(head), bool), np.empty(len(head), bool))
    a, b = (x[:len(head)] for x in masks)
    np.equal(head, 10, out=a)
    np.equal(head, 124, out=b)
    np.logical_or(a, b, out=a)
    return np.flatnonzero(a)


def _layout(line: bytes) -> tuple[int, dict[str, tuple[int, int]]] | None:
    """(the number of ``|`` on the line, field name -> (column, offset of its value after the
    ``|`` before it)) from one iteration line; None when the line does not end with a ``|``
    (its last field would not be read)."""
    if not line.rstrip().endswith(b"|"):
        return None
    fields = line.split(b"|")
    out: dict[str, tuple[int, int]] = {}
    for j, text in enumerate(fields[1:-1], start=1):
        key, sep, _ = text.partition(b":")
        name = COLUMN_KEYS.get(key.strip().decode("latin-1")) if sep else None
        if name is not None:
            out[name] = (j, len(key) + 1)
    return len(fields) - 1, out


def _ints(m: np.ndarray) -> np.ndarray | None:
    """Whole numbers of a blank-padded byte matrix (one per row), or None when a row is not
    spaces around one run of at most 15 digits."""
    d = m - np.uint8(48)  # a byte that is not a digit wraps past 9
    isd = d <= 9
    if not (isd | (m == 32)).all():
        return None
    runs = (isd[:, 1:] & ~isd[:, :-1]).sum(axis=1) + isd[:, 0]
    if not (runs == 1).all() or isd.sum(axis=1).max(initial=0) > 15:
        return None
    v = np.zeros(len(m), np.int64)
    for j in range(m.shape[1]):
        v = np.where(isd[:, j], v * 10 + d[:, j], v)
    return v.astype(float)


_FLOAT = re.compile(rb"^ *([+-]?)(\d*)\.?(\d*)(?:[eE]([+-]?)(\d+))? *$")
_EXACT_POW = 22  #: 10**k is exact in a double up to here (Clinger's fast path)


def _fixed_floats(m: np.ndarray) -> np.ndarray | None:
    """Decimal numbers that every row writes in the first row's layout (the same width, the
    digits in the same places, the same point, exponent letter and signs: ``%.6E``, ``%.1f``
    of a steady value), read by digit arithmetic; None when a row differs. Exact: a mantissa
    under 2**53 times or over an exact power of ten is one correctly rounded operation, so
    each value is the double :func:`float` reads (Clinger's fast path)."""
    row = m[0].tobytes()
    f = _FLOAT.match(row)
    if f is None or not (f.group(2) or f.group(3)):
        return None
    isd = (m - np.uint8(48)) <= 9
    if not (isd == isd[0]).all() or not (m[:, ~isd[0]] == m[0, ~isd[0]]).all():
        return None
    mant = [j for j in range(f.start(2), f.end(3)) if isd[0, j]]
    expo = list(range(f.start(5), f.end(5))) if f.group(5) else []
    if len(mant) > 15 or len(expo) > 3:
        return None
    d = m.astype(np.int64) - 48
    value = d[:, mant] @ (10 ** np.arange(len(mant) - 1, -1, -1, dtype=np.int64))
    e = d[:, expo] @ (10 ** np.arange(len(expo) - 1, -1, -1, dtype=np.int64)) if expo else np.zeros(len(m), np.int64)
    net = (-e if f.group(4) == b"-" else e) - len(f.group(3))
    if np.abs(net).max(initial=0) > _EXACT_POW:
        return None
    scale = 10.0 ** np.abs(net)
    out = np.where(net >= 0, value * scale, value / scale)
    return -out if f.group(1) == b"-" else out


def _values(buf: np.ndarray, start: np.ndarray, end: np.ndarray, whole: bool) -> np.ndarray | None:
    width = end - start
    w = int(width.max(initial=0))
    if w > WIDTH_MAX or (width <= 0).any():
        return None
    idx = np.arange(w)
    m = buf[start[:, None] + idx]
    if (width != w).any():
        m = np.where(idx[None, :] < width[:, None], m, np.uint8(32))
    if whole:
        if (m == m[0]).all():  # the same on every line (skipped and nan iterations, mostly)
            got = _ints(m[:1])
            return None if got is None else np.full(len(m), got[0])
        got = _ints(m)
        if got is not None:
            return got
    got = _fixed_floats(m)
    if got is not None:
        return got
    try:
        got = m.view(f"S{w}").ravel().astype(np.float64)
    except ValueError:
        return None
    return None if np.isinf(got).any() else got  # the line reader names an infinite value


def _counters(buf: np.ndarray, line_start: np.ndarray, first_bar: np.ndarray, slash_at: int,
              counter_w: int) -> np.ndarray | None:
    """The ``iteration N/`` counter of each line: the digits before the first ``/`` of its
    first field (``slash_at``: where the first line has it, ``counter_w`` bytes after the word
    "iteration"; the others are found if elsewhere)."""
    sl = line_start + slash_at
    if counter_w > 0 and (buf[sl] == ord("/")).all():  # "iteration" and the counter padded to one width
        m = buf[sl[:, None] - np.arange(counter_w, 0, -1)]
        before = buf[sl - counter_w - 1]
        got = _ints(m) if not ((before >= 48) & (before <= 57)).any() and (m[:, -1] != 32).all() else None
        if got is not None:
            return got.astype(np.int64)
    if not (buf[sl] == ord("/")).all():
        w = int((first_bar - line_start).max(initial=0))
        if w > FIELD0_MAX:
            return None
        f0 = buf[line_start[:, None] + np.arange(w)]
        slash = np.argmax((f0 == ord("/")) & (np.arange(w)[None, :] < (first_bar - line_start)[:, None]), axis=1)
        if (slash == 0).any():
            return None
        sl = line_start + slash
    rev = buf[sl[:, None] - np.arange(1, 13)]
    run = np.cumprod((rev >= 48) & (rev <= 57), axis=1)
    n = run.sum(axis=1)
    if (n == 0).any() or (n == 12).any() or (rev[np.arange(len(n)), n] != 32).any():
        return None
    return np.sum(run * (rev.astype(np.int64) - 48) * 10 ** np.arange(12), axis=1)


def parse_columns(block: bytes) -> tuple[dict[str, np.ndarray], list[tuple[int, int, str]]] | None:
    """Columns of the iteration lines in ``block`` (ends at a newline) and the other lines that
    matter, as :func:`clustertwin.track.fastmeg.parse_block` returns them; None: fall back."""
    first = block.find(b"elapsed time per iteration")
    if first < 0:
        return None
    a, b = block.rfind(b"\n", 0, first) + 1, block.find(b"\n", first)
    found = _layout(block[a:b])
    if found is None:
        return None
    bars, layout = found
    step_key = "step_ms" if "step_ms" in layout else "step_s" if "step_s" in layout else None
    if step_key is None or ("step_ms" in layout and "step_s" in layout):
        return None
    buf = np.frombuffer(block + PAD, np.uint8)
    n_bytes = len(block)
    head = buf[:n_bytes]
    marks = _marks(head)
    is_nl = head[marks] == 10
    nl, bar = marks[is_nl], marks[~is_nl]
    line_start = np.concatenate(([0], nl[:-1] + 1))
    bar_line = np.cumsum(is_nl)[~is_nl]  # the line each bar is on: the newlines before it
    count = np.bincount(bar_line, minlength=len(nl))
    metric = (count == bars) & (buf[line_start] == ord("["))
    lines = np.flatnonzero(metric)
    bar = bar[metric[bar_line]].reshape(-1, bars)
    starts = line_start[lines]
    proto_at = int(np.searchsorted(starts, a))
    if proto_at >= len(starts) or starts[proto_at] != a:
        return None
    cols = _read_columns(buf, bar, proto_at, layout)
    if cols is None:
        return None
    sep = buf[starts[:, None] + np.array([5, 8, 14, 17])]
    t = stamps(buf, starts) if (sep == np.array([45, 45, 58, 58], np.uint8)).all() else None
    slash = block.find(b"/", a, b)
    word = block.rfind(b"iteration", a, slash)
    step = _counters(buf, starts, bar[:, 0], slash - a, slash - word - 9 if word >= 0 else 0)
    step_s = cols.pop("step_ms") / 1e3 if step_key == "step_ms" else cols.pop("step_s")
    if t is None or step is None or not (step_s > 0).all():
        return None
    others = other_lines(block, np.concatenate(([0], nl + 1)), len(nl), lines)
    return None if others is None else (_shaped(t, step, step_s, cols), others)


def _read_columns(buf: np.ndarray, bar: np.ndarray, proto_at: int,
                  layout: dict[str, tuple[int, int]]) -> dict[str, np.ndarray] | None:
    """Each named column's values; None when a line's key differs from the first line's (its
    last 8 bytes and the colon, compared as one integer)."""
    out = {}
    for name, (j, off) in layout.items():
        colon = bar[:, j - 1] + off  # where the first line has the colon, after this line's bar
        sig = buf[colon[:, None] - np.arange(7, -1, -1)].view(np.uint64).ravel()
        if not (sig == sig[proto_at]).all():
            return None
        v = _values(buf, colon + 1, bar[:, j], name in INTEGERS)
        if v is None:
            return None
        out[name] = v
    return out


def _shaped(t: np.ndarray, step: np.ndarray, step_s: np.ndarray, c: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    n = len(t)
    nan_col = np.full(n, np.nan)
    zero = np.zeros(n, dtype=np.int64)
    return {"t": t, "step": step.astype(np.int64), "tokens": c.get("tokens", nan_col),
            "samples": c.get("samples", nan_col), "step_s": step_s, "loss": c.get("loss", nan_col),
            "tflops": c.get("tflops", c.get("tflops_ds", nan_col)), "mfu": nan_col, "tps_per_gpu": nan_col,
            "skipped": c.get("skipped", zero).astype(np.int64), "nan": c.get("nan", zero).astype(np.int64)}
