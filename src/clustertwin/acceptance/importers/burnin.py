"""Per-GPU burn-in results: a CSV with a header row and these columns (any order, more allowed)::

    node,gpu,serial,tflops,max_temp_c,errors
    gpu0001,0,1654422012345,742.1,71,0

``node``: host name as in the inventory; ``gpu``: index 0..GPUs-1 in the node; ``serial``: the
GPU's serial (``nvidia-smi --query-gpu=serial``); ``tflops``: sustained dense GEMM TFLOP/s in the
precision the plan names (BF16 unless a ``precision`` column says otherwise); ``max_temp_c``:
hottest reading during the run, deg C; ``errors``: XID / ECC / validation errors counted.
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

    def __len__(self) -> int:
        return int(self.gpu.size)


def parse(text: str, source: str) -> tuple[BurnIn, ImportReport]:
    rep = ImportReport(source, "burn-in")
    reader = csv.reader(io.StringIO(text))
    header = [h.strip().lower() for h in next(reader, [])]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        fail([Problem(source, "--burnin", f"header lacks column(s) {', '.join(missing)}; expected "
                      f"{','.join(COLUMNS)}")])
    idx = [header.index(c) for c in COLUMNS]
    pcol = header.index("precision") if "precision" in header else None
    need = max(idx) + 1
    node, gpu, serial, vals, precs = [], [], [], [], set()
    seen: set[tuple[str, int]] = set()
    for row in reader:
        if not row or all(not c.strip() for c in row):
            continue
        rep.rows_read += 1
        if len(row) < need:
            rep.reject("too few columns")
            continue
        n, g, s, t, tmp, e = (row[i].strip() for i in idx)
        nums = [number(g), number(t), number(tmp), number(e)]
        if not n or not s or any(v is None for v in nums):
            rep.reject("empty field or not a finite number")
            continue
        if any(v < 0 for v in nums) or nums[0] != int(nums[0]) or nums[3] != int(nums[3]):
            rep.reject("negative or fractional value")
            continue
        if (n, int(nums[0])) in seen:
            rep.reject("duplicate node/gpu")
            continue
        seen.add((n, int(nums[0])))
        node.append(n)
        gpu.append(int(nums[0]))
        serial.append(s)
        vals.append(nums[1:])
        if pcol is not None and pcol < len(row):
            precs.add(row[pcol].strip().lower())
    if not node:
        fail([Problem(source, "--burnin", f"no valid rows ({rep.rows_rejected} rejected: "
                      f"{', '.join(rep.reasons) or 'file empty'})")])
    if len(precs) > 1:
        fail([Problem(source, "precision", f"one precision per file expected, found {sorted(precs)}")])
    v = np.asarray(vals, dtype=np.float64)
    b = BurnIn(source, np.asarray(node), np.asarray(gpu, dtype=np.int64), np.asarray(serial),
               v[:, 0], v[:, 1], v[:, 2].astype(np.int64), precs.pop() if precs else "bf16")
    return b, rep


def load(path: str | Path) -> tuple[BurnIn, ImportReport]:
    return parse(read_text(path, "--burnin"), str(path))
