"""The health report as data (``check.json``) and terminal rows, and the acceptance plan as a
table. Pure functions: they return dicts and strings; the CLI writes them. The pages
(``check.html``, the recalibrated plan.html) are drawn upstairs, in
:mod:`clustertwin.report.views.acceptance`."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from clustertwin.acceptance.grade import HealthReport
from clustertwin.acceptance.plan import AcceptancePlan


def check_doc(rep: HealthReport, plan: AcceptancePlan) -> dict[str, Any]:
    """check.json: imports (rows read/rejected), each log's figures and grade, every node's
    grade, GPUs (as columns) with serial/bin/grade, the wiring, stragglers, actions and the ``measured``
    block that ``plan --measured`` reads."""
    g = rep.gpus
    gpus: dict[str, list[Any]] = {}
    if g is not None:  # columns (one list per field, GPUs in burn-in order): compact at 10^5 GPUs
        gpus = {"node": g.node.tolist(), "gpu": g.gpu.tolist(), "serial": g.serial.tolist(),
                "tflops": g.tflops.tolist(), "ratio": np.round(g.ratio, 4).tolist(),
                "bin": g.bin.tolist(), "grade": g.grade.tolist()}
    grades = Counter(gr for gr, _ in rep.nodes.values())
    return {
        "scenario": plan.scenario, "gpu": plan.gpu_id, "node": plan.node_id, "fabric": plan.fabric_id,
        "expected": {"gemm_tflops": rep.expected_gemm_tflops, "precision": rep.precision},
        "imports": list(rep.imports),
        "nccl": list(rep.nccl), "dcgm": list(rep.dcgm),
        "nodes": {n: {"grade": gr, "reasons": list(rs)} for n, (gr, rs) in sorted(rep.nodes.items())},
        "node_grades": dict(grades),
        "gpus": gpus,
        "gpu_bins": dict(Counter(g.bin.tolist())) if g is not None else {},
        "stragglers": rep.stragglers(),
        "wiring": rep.wiring.to_dict() if rep.wiring is not None else None,
        "actions": rep.actions(),
        "drain": rep.drain(),
        "measured": rep.measured,
        "coverage": rep.coverage,
        "busbw_curves": list(rep.curves),
    }


def summary_rows(rep: HealthReport) -> list[tuple[str, str]]:
    grades = Counter(gr for gr, _ in rep.nodes.values())
    rows = [("nodes graded", ", ".join(f"{k} {v}" for k, v in sorted(grades.items())) or "-")]
    if rep.gpus is not None:
        bins = Counter(rep.gpus.bin.tolist())
        rows.append(("GPU bins (A/B/C/R)", " / ".join(str(bins.get(b, 0)) for b in "ABCR")))
        rows.append(("median GEMM", f"{np.median(rep.gpus.tflops):.0f} TFLOP/s "
                     f"(expected {rep.expected_gemm_tflops:.0f})"))
    for r in rep.nccl:
        exp = "-" if r.get("expected_gbps") is None else f"{r['expected_gbps']:.0f}"
        rows.append((f"nccl {r['op']} {r.get('gpus', r['nranks'])} GPUs",
                     f"{r['busbw_at_largest_gbps']:.1f} GB/s (expected {exp}) {r['grade']}; "
                     f"avg busbw {r['avg_busbw_gbps']:.2f}"))
    if rep.wiring is not None:
        w = rep.wiring
        rows.append(("fabric links", f"{w.ok} ok, {len(w.degraded)} degraded, {len(w.missing)} missing, "
                     f"{len(w.crossed)} crossed pairs, {len(w.extra)} extra of {w.designed} designed"))
    m = rep.measured
    for k in ("gemm_ratio", "nvlink_ratio", "fabric_ratio"):
        if m.get(k) is not None:
            rows.append((f"measured {k.replace('_', ' ')}", f"{m[k]:.3f}"))
    return rows


def plan_rows(plan: AcceptancePlan) -> list[list[str]]:
    """The plan as table rows: id, scope, expected, pass >=, warn >=, unit, published."""
    out = []
    for c in plan.checks:
        out.append([c.id, c.scope, f"{c.expected:,.1f}", f"{c.pass_min:,.1f}", f"{c.warn_min:,.1f}",
                    c.unit, c.published.split(" (")[0] if c.published else ""])
    return out
