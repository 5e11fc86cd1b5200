"""Shared pieces of the importers: the rows-read/rejected report and safe file reading."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from clustertwin.errors import Problem, UsageError

#: refuse files larger than this (a burn-in CSV of 100k nodes is ~60 MB)
MAX_BYTES = 512 * 2**20
MAX_PROBLEMS = 20


@dataclass
class ImportReport:
    """What one importer made of one file: rows read, rows rejected and why."""

    source: str
    kind: str
    rows_read: int = 0
    rows_rejected: int = 0
    reasons: Counter = field(default_factory=Counter)

    def reject(self, reason: str) -> None:
        self.rows_rejected += 1
        self.reasons[reason] += 1

    def to_dict(self) -> dict:
        return {"source": self.source, "kind": self.kind, "rows_read": self.rows_read,
                "rows_rejected": self.rows_rejected, "reasons": dict(self.reasons)}


def read_text(path: str | Path, option: str) -> str:
    """File text, or UsageError naming the file and the option it came from."""
    p = Path(path)
    try:
        if not p.is_file():
            raise UsageError([Problem(str(p), option, "file not found")])
        if p.stat().st_size > MAX_BYTES:
            raise UsageError([Problem(str(p), option, f"larger than {MAX_BYTES // 2**20} MiB")])
        return p.read_text(encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise UsageError([Problem(str(p), option, "not UTF-8 text")]) from None
    except OSError as exc:
        raise UsageError([Problem(str(p), option, f"cannot read: {exc.strerror or exc}")]) from None


def number(text: str) -> float | None:
    """A finite float, or None for text that is not one (NaN and inf count as not numbers)."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def fail(problems: list[Problem]) -> None:
    """Raise the collected problems (at most MAX_PROBLEMS lines, then a count)."""
    if not problems:
        return
    shown = problems[:MAX_PROBLEMS]
    if len(problems) > MAX_PROBLEMS:
        shown.append(Problem(problems[0].source, "", f"... and {len(problems) - MAX_PROBLEMS} more problems"))
    raise UsageError(shown)
