"""The build-out view: its rows, the Gantt chart by phase and the go-live distribution."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from clustertwin.fmt import plural

if TYPE_CHECKING:
    from clustertwin.buildout.result import BuildoutPlan
    from clustertwin.report.views.base import Where


def rows(res: BuildoutPlan) -> list[tuple[str, str]]:
    q = res.quantities
    cp = res.critical_path
    phases_on_cp = []
    for s in res.steps:
        if s.number in cp and s.phase_name not in phases_on_cp:
            phases_on_cp.append(s.phase_name)
    drivers = sorted(
        (s for s in res.steps if s.number in cp and s.likely_days > 0),
        key=lambda s: -s.likely_days,
    )[:3]
    rows = [
        ("profile", res.profile),
        ("site", res.site),
        ("start date", res.start_date.isoformat()),
        (
            "scope",
            f"{plural(int(q['gpus']), 'GPU')}, {plural(int(q['servers']), 'server')}, "
            f"{plural(int(q['racks']), 'rack')}, {plural(int(q['cables']), 'fabric link')}, "
            + (f"{q['it_mw']:.1f} MW IT" if q["it_mw"] >= 1 else f"{q['it_mw'] * 1000:.0f} kW IT"),
        ),
        (
            "go-live P50",
            f"{res.go_live_days_p50:.0f} days ({res.go_live_date_p50.isoformat()})",
        ),
        (
            "go-live P80",
            f"{res.go_live_days_p80:.0f} days ({res.go_live_date_p80.isoformat()})",
        ),
        (
            "go-live P90",
            f"{res.go_live_days_p90:.0f} days ({res.go_live_date_p90.isoformat()})",
        ),
        ("deterministic (likely) length", f"{res.deterministic_days:.0f} days"),
        ("critical path", f"{len(cp)} steps: {' '.join(map(str, cp))}"),
        ("critical phases", ", ".join(phases_on_cp)),
        (
            "longest critical steps",
            "; ".join(f"{s.number} {s.title} ({s.likely_days:.0f} d)" for s in drivers),
        ),
    ]
    for w in res.what_ifs:
        rows.append(
            (
                f"what-if {w.label}",
                f"P50 {w.shift_p50_days:+.0f} d, P90 {w.shift_p90_days:+.0f} d "
                f"(P50 {w.go_live_days_p50:.0f} d)",
            )
        )
    return rows


def figures(res: BuildoutPlan, where: Where | None = None) -> list[tuple[str, Any]]:  # noqa: ARG001
    """Gantt by phase (critical path highlighted) and the go-live distribution."""
    import plotly.graph_objects as go

    start = _dt.datetime.combine(res.start_date, _dt.time())
    ms_day = 86_400_000
    gantt = go.Figure()
    palette = [
        "#4c78a8",
        "#f58518",
        "#54a24b",
        "#b279a2",
        "#72b7b2",
        "#eeca3b",
        "#9d755d",
        "#bab0ac",
    ]
    for ph, name in sorted(res.phases.items()):
        rows = [s for s in res.steps if s.phase == ph]
        for crit in (False, True):
            sel = [s for s in rows if s.critical == crit]
            if not sel:
                continue
            gantt.add_trace(
                go.Bar(
                    orientation="h",
                    y=[f"{s.number:03d} {s.title}" for s in sel],
                    base=[start + _dt.timedelta(days=s.earliest_start_days) for s in sel],
                    x=[max(s.likely_days, 0.2) * ms_day for s in sel],
                    name=f"{ph}. {name}" + (" (critical)" if crit else ""),
                    legendgroup=str(ph),
                    marker={
                        "color": palette[(ph - 1) % len(palette)],
                        "line": {
                            "color": "#d62728" if crit else "rgba(0,0,0,0)",
                            "width": 2.5 if crit else 0,
                        },
                    },
                    customdata=[[s.slack_days, s.criticality] for s in sel],
                    hovertemplate="%{y}<br>slack %{customdata[0]:.0f} d, "
                    "criticality %{customdata[1]:.2f}<extra></extra>",
                )
            )
    gantt.update_layout(
        title=f"Build-out schedule ({res.profile}); critical path outlined in red",
        barmode="overlay",
        height=max(600, 14 * len(res.steps)),
        xaxis={"type": "date", "title": "date (earliest start, likely durations)"},
        yaxis={
            "autorange": "reversed",
            "categoryorder": "array",
            "categoryarray": [f"{s.number:03d} {s.title}" for s in res.steps],
            "tickfont": {"size": 8},
        },
    )
    qs = [q for q, _ in res.go_live_quantiles]
    ds = [d for _, d in res.go_live_quantiles]
    dist = go.Figure(go.Scatter(x=ds, y=qs, mode="lines+markers", name="go-live CDF"))
    for label, v in (
        ("P50", res.go_live_days_p50),
        ("P80", res.go_live_days_p80),
        ("P90", res.go_live_days_p90),
        ("likely", res.deterministic_days),
    ):
        dist.add_vline(x=v, line_dash="dot", annotation_text=label)
    dist.update_layout(
        title="Go-live: days from start (Monte Carlo)",
        xaxis_title="days from start",
        yaxis_title="probability done",
    )
    return [("buildout-gantt", gantt), ("buildout-go-live", dist)]
