"""The frozen result of the build-out stage and its views (contract, terminal, CSV, figures)."""

from __future__ import annotations

import datetime as _dt
import io
import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from clustertwin.fmt import plural
from clustertwin.quoting import csv_writer


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class StepSchedule(_Frozen):
    """One step's inputs and deterministic schedule (days from the start date)."""

    number: int
    phase: int
    phase_name: str
    title: str
    crew: str
    after: tuple[int, ...]
    optimistic_days: float
    likely_days: float
    pessimistic_days: float
    quantity: str | None
    quantity_value: float | None
    crews: int | None
    applicable: bool
    earliest_start_days: float
    earliest_finish_days: float
    latest_start_days: float
    latest_finish_days: float
    slack_days: float
    critical: bool
    criticality: float


class WhatIfShift(_Frozen):
    """A what-if's go-live distribution and its shift from the baseline (days)."""

    label: str
    changes: tuple[str, ...]
    deterministic_days: float
    go_live_days_p50: float
    go_live_days_p80: float
    go_live_days_p90: float
    shift_p50_days: float
    shift_p80_days: float
    shift_p90_days: float
    critical_path: tuple[int, ...]


def _date(start: _dt.date, days: float) -> _dt.date:
    return start + _dt.timedelta(days=math.ceil(days - 1e-9))


class BuildoutPlan(_Frozen):
    """Build-out schedule: CPM on likely durations plus Monte Carlo go-live percentiles."""

    profile: str
    start_date: _dt.date
    seed: int
    samples: int
    distribution: str
    quantities: dict[str, Any]
    phases: dict[int, str]
    deterministic_days: float
    go_live_days_mean: float
    go_live_days_p10: float
    go_live_days_p50: float
    go_live_days_p80: float
    go_live_days_p90: float
    go_live_quantiles: tuple[tuple[float, float], ...]
    waves: tuple[dict[str, Any], ...] = ()  #: {date, gpus, days, cumulative_gpus}, P50 schedule
    critical_path: tuple[int, ...]
    steps: tuple[StepSchedule, ...]
    what_ifs: tuple[WhatIfShift, ...] = ()
    notes: tuple[str, ...] = ()

    # dates -----------------------------------------------------------------
    @property
    def go_live_date_p50(self) -> _dt.date:
        return _date(self.start_date, self.go_live_days_p50)

    @property
    def go_live_date_p80(self) -> _dt.date:
        return _date(self.start_date, self.go_live_days_p80)

    @property
    def go_live_date_p90(self) -> _dt.date:
        return _date(self.start_date, self.go_live_days_p90)

    def step(self, number: int) -> StepSchedule:
        for s in self.steps:
            if s.number == number:
                return s
        raise KeyError(number)

    def criticality(self) -> dict[int, float]:
        return {s.number: s.criticality for s in self.steps}

    # views -----------------------------------------------------------------
    def to_contract(self) -> dict[str, Any]:
        """The contract's ``buildout`` block plus the detail (JSON-ready)."""
        return {
            "go_live_days_p50": self.go_live_days_p50,
            "go_live_days_p90": self.go_live_days_p90,
            "critical_path": list(self.critical_path),
            "waves": [dict(w) for w in self.waves],
            "go_live_days_p80": self.go_live_days_p80,
            "go_live_days_p10": self.go_live_days_p10,
            "go_live_days_mean": self.go_live_days_mean,
            "deterministic_days": self.deterministic_days,
            "start_date": self.start_date.isoformat(),
            "go_live_date_p50": self.go_live_date_p50.isoformat(),
            "go_live_date_p80": self.go_live_date_p80.isoformat(),
            "go_live_date_p90": self.go_live_date_p90.isoformat(),
            "profile": self.profile,
            "samples": self.samples,
            "distribution": self.distribution,
            "seed": self.seed,
            "quantities": dict(self.quantities),
            "steps": [s.model_dump() for s in self.steps],
            "what_ifs": [w.model_dump() for w in self.what_ifs],
            "notes": list(self.notes),
        }

    def summary_rows(self) -> list[tuple[str, str]]:
        q = self.quantities
        cp = self.critical_path
        phases_on_cp = []
        for s in self.steps:
            if s.number in cp and s.phase_name not in phases_on_cp:
                phases_on_cp.append(s.phase_name)
        drivers = sorted(
            (s for s in self.steps if s.number in cp and s.likely_days > 0),
            key=lambda s: -s.likely_days,
        )[:3]
        rows = [
            ("profile", self.profile),
            ("start date", self.start_date.isoformat()),
            (
                "scope",
                f"{plural(int(q['gpus']), 'GPU')}, {plural(int(q['servers']), 'server')}, "
                f"{plural(int(q['racks']), 'rack')}, {plural(int(q['cables']), 'fabric link')}, "
                + (f"{q['it_mw']:.1f} MW IT" if q["it_mw"] >= 1 else f"{q['it_mw'] * 1000:.0f} kW IT"),
            ),
            (
                "go-live P50",
                f"{self.go_live_days_p50:.0f} days ({self.go_live_date_p50.isoformat()})",
            ),
            (
                "go-live P80",
                f"{self.go_live_days_p80:.0f} days ({self.go_live_date_p80.isoformat()})",
            ),
            (
                "go-live P90",
                f"{self.go_live_days_p90:.0f} days ({self.go_live_date_p90.isoformat()})",
            ),
            ("deterministic (likely) length", f"{self.deterministic_days:.0f} days"),
            ("critical path", f"{len(cp)} steps: {' '.join(map(str, cp))}"),
            ("critical phases", ", ".join(phases_on_cp)),
            (
                "longest critical steps",
                "; ".join(f"{s.number} {s.title} ({s.likely_days:.0f} d)" for s in drivers),
            ),
        ]
        for w in self.what_ifs:
            rows.append(
                (
                    f"what-if {w.label}",
                    f"P50 {w.shift_p50_days:+.0f} d, P90 {w.shift_p90_days:+.0f} d "
                    f"(P50 {w.go_live_days_p50:.0f} d)",
                )
            )
        return rows

    def to_csv(self) -> str:
        """One row per step, for a project tool (dates are earliest/latest on likely durations)."""
        buf = io.StringIO()
        w = csv_writer(buf)
        w.writerow(
            [
                "step",
                "phase",
                "phase_name",
                "title",
                "crew",
                "predecessors",
                "optimistic_days",
                "likely_days",
                "pessimistic_days",
                "quantity",
                "quantity_value",
                "crews",
                "earliest_start_days",
                "earliest_finish_days",
                "latest_start_days",
                "latest_finish_days",
                "slack_days",
                "critical",
                "criticality_index",
                "earliest_start_date",
                "earliest_finish_date",
                "latest_start_date",
                "latest_finish_date",
            ]
        )
        for s in self.steps:
            w.writerow(
                [
                    s.number,
                    s.phase,
                    s.phase_name,
                    s.title,
                    s.crew,
                    " ".join(map(str, s.after)),
                    f"{s.optimistic_days:.2f}",
                    f"{s.likely_days:.2f}",
                    f"{s.pessimistic_days:.2f}",
                    s.quantity or "",
                    "" if s.quantity_value is None else f"{s.quantity_value:g}",
                    "" if s.crews is None else s.crews,
                    f"{s.earliest_start_days:.2f}",
                    f"{s.earliest_finish_days:.2f}",
                    f"{s.latest_start_days:.2f}",
                    f"{s.latest_finish_days:.2f}",
                    f"{s.slack_days:.2f}",
                    int(s.critical),
                    f"{s.criticality:.4f}",
                    (self.start_date + _dt.timedelta(days=s.earliest_start_days)).isoformat(),
                    (self.start_date + _dt.timedelta(days=s.earliest_finish_days)).isoformat(),
                    (self.start_date + _dt.timedelta(days=s.latest_start_days)).isoformat(),
                    (self.start_date + _dt.timedelta(days=s.latest_finish_days)).isoformat(),
                ]
            )
        return buf.getvalue()

    def figures(self) -> list[tuple[str, Any]]:
        """Gantt by phase (critical path highlighted) and the go-live distribution."""
        import plotly.graph_objects as go

        start = _dt.datetime.combine(self.start_date, _dt.time())
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
        for ph, name in sorted(self.phases.items()):
            rows = [s for s in self.steps if s.phase == ph]
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
            title=f"Build-out schedule ({self.profile}); critical path outlined in red",
            barmode="overlay",
            height=max(600, 14 * len(self.steps)),
            xaxis={"type": "date", "title": "date (earliest start, likely durations)"},
            yaxis={
                "autorange": "reversed",
                "categoryorder": "array",
                "categoryarray": [f"{s.number:03d} {s.title}" for s in self.steps],
                "tickfont": {"size": 8},
            },
        )
        qs = [q for q, _ in self.go_live_quantiles]
        ds = [d for _, d in self.go_live_quantiles]
        dist = go.Figure(go.Scatter(x=ds, y=qs, mode="lines+markers", name="go-live CDF"))
        for label, v in (
            ("P50", self.go_live_days_p50),
            ("P80", self.go_live_days_p80),
            ("P90", self.go_live_days_p90),
            ("likely", self.deterministic_days),
        ):
            dist.add_vline(x=v, line_dash="dot", annotation_text=label)
        dist.update_layout(
            title="Go-live: days from start (Monte Carlo)",
            xaxis_title="days from start",
            yaxis_title="probability done",
        )
        return [("buildout-gantt", gantt), ("buildout-go-live", dist)]
