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
        if readers._MEG_ITER_RE.search(line) and "elapsed time per iteration" in line:
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
    reader = {"megatron": readers.read_megatron, "torchtitan": readers.read_torchtitan,
              "hf-lines": hf.read_lines, "csv": readers.read_csv}[fmt]
    yield from reader(numbered_lines(path, stats), stats)
