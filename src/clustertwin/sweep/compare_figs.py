"""Figures of compare.html: headline metrics as grouped bars (one colour per scenario) and the
step-time and cost breakdowns stacked per scenario."""

from __future__ import annotations

from typing import Any

from clustertwin.fmt import dotted as value
from clustertwin.quoting import html_text
from clustertwin.report.labels import SERIES, humanize
from clustertwin.report.style import PALETTE

#: one colour per scenario: the house palette (report/style.py, Okabe-Ito)
COLORS = PALETTE

#: panels of the headline figure: (title, [(bar label, plan key, scale)])
PANELS = (
    ("days (no failures)", [("days", "training.days", 1.0)]),
    ("wall-clock days", [("days", "reliability.effective_days", 1.0)]),
    ("cost of the run, $M", [("owned", "economics.run_cost_owned_usd", 1e-6),
                             ("cloud", "economics.run_cost_cloud_usd", 1e-6)]),
    ("facility power, MW", [("MW", "design.power.facility_kw", 1e-3)]),
    ("racks", [("racks", "design.racks", 1.0)]),
    ("go-live, days from start", [("p50", "buildout.go_live_days_p50", 1.0),
                                  ("p90", "buildout.go_live_days_p90", 1.0)]),
)


def _scaled(doc: dict[str, Any] | None, key: str, scale: float) -> float | None:
    v = value(doc, key)
    return v * scale if isinstance(v, int | float) and not isinstance(v, bool) else None


def grouped_bars(plans: list[Any]) -> list[tuple[str, Any]]:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=3, subplot_titles=[t for t, _ in PANELS], vertical_spacing=0.18)
    for k, p in enumerate(plans):
        color = COLORS[k % len(COLORS)]
        for n, (_, bars) in enumerate(PANELS):
            r, c = divmod(n, 3)
            fig.add_trace(go.Bar(x=[b[0] for b in bars], y=[_scaled(p.doc, b[1], b[2]) for b in bars],
                                 name=html_text(p.name), legendgroup=str(k), showlegend=n == 0,
                                 marker_color=color), row=r + 1, col=c + 1)
    fig.update_layout(barmode="group", height=620, title_text="Headline figures per scenario")
    return [("Headline figures per scenario", fig)]


def _stack(plans: list[Any], block: str, title: str, scale: float, unit: str,
           skip: tuple[str, ...] = ()) -> tuple[str, Any] | None:
    import plotly.graph_objects as go

    parts: dict[str, None] = {}
    for p in plans:
        for key in (value(p.doc, block) or {}):
            if key not in skip:
                parts.setdefault(key, None)
    if not parts:
        return None
    fig = go.Figure()
    names = [html_text(p.name) for p in plans]  # plotly reads tags in text: shown as written
    for part in parts:
        ys = [_scaled(p.doc, f"{block}.{part}", scale) for p in plans]
        label = SERIES[part][0] if part in SERIES else humanize(part)
        fig.add_trace(go.Bar(x=names, y=ys, name=label))
    fig.update_layout(barmode="stack", yaxis_title=unit, height=420, title_text=title)
    return title, fig


def breakdown_figures(plans: list[Any]) -> list[tuple[str, Any]]:
    figs = [
        _stack(plans, "training.time_breakdown_s", "Step time, stacked by component", 1.0, "seconds per step",
               skip=("step_s",)),
        _stack(plans, "economics.capex_by_category_usd", "Capital cost by category", 1e-6, "$M"),
        _stack(plans, "economics.opex_by_category_usd_per_month", "Operating cost by category", 1e-6, "$M per month"),
    ]
    return [f for f in figs if f is not None]
