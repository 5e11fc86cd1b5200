"""Predicted vs published: every row of the calibration table ``perf/data/training-runs-calibration.csv``
(package data, with its sources in ``perf/data/SOURCES.md``).

Each row becomes a :class:`CalRow` (model shape, job, hardware, published parallelism). The
row's published figure is turned into a comparable prediction:

* ``derived_step_time_s`` or "seconds per iteration": step time;
* "TFLOP/s per GPU" without a derived step time (Llama 3): model TFLOP/s per GPU on the MFU
  basis of :func:`clustertwin.perf.flops.model_flops_per_token`;
* GPU-hours (whole runs: DeepSeek-V3 per trillion tokens, Llama 2 70B for 2T tokens): GPU count
  x tokens / tokens-per-second. Whole-run figures include downtime and ramp-up, so they are
  "loose" anchors (±35%).

Rows that publish no GPU count are run on :data:`DEFAULT_GPUS` GPUs. Published parallelism is
pinned; micro-batch and interleaving stay searched where the row leaves them blank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from clustertwin.errors import Problem, UsageError
from clustertwin.perf.costmodel import Job
from clustertwin.perf.csvrows import (
    gpu_name,
    mla_heads,
    moe_layout,
    precision_of,
    row_stack,
    stack_name,
)
from clustertwin.perf.flops import Shape, model_flops_per_token
from clustertwin.perf.search import SearchResult, search
from clustertwin.perf.stacks import profile_of
from clustertwin.perf.system import System, default_node, system_from_catalog

CSV_NAME = "training-runs-calibration.csv"
#: the published-runs tables shipped in the package (``calibration``, ``--cv``, ``estimate``)
DATA_DIR = Path(__file__).parent / "data"
PUBLISHED_NAME = "published_runs.csv"
HELDOUT_NAME = "heldout_runs.csv"
DEFAULT_GPUS = 2048  # Llama 2 70B: GPU count not published; GPU-hours barely depend on it
LOOSE_TOLERANCE = 0.35
MEMORY_TOLERANCE = 0.05  #: target accuracy of the memory model against published peaks
#: published keys left to the search, in turn, when the search cannot build the published plan
#: (interleaving or a micro-batch its rules reject); tp, pp, dp, cp and ep stay pinned
RELAX_ORDER = ("virtual_stages", "micro_batch", "zero", "sequence_parallel", "recompute")
STRICT_ROW_TOLERANCE = 0.20
STRICT_MEAN_TOLERANCE = 0.10


def find_csv(name: str = CSV_NAME) -> Path:
    """The packaged table ``name`` (default: the calibration CSV); the same file from any
    working directory, installed or in a checkout."""
    return DATA_DIR / name


@lru_cache(maxsize=8)
def _packaged_rows(name: str) -> tuple[CalRow, ...]:
    return tuple(_checked_rows(find_csv(name)))


def packaged_rows(name: str = CSV_NAME) -> list[CalRow]:
    """Rows of a packaged table, parsed and checked once per process."""
    return list(_packaged_rows(name))


@dataclass(frozen=True)
class CalRow:
    id: str
    source: str
    shape: Shape
    job: Job
    gpu: str
    gpus: int
    pinned: dict[str, Any]
    measured_value: float
    measured_unit: str
    kind: str  #: step | tflops | gpu_hours_per_t | gpu_hours
    target: float  #: published figure in the compared unit
    tokens: float = 0.0
    loose: bool = False
    notes: str = ""
    stack: str = "megatron"  #: software stack id or alias (catalog kind ``stack``)
    memory_gib: float = 0.0  #: published peak memory per GPU, GiB (0: not published)


@dataclass
class CalResult:
    row: CalRow
    predicted: float
    published: float
    step_time_s: float
    plan: dict[str, Any]
    fits: bool
    memory_gib: float
    metrics: dict[str, float] = field(default_factory=dict)
    #: the plan fits only within the memory model's tolerance (MEMORY_TOLERANCE over the HBM)
    tight: bool = False

    @property
    def error(self) -> float:
        return self.predicted / self.published - 1.0


def _int(x: str) -> int | None:
    x = (x or "").strip()
    return int(float(x)) if x else None


def parse_rows(path: Path) -> list[dict[str, str]]:
    """The table's rows (UsageError when it is not a UTF-8 CSV with the needed columns)."""
    from clustertwin.perf.calcheck import read_table

    return read_table(path)


def _target(r: dict[str, str], unit: str, value: float, seq: int) -> tuple[str, float, bool, float]:
    """(kind, target in the compared unit, loose, tokens) of a row's published figure."""
    derived = (r.get("derived_step_time_s") or "").strip()
    if derived:
        return "step", float(derived), False, 0.0
    if unit.startswith("seconds per iteration"):
        return "step", value, False, 0.0
    if unit.lower().startswith("tokens/s") and _int(r["gpus"]):
        # tokens per second per GPU (or for the whole job) -> step time of the global batch
        tps = value * (int(r["gpus"]) if "gpu" in unit.lower() else 1)
        return "step", int(r["global_batch_seqs"]) * seq / tps, False, 0.0
    if unit.startswith("TFLOP/s"):
        return "tflops", value, True, 0.0
    if "per trillion tokens" in unit:
        return "gpu_hours_per_t", value, True, 1e12
    if "GPU-hours" in unit:
        mo = re.search(r"for ([0-9.]+)T tokens", unit)
        return "gpu_hours", value, True, float(mo.group(1)) * 1e12 if mo else 1e12
    raise ValueError(f"row {r['id']}: unknown measured_unit {unit!r}")


def make_row(r: dict[str, str]) -> CalRow:
    mlp = r["mlp"]
    kw: dict[str, Any] = {}
    if "moe" in mlp:
        kw = moe_layout(r.get("notes", "")) or {}
        if not kw:
            raise ValueError(f"row {r['id']}: MoE layout not found in notes")
    shape = Shape(
        layers=int(r["layers"]),
        hidden=int(r["hidden"]),
        ffn=int(r["ffn_hidden"]),
        heads=int(r["heads"]),
        kv_heads=int(r["kv_heads"]),
        vocab=int(r["vocab"]),
        swiglu=mlp.startswith("swiglu"),
        head_size=_int(r.get("head_dim", "")) or 0,
        **mla_heads(r.get("notes", "")),
        **kw,
    )
    seq = int(r["seq_len"])
    gdt = (r.get("grad_dtype") or "").strip()
    gbytes = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0}.get(gdt) if gdt else None
    job = Job(shape, seq, int(r["global_batch_seqs"]), precision_of(r.get("precision", "")), gbytes)
    pinned: dict[str, Any] = {}
    for key in ("tp", "pp", "dp", "cp", "ep", "virtual_stages", "micro_batch"):
        val = _int(r.get(key, ""))
        if val is not None:
            pinned[key] = val
    rc = (r.get("recompute") or "").strip().lower()
    if rc:
        pinned["recompute"] = {"true": "full", "false": "none", "yes": "full", "no": "none"}.get(
            rc, rc
        )
    if (r.get("zero") or "").strip():
        pinned["zero"] = int(float(r["zero"]))
    if r.get("sequence_parallel"):
        pinned["sequence_parallel"] = r["sequence_parallel"].strip().lower() == "true"
    gpus = _int(r["gpus"]) or DEFAULT_GPUS
    if not _int(r["gpus"]):  # nothing published: only the per-GPU shape is meaningful
        pinned = {k: v for k, v in pinned.items() if k in ("cp", "ep")}
    unit = r["measured_unit"]
    value = float(r["measured_value"])
    kind, target, loose, tokens = _target(r, unit, value, seq)
    mem = (r.get("memory_gib") or "").strip()
    return CalRow(
        memory_gib=float(mem) if mem else 0.0,
        stack=row_stack(r),
        id=r["id"],
        source=r["source"],
        shape=shape,
        job=job,
        gpu=r["gpu"],
        gpus=gpus,
        pinned=pinned,
        measured_value=value,
        measured_unit=unit,
        kind=kind,
        target=target,
        tokens=tokens,
        loose=loose,
        notes=r.get("notes", ""),
    )


def load_rows(path: Path | None = None) -> list[CalRow]:
    """Rows of the user's table ``path``, else of the packaged calibration CSV."""
    return _checked_rows(path) if path is not None else packaged_rows()


def _checked_rows(path: Path) -> list[CalRow]:
    from clustertwin.perf.calcheck import table_problems

    rows = parse_rows(path)
    problems = table_problems(path, rows)
    if problems:
        raise UsageError(problems)
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            out.append(make_row(r))
        except ValueError as exc:  # a unit or MoE layout the model does not read
            problems.append(Problem(str(path), f"row {i}", str(exc)))
    if problems:
        raise UsageError(problems)
    return out


def row_system(catalog: Any, row: CalRow) -> System:
    gpu = gpu_name(catalog, row.gpu)
    node_id = default_node(catalog, gpu)
    node = catalog.node(node_id)
    fabrics = [
        f
        for f in catalog.all("fabric")
        if f.technology == "infiniband" and f.link_gbps == node.compute_nic_gbps
    ]
    fabric_id = fabrics[0].id if fabrics else "ib-ndr"
    return system_from_catalog(catalog, gpu, node_id, fabric_id)


def predicted_figure(row: CalRow, metrics: dict[str, float]) -> float:
    step = metrics["step_time_s"]
    tps = metrics["tokens_per_s"]
    if row.kind == "step":
        return step
    if row.kind == "tflops":
        return model_flops_per_token(row.shape, row.job.seq) * tps / row.gpus / 1e12
    return row.gpus * row.tokens / tps / 3600.0


def run_row(
    catalog: Any,
    row: CalRow,
    pinned: dict[str, Any] | None = None,
    system: System | None = None,
    stack: Any = None,
) -> tuple[CalResult, SearchResult]:
    """Best plan for the row under ``pinned`` (default: the published parallelism); ``system``
    and ``stack`` (a StackProfile) replace the catalog's where given (fitting)."""
    sys = system or row_system(catalog, row)
    if row.memory_gib * 2**30 > sys.hbm_bytes:
        # the run held more than the catalog part has: its GPU was a larger-memory variant
        # (torchtitan's 96 GB H100s); judge the plan against what it demonstrably had, within
        # the memory model's 5% accuracy target
        sys = replace(sys, hbm_bytes=row.memory_gib * 2**30 * (1 + MEMORY_TOLERANCE))
    if stack is None:
        stack = profile_of(catalog, stack_name(catalog, row.stack), sys.generation)
    job = replace(row.job, stack=stack)
    want = row.pinned if pinned is None else pinned
    res = search(job, sys, row.gpus, want)
    for key in RELAX_ORDER:  # a published plan the search cannot build: free its details
        if res.size or key not in want:
            continue
        want = {k: v for k, v in want.items() if k != key}
        res = search(job, sys, row.gpus, want)
    ranked = res.ranked()
    fits, tight = ranked.size > 0, False
    if fits:
        i = int(ranked[0])
    elif res.size:
        # the run ran: a plan within the memory model's accuracy of the HBM counts as fitting
        # (flagged ``tight``); otherwise the fastest plan, reported as not fitting
        step = res.metrics["step_time_s"]
        near = np.flatnonzero(res.metrics["memory_bytes"] <= sys.hbm_bytes * (1 + MEMORY_TOLERANCE))
        fits = tight = near.size > 0
        i = int(near[np.argmin(step[near])]) if tight else int(np.argmin(step))
    else:
        raise ValueError(f"row {row.id}: no plan can be built")
    met = res.row(i)
    return CalResult(
        row=row,
        predicted=predicted_figure(row, met),
        published=row.target,
        step_time_s=met["step_time_s"],
        plan=res.plan(i),
        fits=fits,
        memory_gib=met["memory_bytes"] / 2**30,
        metrics=met,
        tight=tight,
    ), res


def run_all(catalog: Any, rows: list[CalRow] | None = None) -> list[CalResult]:
    rows = rows if rows is not None else load_rows()
    return [run_row(catalog, r)[0] for r in rows]


def run_table(catalog: Any, path: Path) -> tuple[list[CalResult], list[str]]:
    """Every row of a table that can be read and run, and one line per row that cannot (a
    unit, GPU or layout the model does not know) instead of stopping at the first."""
    from clustertwin.errors import UserError
    from clustertwin.perf.calcheck import row_problems

    results, skipped = [], []
    for i, r in enumerate(parse_rows(path), start=2):
        bad = row_problems(r)
        if bad:
            skipped.append(f"{path}: row {i} ({r.get('id') or '?'}): {'; '.join(bad)}")
            continue
        try:
            results.append(run_row(catalog, make_row(r))[0])
        except (ValueError, KeyError, UserError) as exc:
            msg = str(exc)
            msg = msg if msg.startswith("row ") else f"row {r.get('id', '?')}: {msg}"
            skipped.append(f"{path}: {msg}")
    return results, skipped


def summary(results: list[CalResult]) -> dict[str, float]:
    strict = [abs(r.error) for r in results if not r.row.loose]
    loose = [abs(r.error) for r in results if r.row.loose]
    return {
        "strict_rows": len(strict),
        "strict_mean_abs_error": float(np.mean(strict)) if strict else float("nan"),
        "strict_max_abs_error": float(np.max(strict)) if strict else float("nan"),
        "loose_rows": len(loose),
        "loose_max_abs_error": float(np.max(loose)) if loose else float("nan"),
        "all_mean_abs_error": float(np.mean(strict + loose)) if results else float("nan"),
    }
