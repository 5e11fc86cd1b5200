"""The acceptance pages: ``check.html`` (the health report: actions, summary, nodes not
passing, stragglers, imported files, nccl-tests curves, fabric links not as designed) and the
plan.html of ``plan --measured`` (the catalog plan against the measured one, then each stage of
the measured plan drawn by its view). Text from imported files reaches the page through
:func:`clustertwin.quoting.html_text`."""

from __future__ import annotations

from typing import Any

from clustertwin.acceptance.grade import HealthReport
from clustertwin.acceptance.plan import AcceptancePlan
from clustertwin.acceptance.report import summary_rows
from clustertwin.quoting import html_text


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
