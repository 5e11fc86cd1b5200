"""Grade what was measured against what the twin expects: every GPU, node, nccl-tests run and
fabric link gets pass / warn / fail; GPUs get a bin; the report ends in actions.

Rules (bands from ``microbench.yaml``):

* GPU: GEMM TFLOP/s against the plan's ``gemm_<precision>`` band; any burn-in error, or a
  temperature above the plan's ceiling, fails it; a DCGM Fail on it fails it, a DCGM Warn warns.
* nccl-tests run: bus bandwidth at its largest message against the model's figure for the
  same op, GPU count and size (intra-node all_reduce against NVLink SHARP where the hardware
  has it); wrong results fail it.
* node: the worst of its GPUs, its DCGM run and its single-node nccl-tests runs; its fabric
  links that are degraded or missing warn it (a cable to re-seat, not a node to drain).
* link: ok, degraded, missing, extra or crossed (:mod:`clustertwin.acceptance.wiring`).

Actions: drain every failing node; re-seat or replace every degraded or missing cable; swap
the ends of every crossed pair; trace every extra link; re-test warned nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clustertwin.acceptance.importers.burnin import BurnIn
from clustertwin.acceptance.importers.dcgm import DcgmRun
from clustertwin.acceptance.importers.nccl import NcclRun
from clustertwin.acceptance.model import AcceptanceModel, constants
from clustertwin.acceptance.plan import AcceptancePlan, band, grade_value
from clustertwin.acceptance.wiring import WiringResult

_WORST = {"pass": 0, "untested": 0, "warn": 1, "fail": 2}


def worst(*grades: str) -> str:
    return max(grades, key=lambda g: _WORST[g]) if grades else "pass"


@dataclass(frozen=True)
class GpuGrades:
    """Per-GPU arrays in burn-in row order."""

    node: np.ndarray
    gpu: np.ndarray
    serial: np.ndarray
    tflops: np.ndarray
    ratio: np.ndarray          #: measured / expected GEMM
    grade: np.ndarray          #: pass | warn | fail
    bin: np.ndarray            #: A | B | C | R
    reason: np.ndarray         #: "" or why it is not a pass


@dataclass(frozen=True)
class HealthReport:
    expected_gemm_tflops: float
    precision: str
    gpus: GpuGrades | None
    nodes: dict[str, tuple[str, tuple[str, ...]]]       #: node -> (grade, reasons)
    nccl: tuple[dict[str, Any], ...]
    dcgm: tuple[dict[str, Any], ...]
    wiring: WiringResult | None
    imports: tuple[dict[str, Any], ...]
    measured: dict[str, Any] = field(default_factory=dict)
    coverage: dict[str, Any] = field(default_factory=dict)   #: see acceptance.coverage
    curves: tuple[dict[str, Any], ...] = ()     #: see acceptance.curves

    def drain(self) -> list[str]:
        return sorted(n for n, (g, _) in self.nodes.items() if g == "fail")

    def retest(self) -> list[str]:
        return sorted(n for n, (g, _) in self.nodes.items() if g == "warn")

    def stragglers(self, limit: int = 50) -> list[dict[str, Any]]:
        """GPUs below the pass edge, slowest first, with their serials."""
        g = self.gpus
        if g is None:
            return []
        idx = np.flatnonzero(g.grade != "pass")
        idx = idx[np.argsort(g.ratio[idx], kind="stable")][:limit]
        return [{"node": str(g.node[i]), "gpu": int(g.gpu[i]), "serial": str(g.serial[i]),
                 "tflops": float(g.tflops[i]), "ratio": round(float(g.ratio[i]), 4),
                 "grade": str(g.grade[i]), "reason": str(g.reason[i])} for i in idx]

    def actions(self) -> list[str]:
        out = []
        if d := self.drain():
            out.append(f"drain these {len(d)} node(s): {', '.join(d)}")
        w = self.wiring
        if w is not None:
            cables = [k for k, *_ in w.degraded] + list(w.missing)
            if cables:
                out.append(f"re-seat or replace these {len(cables)} cable(s): "
                           + "; ".join(_fmt(k) for k in cables))
            if w.crossed:
                out.append(f"swap the ends of these {len(w.crossed)} crossed cable pair(s): "
                           + "; ".join(f"{_fmt(a)} / {_fmt(b)}" for a, b in w.crossed))
            if w.extra:
                out.append(f"trace these {len(w.extra)} link(s) not in the cabling map: "
                           + "; ".join(_fmt(k) for k in w.extra))
        if r := self.retest():
            out.append(f"re-test these {len(r)} node(s) in the warn band: {', '.join(r)}")
        if u := [r["source"] for r in self.nccl if r["grade"] == "untested"]:
            out.append(f"could not grade {len(u)} nccl-tests result(s) (collective or GPU count "
                       f"not recognised; see check.json): {', '.join(u)}")
        return out or ["nothing to do: every graded node and link passed"]


def _fmt(k: str) -> str:
    return " <-> ".join(k.split("|", 1))


def grade_gpus(b: BurnIn, plan: AcceptancePlan, dcgm_by_gpu: dict[tuple[str, int], str]) -> GpuGrades:
    check = plan.find(f"gemm_{b.precision}") or plan.find("gemm_bf16")
    expected = check.expected
    ratio = b.tflops / expected
    p, w = band("gemm")
    grade = np.where(ratio >= p, "pass", np.where(ratio >= w, "warn", "fail")).astype(object)
    reason = np.full(ratio.size, "", dtype=object)
    for i in np.flatnonzero(ratio < p):
        reason[i] = f"GEMM {b.tflops[i]:.0f} TFLOP/s = {ratio[i]:.2f} of expected"
    hot = b.max_temp_c > plan.max_temp_c
    err = b.errors > 0
    for mask, why in ((hot, f"hotter than {plan.max_temp_c:g} C"), (err, "burn-in errors")):
        grade[mask] = "fail"
        reason[mask] = [f"{r}; {why}".lstrip("; ") for r in reason[mask]]
    if b.hours is not None:  # a burn-in cut short (or with no duration) is not yet evidence
        short = ~(b.hours >= plan.burnin_hours)
        grade[short & (grade == "pass")] = "warn"
        reason[short] = [f"{r}; burn-in shorter than {plan.burnin_hours:g} h".lstrip("; ") for r in reason[short]]
    bad = {k: st for k, st in dcgm_by_gpu.items() if st in ("fail", "warn")}
    if bad:
        row = {key: i for i, key in enumerate(zip(b.node.tolist(), b.gpu.tolist(), strict=True))}
        for key, st in bad.items():
            i = row.get(key)
            if i is not None:
                grade[i] = worst(grade[i], st)
                reason[i] = f"{reason[i]}; DCGM {st}".lstrip("; ")
    a_edge = float(constants()["bins"]["a"])
    bins = np.where(grade == "fail", "R", np.where(ratio >= a_edge, "A", np.where(ratio >= p, "B", "C")))
    bins = np.where((grade != "fail") & (ratio < w), "R", bins)
    return GpuGrades(b.node, b.gpu, b.serial, b.tflops, ratio, grade.astype(str), bins, reason.astype(str))


def grade_nccl(run: NcclRun, model: AcceptanceModel, gpn: int, memo: dict | None = None) -> dict[str, Any]:
    size, bw = run.peak()
    n = run.nranks or gpn * max(1, len(run.hosts))
    d = run.to_dict()
    if run.op not in ("all_reduce", "all_gather", "alltoall") or size <= 0 or n < 2:
        return {**d, "grade": "untested", "expected_gbps": None, "ratio": None,
                "note": f"no model figure for op {run.op!r} on {n} GPUs"}
    # NCCL picks NVLink SHARP for an intra-node all_reduce where the switch has it, unless the
    # run pinned another algorithm (NCCL_ALGO=Ring / Tree echoed in the log)
    nvls = n <= model.system.nvlink_domain and run.op == "all_reduce" and (not run.algo or "nvls" in run.algo)
    key = (run.op, n, size, nvls and model.has_nvls)
    memo = {} if memo is None else memo
    if key not in memo:
        memo[key] = float(model.busbw(run.op, n, size, nvls=key[3]))
    exp = memo[key]
    kind = "nvlink" if n <= model.system.nvlink_domain else "network"
    p, w = band(kind)
    g = grade_value(bw / exp, p, w)
    if run.wrong:
        g = "fail"
    return {**d, "gpus": n, "grade": g, "expected_gbps": round(exp, 2), "ratio": round(bw / exp, 4)}


def _node_reasons(gg: GpuGrades | None, dcgm: list[DcgmRun], nccl: list[dict[str, Any]],
                  wiring: WiringResult | None) -> dict[str, list[tuple[str, str]]]:
    reasons: dict[str, list[tuple[str, str]]] = {}
    if gg is not None:
        for i in np.flatnonzero(gg.grade != "pass"):
            reasons.setdefault(str(gg.node[i]), []).append(
                (str(gg.grade[i]), f"GPU {int(gg.gpu[i])} ({gg.serial[i]}): {gg.reason[i]}"))
        for n in np.unique(gg.node):
            reasons.setdefault(str(n), [])
    for run in dcgm:
        reasons.setdefault(run.node, [])
        for g, test, st, warn in run.findings:
            reasons[run.node].append((st, f"DCGM {test} {st} on GPU {g}: {warn}"[:200]))
    for r in nccl:
        if len(r["hosts"]) == 1:
            host = r["hosts"][0]
            reasons.setdefault(host, [])
            if r["grade"] in ("warn", "fail"):
                reasons[host].append((r["grade"], f"{r['op']} busbw {r['busbw_at_largest_gbps']:.0f} GB/s "
                                      f"= {r['ratio']:.2f} of expected {r['expected_gbps']:.0f}"))
    if wiring is not None:
        for host, count in wiring.nodes_affected.items():
            reasons.setdefault(host, []).append(("warn", f"{count} fabric link(s) degraded or missing"))
    return reasons


@dataclass(frozen=True)
class Imported:
    """What the operator imported: the burn-in table, the DCGM and nccl-tests runs, the
    fabric's wiring check against the design, and one report per file read."""

    burnin: BurnIn | None
    dcgm: list[DcgmRun]
    nccl: list[NcclRun]
    wiring: WiringResult | None
    imports: list[dict[str, Any]]


def health(plan: AcceptancePlan, model: AcceptanceModel, got: Imported,
           nodes: list[str] | None = None) -> HealthReport:
    """Grade everything imported. ``nodes``: the designed node names (untested ones listed)."""
    burnin, dcgm, nccl, wiring, imports = got.burnin, got.dcgm, got.nccl, got.wiring, got.imports
    dcgm_by_gpu = {(r.node, g): s for r in dcgm for g, s in r.gpu_status.items()}
    gg = grade_gpus(burnin, plan, dcgm_by_gpu) if burnin is not None and len(burnin) else None
    memo: dict = {}
    graded = [grade_nccl(r, model, plan.gpus_per_node, memo) for r in nccl]
    reasons = _node_reasons(gg, dcgm, graded, wiring)
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for n in nodes or []:
        out[n] = ("untested", ())
    for n, rs in reasons.items():
        out[n] = (worst("pass", *(g for g, _ in rs)), tuple(t for _, t in rs))
    prec = burnin.precision if burnin is not None else "bf16"
    check = plan.find(f"gemm_{prec}") or plan.find("gemm_bf16")
    rep = HealthReport(check.expected if check else 0.0, prec, gg, out, tuple(graded),
                       tuple(r.to_dict() for r in dcgm), wiring, tuple(imports))
    from clustertwin.acceptance.measured import measured_figures

    return HealthReport(**{**rep.__dict__, "measured": measured_figures(rep, plan)})
