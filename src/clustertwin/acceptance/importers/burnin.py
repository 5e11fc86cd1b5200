"""Per-GPU burn-in results: a CSV with a header row and these columns (any order, more allowed)::

    node,gpu,serial,tflops,max_temp_c,errors
    gpu0001,0,1654422012345,742.1,71,0

``node``: host name as in the inventory; ``gpu``: index 0..GPUs-1 in the node; ``serial``: the
GPU's serial (``nvidia-smi --query-gpu=serial``); ``tflops``: sustained dense GEMM TFLOP/s in the
precision the plan names (BF16 unless a ``precision`` column says otherwise); ``max_temp_c``:
hottest reading during the run, deg C; ``errors``: XID / ECC / validation errors counted;
optional ``hours``: how long the burn-in ran (graded against the plan's duration).
Rows with a missing field, a non-number, NaN/inf or a negative value are rejected and counted.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clustertwin.acceptance.importers.common import ImportReport, fail, number, read_text
from clustertwin.errors import Problem

COLUMNS = ("node", "gpu", "serial", "tflops", "max_temp_c", "errors")


@dataclass(frozen=True)
class BurnIn:
    """Accepted rows as parallel arrays (one entry per GPU)."""

    source: str
    node: np.ndarray         #: str
    gpu: np.ndarray          #: int
    serial: np.ndarray       #: str
    tflops: np.ndarray
    max_temp_c: np.ndarray
    errors: np.ndarray       #: int
    precision: str = "bf16"
    hours: np.ndarray | None = None   #: burn-in duration per GPU, when the file has an ``hours`` column

    def __len__(self) -> int:
        return int(self.gpu.size)


def _floats(col: list[str]) -> np.ndarray:
    """A column as floats, NaN where a cell is not a finite number (NumPy parses the whole
    column at once; cell by cell only when some cell is not a number at all)."""
    try:
        out = np.array(col, dtype=np.float64)
    except ValueError:
        out = np.array([v if (v := number(c)) is not None else np.nan for c in col], dtype=np.float64)
    out[~np.isfinite(out)] = np.nan
    return out


def _rows(text: str, source: str, rep: ImportReport) -> tuple[list[list[str]], list[int], int | None, list[str]]:
    try:
        return _read_rows(text, source, rep)
    except csv.Error as exc:  # NUL bytes, an unterminated quote...
        fail([Problem(source, "--burnin", f"not a CSV file: {exc}")])
        raise  # unreachable: fail() raises


def _read_rows(text: str, source: str, rep: ImportReport) -> tuple[list[list[str]], list[int], int | None, list[str]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip().lower() for h in next(reader, [])]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        fail([Problem(source, "--burnin", f"header lacks column(s) {', '.join(missing)}; expected "
                      f"{','.join(COLUMNS)}")])
    idx = [header.index(c) for c in COLUMNS]
    pcol = header.index("precision") if "precision" in header else None
    need = max(idx) + 1
    rows = []
    for row in reader:
        if not row or all(not c.strip() for c in row):
            continue
        rep.rows_read += 1
        if len(row) < need:
            rep.reject("too few columns")
            continue
        rows.append(row)
    return rows, idx, pcol, header


def _int(col: np.ndarray) -> np.ndarray:
    """Whole numbers as int64, a value past 2^62 held at 2^62 (not wrapped to a negative
    number with a NumPy warning); acceptance.bounds rejects such rows by name."""
    return np.minimum(col, 2.0**62).astype(np.int64)


def parse(text: str, source: str) -> tuple[BurnIn, ImportReport]:
    rep = ImportReport(source, "burn-in")
    rows, idx, pcol, header = _rows(text, source, rep)
    node, gcol, serial, tcol, mcol, ecol = ([r[i].strip() for r in rows] for i in idx)
    nums = np.column_stack([_floats(c) for c in (gcol, tcol, mcol, ecol)]) if rows else np.zeros((0, 4))
    node_a, serial_a = np.array(node, dtype=object), np.array(serial, dtype=object)
    empty = (node_a == "") | (serial_a == "") | np.isnan(nums).any(axis=1)
    with np.errstate(invalid="ignore"):
        odd = ~empty & ((nums < 0).any(axis=1) | (nums[:, 0] % 1 != 0) | (nums[:, 3] % 1 != 0))
    ok = ~empty & ~odd
    seen: set[tuple[str, float]] = set()
    for i in np.flatnonzero(ok):  # duplicates: the first row of a node/gpu pair wins
        key = (node[i], nums[i, 0])
        if key in seen:
            ok[i] = False
            rep.reject("duplicate node/gpu")
        seen.add(key)
    for _ in range(int(empty.sum())):
        rep.reject("empty field or not a finite number")
    for _ in range(int(odd.sum())):
        rep.reject("negative or fractional value")
    if not ok.any():
        fail([Problem(source, "--burnin", f"no valid rows ({rep.rows_rejected} rejected: "
                      f"{', '.join(rep.reasons) or 'file empty'})")])
    precs = {rows[i][pcol].strip().lower() for i in np.flatnonzero(ok) if pcol < len(rows[i])} if pcol is not None else set()
    if len(precs) > 1:
        fail([Problem(source, "precision", f"one precision per file expected, found {sorted(precs)}")])
    v = nums[ok]
    hours = None
    if "hours" in header:
        h = header.index("hours")
        hours = _floats([rows[i][h].strip() if h < len(rows[i]) else "" for i in np.flatnonzero(ok)])
    b = BurnIn(source, node_a[ok].astype(str), _int(v[:, 0]), serial_a[ok].astype(str),
               v[:, 1], v[:, 2], _int(v[:, 3]), precs.pop() if precs else "bf16", hours)
    return b, rep


def load(path: str | Path) -> tuple[BurnIn, ImportReport]:
    return parse(read_text(path, "--burnin"), str(path))
