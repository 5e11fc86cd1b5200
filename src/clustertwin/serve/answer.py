"""The answer page's content for one plan: the headline figures (each in an element whose
``data-key`` is its plan-JSON key), the decision per route when the plan has one, each stage's
summary table, figures and drawings, and the warnings.

Figures are the stages' own plotly figures (as ``plan.html`` shows them), drawn with the
plotly.js the server itself serves. The rendered HTML is kept with the plan in a small cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from clustertwin.fmt import dotted as value_at

#: headline figures: plan JSON key -> (label, unit kind); the decision's (issue 21) first when present
HEADLINE = (
    ("decision.trained_by", "trained by", "date"),
    ("decision.mode", "route", "text"),
    ("decision.cost_usd", "cost of the route", "usd"),
    ("training.days", "training days, no failures", "days"),
    ("reliability.effective_days", "wall-clock days with failures", "days"),
    ("training.wall_clock_days", "whole-run days (goodput)", "days"),
    ("training.gpus", "GPUs used", "int"),
    ("training.mfu", "MFU", "pct"),
    ("economics.capex_usd", "capex", "usd"),
    ("economics.run_cost_owned_usd", "run cost, owned", "usd"),
    ("economics.run_cost_cloud_usd", "run cost, cloud", "usd"),
    ("design.power.facility_kw", "facility power", "kw"),
    ("buildout.go_live_days_p50", "go-live, p50", "days"),
)
_RENDERED: OrderedDict[str, str] = OrderedDict()
_LOCK = threading.Lock()
_KEEP = 32


def fmt(v: Any, kind: str) -> str:
    """A figure for people: days to 0.1, dollars scaled, percentages, thousands separated."""
    from clustertwin.fmt import usd

    if v is None:
        return "n/a"
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if kind == "usd":
        return usd(float(v))
    if kind == "pct":
        return f"{100 * v:.1f}%"
    if kind == "kw":
        return f"{v / 1000:,.1f} MW" if v >= 1000 else f"{v:,.0f} kW"
    if kind == "int":
        return f"{int(v):,}"
    if kind == "days":
        return f"{v:,.1f} days"
    return f"{v:,.4g}" if isinstance(v, float) else f"{v:,}"


def label_for(key: str, fallback: str) -> str:
    """The naming table's label (:mod:`clustertwin.report.labels`) for a key it names; for
    one it does not, ours (``fallback``), else the table's guess from the key's spelling."""
    from clustertwin.report import labels

    if key not in labels.KEYS and fallback:
        return fallback  # the table's guess from the key's spelling: our own words read better
    return labels.label(key) or fallback


def headline(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """``[{key, label, text, value}]`` for the figures the plan has."""
    out = []
    for key, label, kind in HEADLINE:
        v = value_at(doc, key)
        if v is not None:
            out.append({"key": key, "label": label_for(key, label), "text": fmt(v, kind), "value": v,
                        "band": _band(doc, key)})
    return out


def _band(doc: dict[str, Any], key: str) -> str:
    """``"60.1-72.3"`` from ``KEY_low``/``KEY_high`` when the plan has them (``training.days``)."""
    low, high = value_at(doc, key + "_low"), value_at(doc, key + "_high")
    if isinstance(low, int | float) and isinstance(high, int | float):
        return f"band {low:,.1f}–{high:,.1f}"
    return ""


def decision_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The routes of ``decision.options`` (contract section 5) as display rows, when present."""
    from clustertwin.fmt import usd

    rows = []
    for i, opt in enumerate(value_at(doc, "decision.options") or []):
        if isinstance(opt, dict):
            rows.append({"i": i, "mode": str(opt.get("mode", "")),
                         "p50": str(opt.get("trained_by_p50") or "n/a"),
                         "p90": str(opt.get("trained_by_p90") or "n/a"),
                         "cost": usd(opt.get("cost_usd")) if isinstance(opt.get("cost_usd"), int | float) else "n/a",
                         "meets": opt.get("meets_target")})
    return rows


def sections(plan: Any, catalog: Any) -> list[dict[str, Any]]:
    """Each stage's title, summary rows, extra HTML, drawings and figure divs: the sections of
    plan.html (:func:`clustertwin.report.html.stage_sections`, the stages' views)."""
    from clustertwin.report.html import figure_div, stage_sections

    out = []
    for sec in stage_sections(plan, catalog):
        extra = sec["html"] + (drawings(plan, catalog) if sec["name"] == "design" else "")
        figs = [{"title": t, "div": figure_div(f)} for t, f in sec["figures"]]
        out.append({"name": sec["name"], "title": sec["title"], "rows": sec["rows"],
                    "extra": extra, "figures": figs})
    return out


def drawings(plan: Any, catalog: Any) -> str:
    """The drawings plan.html shows (:func:`clustertwin.report.html.default_drawings`: floor
    plan sheet, fabric topology, rack elevations), each under its title. Drawings that fail
    are logged and left out: the answer still shows."""
    import logging

    from clustertwin.quoting import html_text
    from clustertwin.report.html import default_drawings

    try:
        drawn = default_drawings(plan)
    except Exception:  # noqa: BLE001 - a missing picture must not take the figures with it
        logging.getLogger(__name__).exception("drawings not drawn")
        return ""
    return "".join(f"<h3>{html_text(title)}</h3>{svg}" for title, svg in drawn.items() if svg)


def render_answer(env: Any, answer: Any, catalog: Any) -> str:
    """The answer fragment (``answer.html.j2``) for a planned scenario, cached by its key."""
    with _LOCK:
        hit = _RENDERED.get(answer.key)
        if hit is not None:
            _RENDERED.move_to_end(answer.key)
            return hit
    doc = answer.doc
    html = env.get_template("answer.html.j2").render(
        name=answer.plan.scenario.name, headline=headline(doc), decision=decision_rows(doc),
        best=value_at(doc, "decision.best"), sentence=value_at(doc, "decision.headline"), sections=sections(answer.plan, catalog),
        warnings=doc.get("warnings", []))
    with _LOCK:
        _RENDERED[answer.key] = html
        while len(_RENDERED) > _KEEP:
            _RENDERED.popitem(last=False)
    return html
