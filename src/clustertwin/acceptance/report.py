"""The health report as data (``check.json``) and as a page (``check.html``), and the acceptance
plan as a table. Pure functions: they return dicts and strings; the CLI writes them."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from clustertwin.acceptance.grade import HealthReport
from clustertwin.acceptance.plan import AcceptancePlan
from clustertwin.quoting import html_text


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


def _table(head: list[str], rows: list[list[Any]]) -> str:
    th = "".join(f"<th>{html_text(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html_text(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table class='kv'><tr>{th}</tr>{body}</table>"


def render_html(rep: HealthReport, plan: AcceptancePlan) -> str:
    from clustertwin.report.html import render_page

    actions = "<ol>" + "".join(f"<li>{html_text(a)}</li>" for a in rep.actions()) + "</ol>"
    bad = [[n, gr, "; ".join(rs)] for n, (gr, rs) in sorted(rep.nodes.items()) if gr in ("fail", "warn")]
    sections = [
        {"title": "Actions", "rows": [], "html": actions},
        {"title": "Summary", "rows": summary_rows(rep), "figures": _figures(rep)},
        {"title": "Nodes not passing", "rows": [], "html": _table(["node", "grade", "why"], bad[:2000])},
        {"title": "Stragglers (slowest GPUs, with serials)", "rows": [],
         "html": _table(["node", "gpu", "serial", "TFLOP/s", "of expected", "grade", "why"],
                        [[s["node"], s["gpu"], s["serial"], f"{s['tflops']:.0f}", f"{s['ratio']:.2f}",
                          s["grade"], s["reason"]] for s in rep.stragglers()])},
        {"title": "Imported files", "rows": [], "html": _table(
            ["file", "kind", "rows read", "rejected", "reasons"],
            [[i["source"], i["kind"], i["rows_read"], i["rows_rejected"],
              "; ".join(f"{k}: {v}" for k, v in i["reasons"].items())] for i in rep.imports])},
    ]
    if rep.curves:
        from clustertwin.acceptance.curves import figures

        sections.insert(2, {"title": "nccl-tests: bus bandwidth vs message size (dashed: the twin)",
                            "rows": [], "figures": figures(list(rep.curves))})
    if rep.wiring is not None:
        w = rep.wiring.to_dict()
        rows = ([["degraded", d["link"], d["speed"]] for d in w["degraded"]]
                + [["missing", m, ""] for m in w["missing"]]
                + [["crossed", " / ".join(c["designed"]), "swap ends"] for c in w["crossed"]]
                + [["extra", e, ""] for e in w["extra"]])
        sections.append({"title": "Fabric links not as designed", "rows": [], "html": _table(["state", "link", "seen"], rows)})
    return render_page(f"clustertwin check: {plan.scenario}", sections,
                       f"{plan.gpu_id} in {plan.node_id} on {plan.fabric_id}")


def _figures(rep: HealthReport) -> list[tuple[str, Any]]:
    if rep.gpus is None:
        return []
    import plotly.graph_objects as go

    fig = go.Figure(go.Histogram(x=rep.gpus.tflops, nbinsx=60))
    fig.add_vline(x=rep.expected_gemm_tflops, line_dash="dash")
    fig.update_layout(title="GEMM TFLOP/s per GPU (dashed: expected)", xaxis_title="TFLOP/s", yaxis_title="GPUs")
    return [("GEMM per GPU", fig)]


def plan_rows(plan: AcceptancePlan) -> list[list[str]]:
    """The plan as table rows: id, scope, expected, pass >=, warn >=, unit, published."""
    out = []
    for c in plan.checks:
        out.append([c.id, c.scope, f"{c.expected:,.1f}", f"{c.pass_min:,.1f}", f"{c.warn_min:,.1f}",
                    c.unit, c.published.split(" (")[0] if c.published else ""])
    return out


def recalibration_html(rec: Any) -> str:
    """plan.html of ``plan --measured``: the comparison first, then the measured plan's blocks."""
    from clustertwin.report.html import render_page, stage_sections

    plan = rec.measured
    figs = rec.figures
    rows = [(q, f"{a}  →  {b}") for q, a, b in rec.rows()]
    rows += [(f"measured {k.replace('_', ' ')}", f"{figs[k]:.3f}") for k in ("gemm_ratio", "nvlink_ratio", "fabric_ratio")
             if figs.get(k) is not None]
    if figs.get("note"):
        rows.append(("drained nodes", str(figs["note"])))
    sections = [{"title": "Catalog plan → measured plan", "rows": rows}]
    for sec in stage_sections(plan):  # each stage drawn by its view, as on plan.html
        sections.append({"title": sec["title"] + " (measured)", "rows": sec["rows"],
                         "figures": sec["figures"]})
    return render_page(f"clustertwin plan (recalibrated): {plan.scenario.name}", sections,
                       "re-predicted from clustertwin check measurements", list(plan.warnings))
