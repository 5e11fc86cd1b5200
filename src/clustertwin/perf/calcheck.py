"""Checks of a published-runs / calibration table a user gives (``calibration --csv FILE``)
before any row reaches the cost model: a NaN, a zero or a 10^308 in a shape, layout or
measured column used to end in a traceback (ZeroDivisionError, a NaN quantile) or a quiet
"nan%" line. One message per bad cell, naming the row and the column and what was expected."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from clustertwin.errors import Problem, UsageError
from clustertwin.quoting import IDENT_PATTERN, IDENT_RE

#: columns every row needs (the rest are optional)
REQUIRED = ("id", "source", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "mlp",
            "seq_len", "gpu", "global_batch_seqs", "measured_value", "measured_unit")
#: whole-number columns and the largest value each may hold (far above any published run)
_WHOLE = {"layers": 10_000, "hidden": 1_000_000, "ffn_hidden": 10_000_000, "heads": 100_000,
          "kv_heads": 100_000, "vocab": 100_000_000, "seq_len": 100_000_000,
          "global_batch_seqs": 1_000_000_000}
#: optional whole-number columns (empty = not published)
_OPTIONAL_WHOLE = {"gpus": 1_048_576, "tp": 1_048_576, "pp": 1_048_576, "dp": 1_048_576,
                   "cp": 1_048_576, "ep": 1_048_576, "virtual_stages": 10_000,
                   "micro_batch": 1_000_000, "head_dim": 100_000}
#: optional positive real columns and their upper bound
_OPTIONAL_REAL = {"derived_step_time_s": 1e7, "memory_gib": 1e6}
MAX_ROWS = 100_000


def _whole(text: str, limit: int) -> str | None:
    """None when ``text`` is a whole number from 1 to ``limit``, else what was expected."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (1 <= v <= limit) or v != int(v):
        return f"expected a whole number from 1 to {limit:,}, got {text!r}"
    return None


def _real(text: str, limit: float) -> str | None:
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (0 < v <= limit):  # NaN and inf fail too
        return f"expected a finite number above 0 and at most {limit:g}, got {text!r}"
    return None


def row_problems(r: dict[str, str | None]) -> list[str]:
    """``column: what was expected`` for every bad cell of one row (empty when the row is fine)."""
    out: list[str] = []
    for col in REQUIRED:
        if not (r.get(col) or "").strip():
            out.append(f"{col}: empty (required)")
    for col in ("id", "gpu"):  # both reach tables, messages and catalog look-ups
        text = (r.get(col) or "").strip()
        if text and not IDENT_RE.fullmatch(text):
            out.append(f"{col}: expected an identifier ({IDENT_PATTERN})")
    checks = [(c, _whole, lim, True) for c, lim in _WHOLE.items()]
    checks += [(c, _whole, lim, False) for c, lim in _OPTIONAL_WHOLE.items()]
    checks += [(c, _real, lim, False) for c, lim in _OPTIONAL_REAL.items()]
    checks.append(("measured_value", _real, 1e15, True))
    for col, check, limit, _required in checks:
        text = (r.get(col) or "").strip()
        if not text:
            continue  # a missing required cell is reported above
        why = check(text, limit)
        if why:
            out.append(f"{col}: {why}")
    if r.get(None):  # csv.DictReader puts cells past the header under None
        out.append(f"more cells than the header has columns ({len(r[None])} extra)")
    return out


def read_table(path: Path) -> list[dict[str, str]]:
    """The rows of a table as dicts; UsageError when it is not a UTF-8 CSV with the columns."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            rows = []
            for row in reader:
                rows.append(row)
                if len(rows) > MAX_ROWS:
                    raise UsageError([Problem(str(path), "", f"more than {MAX_ROWS:,} rows")])
    except UnicodeDecodeError as exc:
        raise UsageError([Problem(str(path), "", f"not UTF-8 text (byte {exc.start})")]) from None
    except (csv.Error, OSError) as exc:
        raise UsageError([Problem(str(path), "", f"not a readable CSV table: {exc}")]) from None
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise UsageError([Problem(str(path), "header", f"lacks column(s) {', '.join(missing)}; "
                                  f"expected at least {','.join(REQUIRED)}")])
    return rows


def table_problems(path: Path, rows: list[dict[str, str]]) -> list[Problem]:
    """One Problem per bad cell of any row (``row N (id)`` as the key)."""
    return [Problem(str(path), f"row {i} ({(r.get('id') or '?').strip()})", why)
            for i, r in enumerate(rows, start=2) for why in row_problems(r)]
