"""The frozen result of the build-out stage: its data, its contract block and its CSV (the
view is report/views/buildout.py)."""

from __future__ import annotations

import datetime as _dt
import io
import math
from typing import Any

from pydantic import BaseModel, ConfigDict

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
    site: str = "greenfield"  #: decision.site the build-out stands on (or its profile's own)
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
        # the steps and what-ifs in one serializer call (the same dicts as each one's model_dump)
        detail = self.model_dump(include={"steps", "what_ifs"})
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
            "site": self.site,
            "samples": self.samples,
            "distribution": self.distribution,
            "seed": self.seed,
            "quantities": dict(self.quantities),
            "steps": list(detail["steps"]),
            "what_ifs": list(detail["what_ifs"]),
            "notes": list(self.notes),
        }

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
