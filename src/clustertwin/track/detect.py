"""Which reader a log needs, told from its content; every file streamed line by line.

Detection reads the first :data:`SNIFF_BYTES`: a JSON object with ``log_history`` is a
``trainer_state.json``; Megatron's ``iteration N/ M |`` lines, torchtitan's ``step: N  loss:``
lines, logged dicts with a ``loss`` (HF Trainer) and a CSV header with ``time``, ``step`` and
``tokens`` are told apart by the first metric line found. Lines longer than
:data:`LINE_MAX` are counted as bad and skipped without being held whole in memory.
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


def _blocks(path: Path, stats: LineStats) -> Iterator[tuple[bytes, int, int]]:
    """``(block, first line number - 1, lines)``: the file cut at newlines into ~BLOCK bytes."""
    from clustertwin.track.fastmeg import BLOCK

    line_no, rest = 0, b""
    with path.open("rb") as f:
        while True:
            data = f.read(BLOCK)
            if not data and not rest:
                return
            block = rest + data
            cut = block.rfind(b"\n") + 1 if data else len(block)
            if cut == 0 and len(block) > LINE_MAX:  # no newline in a whole block: an over-long line
                stats.reject(line_no + 1, f"line longer than {LINE_MAX} characters")
                rest = b""
                continue
            block, rest = block[:cut], block[cut:]
            if block:
                n = block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
                yield block, line_no, n
                line_no += n


def _parsed(blocks: Iterator[tuple[bytes, int, int]], workers: int) -> Iterator[tuple[bytes, int, int, Any]]:
    """Each block with its :func:`fastmeg.parse_block` result, in order; with ``workers`` > 1
    parsed by a process pool holding at most 2 x workers blocks in flight (bounded memory)."""
    from clustertwin.track.fastmeg import parse_block

    if workers <= 1:
        for block, no, n in blocks:
            yield block, no, n, parse_block(block) if block.endswith(b"\n") else None
        return
    import multiprocessing
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        window: deque = deque()
        for block, no, n in blocks:
            window.append((block, no, n, pool.submit(parse_block, block) if block.endswith(b"\n") else None))
            if len(window) >= 2 * workers:
                b, no_, n_, fut = window.popleft()
                yield b, no_, n_, fut.result() if fut is not None else None
        while window:
            b, no_, n_, fut = window.popleft()
            yield b, no_, n_, fut.result() if fut is not None else None


def megatron_blocks(path: Path, stats: LineStats, workers: int | None = None) -> Iterator[object]:
    """A Megatron log a block at a time (:mod:`.fastmeg`): whole blocks as column dicts, the
    blocks it cannot take line by line through :func:`readers.read_megatron`. Large files are
    parsed by up to :data:`WORKERS_MAX` processes (``workers`` overrides)."""
    import os

    if workers is None:
        big = path.stat().st_size >= PARALLEL_MIN_BYTES
        workers = min(os.cpu_count() or 1, WORKERS_MAX) if big else 1
    state: dict[str, Any] = {}
    for block, line_no, n_lines, parsed in _parsed(_blocks(path, stats), workers):
        if parsed is None:
            text = block.decode("utf-8", errors="replace").splitlines()
            yield from readers.read_megatron(enumerate(text, start=line_no + 1), stats, state)
        else:
            yield from _block_items(parsed, n_lines, line_no, stats, state)


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
