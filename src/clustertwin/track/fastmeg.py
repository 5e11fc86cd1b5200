"""Megatron-LM iteration lines read a block at a time with numpy: the multi-GB path.

A Python loop over lines reads ~7 MB/s; a 10 GB log needs ~170 MB/s. This reader finds
every ``:`` and newline of a block (:data:`BLOCK` bytes, cut at a newline) in two array
passes, names each field by the bytes before its colon (``consumed samples:``, ``elapsed time
per iteration (ms):``, ``lm loss:``, ``number of skipped iterations:``, ...), gathers the
numbers after them into a fixed-width byte matrix and converts them all at once
(:func:`parse_numbers`). The line's leading ``[YYYY-MM-DD HH:MM:SS`` time and the
``iteration N/`` counter are read the same way.

A block is taken this way only when it checks out: every line with an elapsed time also has
a time stamp and an iteration counter, each optional field is on every such line or on none,
no "loading checkpoint" / ``datetime:`` line is in the block, and every number parses.
Otherwise :func:`parse_block` returns None and the caller reads that block line by line
with :func:`clustertwin.track.readers.read_megatron` (same results, slower).
"""

from __future__ import annotations

import numpy as np

BLOCK = 4 * 2**20
WIDTH = 32  #: bytes gathered per number (spaces before it included)
PAD = b"\n" + b" " * (WIDTH + 32)

#: field -> the bytes just before its colon (the longest unambiguous tail of the key)
KEYS = {
    "samples": b"consumed samples", "tokens": b"consumed tokens",
    "step_ms": b"elapsed time per iteration (ms)", "step_s": b"elapsed time per iteration (s)",
    "loss": b"| lm loss", "skipped": b"number of skipped iterations", "nan": b"number of nan iterations",
    "tflops": b"throughput per GPU (TFLOP/s/GPU)", "tflops_ds": b"| TFLOPs",
}


def _signatures(buf: np.ndarray, col: np.ndarray) -> np.ndarray:
    """The 8 bytes before each colon as one integer (a key's tail is matched by equality)."""
    c = np.maximum(col, 8)
    return buf[c[:, None] - np.arange(8, 0, -1)].copy().view(np.uint64).ravel()


def _tail_matches(buf: np.ndarray, col: np.ndarray, sig: np.ndarray, key: bytes) -> np.ndarray:
    """Mask of the colons in ``col`` that ``key`` directly precedes (the last 8 bytes by the
    signature, the rest checked on those colons only)."""
    tail = np.frombuffer(key[-8:].rjust(8, b" "), np.uint8).copy().view(np.uint64)[0]
    ok = (sig == tail) & (col >= len(key))
    if len(key) > 8 and ok.any():
        k = np.frombuffer(key, np.uint8)
        sub = col[ok]
        ok[ok] = (buf[sub[:, None] - np.arange(len(k), 8, -1)] == k[: len(k) - 8]).all(axis=1)
    return ok


def parse_numbers(buf: np.ndarray, start: np.ndarray) -> np.ndarray | None:
    """Floats written at ``start`` (after any spaces, up to the next space, ``|`` or newline;
    anything :func:`float` reads, ``nan`` included); None when one of them is not a number.
    The fields are laid side by side, blank-padded, and numpy's C parser reads them."""
    m = buf[start[:, None] + np.arange(WIDTH)]
    idx = np.arange(WIDTH)[None, :]
    first = np.argmax(m != 32, axis=1)
    rows = np.arange(len(m))
    nxt = m[rows, np.minimum(first + 1, WIDTH - 1)]
    if (m[rows, first] == 48).all() and ((nxt == 32) | (nxt == 124) | (nxt == 10)).all():
        return np.zeros(len(start))  # a column of zeros (skipped and nan iterations, mostly)
    sep = ((m == 32) | (m == 124) | (m == 10)) & (idx > first[:, None])
    end = np.argmax(sep, axis=1)
    if (end == 0).any() or (m[rows, first] == 124).any() or (m[rows, first] == 10).any():
        return None
    m = np.where(idx >= end[:, None], np.uint8(32), m)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            vals = np.fromstring(m.tobytes(), sep=" ")  # noqa: NPY201 - text mode is not deprecated
        except (ValueError, DeprecationWarning):
            return None
    return vals if len(vals) == len(start) and not np.isinf(vals).any() else None  # the line reader names inf


def _zoneless(buf: np.ndarray, starts: np.ndarray) -> bool:
    """Each stamp ends at its seconds or their fraction (no time zone: those the line reader reads)."""
    after = buf[starts[:, None] + 20 + np.arange(12)]
    frac = (after[:, 0] == ord(".")) | (after[:, 0] == ord(","))
    digits = (after[:, 1:] >= 48) & (after[:, 1:] <= 57)
    end = np.where(frac, 1 + np.argmin(np.concatenate([digits, np.zeros((len(after), 1), bool)], axis=1), axis=1), 0)
    last = after[np.arange(len(after)), np.minimum(end, 11)]
    return bool(((last == ord("]")) | (last == 32)).all())


def stamps(buf: np.ndarray, starts: np.ndarray) -> np.ndarray | None:
    """Epoch seconds of ``[YYYY-MM-DD HH:MM:SS`` at each position (None if one is not)."""
    if not _zoneless(buf, starts):
        return None
    off = np.array([1, 2, 3, 4, 6, 7, 9, 10, 12, 13, 15, 16, 18, 19])
    d = buf[starts[:, None] + off].astype(np.int64) - 48
    if ((d < 0) | (d > 9)).any():
        return None
    y = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
    mo, dd = d[:, 4] * 10 + d[:, 5], d[:, 6] * 10 + d[:, 7]
    hh, mi, ss = d[:, 8] * 10 + d[:, 9], d[:, 10] * 10 + d[:, 11], d[:, 12] * 10 + d[:, 13]
    y2 = y - (mo <= 2)
    era = y2 // 400
    yoe = y2 - era * 400
    doy = (153 * (mo + np.where(mo > 2, -3, 9)) + 2) // 5 + dd - 1
    days = era * 146097 + (yoe * 365 + yoe // 4 - yoe // 100 + doy) - 719468
    return (days * 86400 + hh * 3600 + mi * 60 + ss).astype(float)


def _line_starts_stamp(buf: np.ndarray, line_of: np.ndarray, line_start: np.ndarray) -> np.ndarray | None:
    """Position of the first ``[dddd-dd-dd`` stamp on each of the lines ``line_of``."""
    br = np.flatnonzero(buf == ord("["))
    ok = br + 20 < len(buf)
    br = br[ok]
    good = (buf[br + 5] == ord("-")) & (buf[br + 8] == ord("-")) & (buf[br + 14] == ord(":"))
    br = br[good]
    lines = np.searchsorted(line_start, br, side="right") - 1
    uniq, first = np.unique(lines, return_index=True)
    where = np.searchsorted(uniq, line_of)
    if len(uniq) == 0 or (where >= len(uniq)).any() or (uniq[np.minimum(where, len(uniq) - 1)] != line_of).any():
        return None
    return br[first[where]]


def parse_block(block: bytes) -> tuple[dict[str, np.ndarray], list[tuple[int, int, str]]] | None:
    """Columns of the Megatron lines in ``block`` (ends at a newline) and the other lines that
    matter (a restart or a launch time: ``(metric lines before it, line index, text)``); None:
    read the block line by line."""
    buf = np.frombuffer(block + PAD, np.uint8)
    nl = np.flatnonzero(buf[: len(block)] == 10)
    line_start = np.concatenate(([0], nl + 1))
    col = np.flatnonzero(buf[: len(block)] == ord(":"))
    sig = _signatures(buf, col)
    found: dict[str, np.ndarray] = {}
    for name, key in KEYS.items():
        hit = col[_tail_matches(buf, col, sig, key)]
        if len(hit):
            found[name] = hit
    step_key = "step_ms" if "step_ms" in found else "step_s" if "step_s" in found else None
    if step_key is None or ("step_ms" in found and "step_s" in found):
        others = None if b"iteration" in block else other_lines(block, line_start, len(nl), np.zeros(0, int))
        return None if others is None else ({}, others)
    lines = np.searchsorted(line_start, found[step_key], side="right") - 1
    for hits in found.values():
        if len(hits) != len(lines) or not np.array_equal(np.searchsorted(line_start, hits, side="right") - 1, lines):
            return None
    cols = _columns(buf, found, lines, line_start, step_key)
    others = other_lines(block, line_start, len(nl), lines)
    return None if cols is None or others is None else (cols, others)


def other_lines(block: bytes, line_start: np.ndarray, n_lines: int,
                 metric: np.ndarray) -> list[tuple[int, int, str]] | None:
    """The non-metric lines that say the job loaded a checkpoint or give a launch time; None
    when one looks like a torn iteration line (the line reader names it as a bad line)."""
    from clustertwin.track.readers import MEG_ANCHOR_RE, MEG_ITER_RE, RESUME_RE

    is_metric = np.zeros(n_lines, dtype=bool)
    is_metric[metric] = True
    out = []
    before = np.cumsum(is_metric)
    for i in np.flatnonzero(~is_metric):
        text = block[line_start[i]:line_start[i + 1]].decode("utf-8", errors="replace")
        if MEG_ITER_RE.search(text):
            return None
        if RESUME_RE.search(text) or MEG_ANCHOR_RE.search(text):
            out.append((int(before[i]), int(i), text))
    return out


def _columns(buf: np.ndarray, found: dict[str, np.ndarray], lines: np.ndarray,
             line_start: np.ndarray, step_key: str) -> dict[str, np.ndarray] | None:
    stamp = _line_starts_stamp(buf, lines, line_start)
    slash = np.flatnonzero(buf == ord("/"))
    first = np.searchsorted(slash, line_start[lines])
    if stamp is None or (first >= len(slash)).any():
        return None
    sl = slash[first]
    if (sl > found[step_key]).any():
        return None
    t = stamps(buf, stamp)
    rev = buf[sl[:, None] - np.arange(1, 13)]          # the bytes before the slash, backwards
    run = np.cumprod((rev >= 48) & (rev <= 57), axis=1)   # the counter's digits, up to the slash
    n = run.sum(axis=1)
    if t is None or (n == 0).any() or (n == 12).any() or (rev[np.arange(len(n)), n] != 32).any():
        return None
    step = np.sum(run * (rev.astype(np.int64) - 48) * 10 ** np.arange(12), axis=1)
    out = {"t": t, "step": step}
    n = len(lines)
    for name in ("samples", "tokens", "step_ms", "step_s", "loss", "skipped", "nan", "tflops", "tflops_ds"):
        if name in found:
            v = parse_numbers(buf, found[name] + 1)
            if v is None:
                return None
            out[name] = v
    nan_col = np.full(n, np.nan)
    zero = np.zeros(n, dtype=np.int64)
    step_s = out["step_ms"] / 1e3 if "step_ms" in out else out["step_s"]
    return {"t": out["t"], "step": out["step"].astype(np.int64), "tokens": out.get("tokens", nan_col),
            "samples": out.get("samples", nan_col), "step_s": step_s, "loss": out.get("loss", nan_col),
            "tflops": out.get("tflops", out.get("tflops_ds", nan_col)), "mfu": nan_col, "tps_per_gpu": nan_col,
            "skipped": out.get("skipped", zero).astype(np.int64), "nan": out.get("nan", zero).astype(np.int64)}
