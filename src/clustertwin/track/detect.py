"""Which reader a log needs, told from its content; every file streamed in bounded memory.

Detection reads the first :data:`SNIFF_BYTES`: a JSON object with ``log_history`` is a
``trainer_state.json``; Megatron's ``iteration N/ M |`` lines, torchtitan's ``step: N  loss:``
lines, logged dicts with a ``loss`` (HF Trainer) and a CSV header with ``time``, ``step`` and
``tokens`` are told apart by the first metric line found. Lines longer than
:data:`LINE_MAX` are counted as bad and skipped without being held whole in memory.

Megatron logs are cut into byte ranges of about 4 MiB ending at a newline and read a block at
a time (:func:`parse_block`: by its ``|`` columns, else by its keys, else line by line), by a
pool of processes for a large file; the other formats are read line by line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clustertwin.errors import Problem, UsageError
from clustertwin.track import hf, readers
from clustertwin.track.records import LineStats

SNIFF_BYTES = 256 * 1024
LINE_MAX = 1 << 20
FORMATS = ("megatron", "torchtitan", "hf-state", "hf-lines", "csv")
_CSV_HEADER = re.compile(r"^\s*[a-z_]+(\s*,\s*[a-z_]+)+\s*$", re.I)


def sniff(head: str) -> str | None:
    """The format of a file whose first bytes are ``head``; None when none is recognised."""
    stripped = head.lstrip()
    if stripped.startswith("{") and '"log_history"' in head:
        return "hf-state"
    first = stripped.splitlines()[0] if stripped else ""
    if _CSV_HEADER.match(first) and all(c in [h.strip().lower() for h in first.split(",")]
                                        for c in readers.CSV_COLUMNS):
        return "csv"
    for line in head.splitlines():
        if readers.MEG_ITER_RE.search(line) and ("elapsed time per iteration" in line
                                                   or "train_step_timing" in line):
            return "megatron"
        if readers._TT_RE.search(line):
            return "torchtitan"
        if "{" in line and "loss" in line and ("'loss'" in line or '"loss"' in line):
            return "hf-lines"
    return None


def numbered_lines(path: Path, stats: LineStats) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of a text file, bounded: an over-long line is skipped in pieces."""
    with path.open("r", encoding="utf-8", errors="replace", newline="") as f:
        no = 0
        while True:
            text = f.readline(LINE_MAX)
            if not text:
                return
            no += 1
            if len(text) == LINE_MAX and not text.endswith("\n"):
                while (more := f.readline(LINE_MAX)) and not more.endswith("\n"):
                    pass
                stats.reject(no, f"line longer than {LINE_MAX} characters")
                continue
            yield no, text


def open_log(path: Path) -> tuple[str, LineStats]:
    """(format, fresh LineStats) of one log file; UsageError when unreadable or unknown."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            head = f.read(SNIFF_BYTES)
    except OSError as exc:
        raise UsageError([Problem(str(path), "--log", f"a readable log file ({exc.strerror or exc})")]) from None
    fmt = sniff(head)
    if fmt is None:
        raise UsageError([Problem(str(path), "--log", "a training log: Megatron-LM/NeMo iteration lines, "
                                  "torchtitan step lines, Hugging Face Trainer logs or a CSV with "
                                  "time,step,tokens (none found in its first 256 KiB)")])
    return fmt, LineStats(str(path))


def items(path: Path, fmt: str, stats: LineStats) -> Iterator[object]:
    """Records and Resume markers of one file, streamed."""
    if fmt == "hf-state":
        if path.stat().st_size > hf.STATE_MAX_BYTES:
            raise UsageError([Problem(str(path), "--log", "a trainer_state.json under 256 MiB")])
        try:
            doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
        except ValueError as exc:
            raise UsageError([Problem(str(path), "--log", f"valid JSON ({exc})")]) from None
        yield from hf.read_state(doc, stats)
        return
    if fmt == "megatron":
        yield from megatron_blocks(path, stats)
        return
    reader = {"megatron": readers.read_megatron, "torchtitan": readers.read_torchtitan,
              "hf-lines": hf.read_lines, "csv": readers.read_csv}[fmt]
    yield from reader(numbered_lines(path, stats), stats)


#: files at least this large are parsed by a pool of worker processes, block by block
PARALLEL_MIN_BYTES = 64 * 2**20
WORKERS_MAX = 4


PROBE = 64 * 2**10  #: bytes read before a block's nominal end to find the newline it ends at


def _ranges(path: Path) -> Iterator[tuple[int, int]]:
    """``(start, end)`` byte ranges of about BLOCK bytes, each ending just after a newline (the
    file's last one where it does not end with one). A line with no newline in a whole block
    is one range ``(start, -end)``: the over-long line, skipped whole. Only a small probe
    before each cut is read here; the blocks themselves are read where they are parsed."""
    from clustertwin.track.fastmeg import BLOCK

    size = path.stat().st_size
    start = 0
    with path.open("rb") as f:
        while start < size:
            end = min(start + BLOCK, size)
            if end < size:
                cut = _last_newline(f, start, end)
                if cut is None:  # no newline in a whole block: skip to the end of that line
                    end = _next_newline(f, end, size)
                    yield start, -end
                    start = end
                    continue
                end = cut
            yield start, end
            start = end


def _last_newline(f: Any, start: int, end: int) -> int | None:
    """Just after the last newline in ``[start, end)``, None when there is none."""
    lo = max(start, end - PROBE)
    while True:
        f.seek(lo)
        i = f.read(end - lo).rfind(b"\n")
        if i >= 0:
            return lo + i + 1
        if lo == start:
            return None
        end, lo = lo, max(start, lo - PROBE * 16)


def _next_newline(f: Any, pos: int, size: int) -> int:
    f.seek(pos)
    while pos < size:
        chunk = f.read(PROBE * 16)
        i = chunk.find(b"\n")
        if i >= 0:
            return pos + i + 1
        pos += len(chunk)
    return size


def parse_range(path: str, start: int, end: int) -> tuple[int, Any, bytes | None]:
    """Read and parse one range (in a pool worker for a large file): ``(lines, parsed, block)``,
    the block's bytes only when it is to be read line by line (``parsed`` None)."""
    with open(path, "rb") as f:
        f.seek(start)
        block = f.read(end - start)
    import numpy as np

    n = int(np.count_nonzero(np.frombuffer(block, np.uint8) == 10)) + (0 if block.endswith(b"\n") else 1)
    parsed = parse_block(block) if block.endswith(b"\n") else None
    return n, parsed, None if parsed is not None else block


def parse_block(block: bytes) -> Any:
    """A block's columns by its ``|`` columns (:func:`fastcols.parse_columns`), else by its
    keys (:func:`fastmeg.parse_block`); None: read it line by line."""
    from clustertwin.track.fastcols import parse_columns
    from clustertwin.track.fastmeg import parse_block as by_keys

    return parse_columns(block) or by_keys(block)


def _parsed(path: Path, workers: int) -> Iterator[tuple[int, Any, bytes | None] | None]:
    """Each range's :func:`parse_range` result, in file order (None for an over-long line);
    with ``workers`` > 1 from a process pool holding at most 2 x workers ranges in flight, each
    worker reading its own range (bounded memory; only the columns come back)."""
    if workers <= 1:
        for start, end in _ranges(path):
            yield parse_range(str(path), start, end) if end >= 0 else None
        return
    import multiprocessing
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    from clustertwin.children import exit_with_parent, watch_args

    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=exit_with_parent,
                             initargs=watch_args(ctx)) as pool:
        window: deque = deque()
        for start, end in _ranges(path):
            window.append(pool.submit(parse_range, str(path), start, end) if end >= 0 else None)
            if len(window) >= 2 * workers:
                fut = window.popleft()
                yield fut.result() if fut is not None else None
        while window:
            fut = window.popleft()
            yield fut.result() if fut is not None else None


def megatron_blocks(path: Path, stats: LineStats, workers: int | None = None) -> Iterator[object]:
    """A Megatron log a block at a time: whole blocks as column dicts (:func:`parse_block`),
    the blocks it cannot take line by line through :func:`readers.read_megatron`. Large files
    are parsed by up to :data:`WORKERS_MAX` processes (``workers`` overrides)."""
    import os

    if workers is None:
        big = path.stat().st_size >= PARALLEL_MIN_BYTES
        workers = min(os.cpu_count() or 1, WORKERS_MAX) if big else 1
    state: dict[str, Any] = {}
    line_no = 0
    for got in _parsed(path, workers):
        if got is None:
            stats.reject(line_no + 1, f"line longer than {LINE_MAX} characters")
            line_no += 1
            continue
        n_lines, parsed, block = got
        if parsed is None:
            text = block.decode("utf-8", errors="replace").splitlines()
            yield from readers.read_megatron(enumerate(text, start=line_no + 1), stats, state)
        else:
            yield from _block_items(parsed, n_lines, line_no, stats, state)
        line_no += n_lines


def _block_items(parsed: tuple[dict, list], n_lines: int, line_no: int, stats: LineStats,
                 state: dict) -> Iterator[object]:
    """A parsed block's columns, cut at its restart lines (each read by the line reader)."""
    cols, events = parsed
    n = len(cols.get("t", ()))
    stats.read += n
    stats.other += n_lines - n - len(events)
    done = 0
    for k, i, text in [*events, (n, -1, "")]:
        if k > done:
            yield {name: v[done:k] for name, v in cols.items()}
            state["clock"], state["step"] = None, int(cols["step"][k - 1])
            done = k
        if i >= 0:
            yield from readers.read_megatron([(line_no + i + 1, text)], stats, state)
