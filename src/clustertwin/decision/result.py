"""The frozen result of the decision stage: its data and its contract block (the view is
report/views/decision.py)."""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from pydantic import BaseModel, ConfigDict

#: the contract's keys of one option (contract section 5), then ours
CONTRACT_KEYS = ("mode", "gpus", "ready_date", "start_date", "trained_by_p50", "trained_by_p90",
                 "cost_usd", "npv_usd", "cash_peak_usd", "meets_target")


def day_date(start: _dt.date, days: float) -> _dt.date:
    """The date ``days`` after ``start`` (a part day counts as the next day)."""
    return start + _dt.timedelta(days=math.ceil(days - 1e-9))


class DecisionOption(BaseModel):
    model_config = ConfigDict(frozen=True)

    mode: str
    gpus: int
    ready_date: _dt.date
    start_date: _dt.date
    trained_by_p50: _dt.date
    trained_by_p90: _dt.date
    cost_usd: float                  #: the cost on decision.basis (cost_usage_usd or cost_exit_usd)
    npv_usd: float                   #: the same basis's cash flows discounted at decision.discount_rate
    cash_peak_usd: float
    meets_target: bool
    ready_date_p90: _dt.date
    start_date_p90: _dt.date
    wall_clock_days_p50: float       #: trained_by_p50 - start_date (phased runs summed)
    wall_clock_days_p90: float
    capex_usd: float
    residual_usd: float
    cost_usage_usd: float            #: the capacity-time the run uses (capital recovery, O&M, rent)
    cost_exit_usd: float             #: every commitment paid, owned hardware sold after the run
    usd_per_gpu_hour: float          #: cost_usd / (gpus x wall-clock hours)
    hardware_lead_days_p50: float    #: the GPU order lead time the route waited for (0: none)
    mfu: float                       #: MFU of the route's own plan at its GPU count
    commitment_months: float         #: minimum term charged on the exit basis
    p_meets_target: float | None = None  #: from the route Monte Carlo
    p_best: float | None = None
    cash_flow_usd_per_month: tuple[float, ...]
    gpus_to_meet_target: int | None = None  #: estimate (GPU-days held); None: cannot in time
    notes: tuple[str, ...] = ()

    def trained_by(self, confidence: str) -> _dt.date:
        return self.trained_by_p90 if confidence == "p90" else self.trained_by_p50

    def to_contract(self) -> dict[str, Any]:
        d = self.model_dump(mode="json")
        d["cash_flow_usd_per_month"] = list(self.cash_flow_usd_per_month)
        d["notes"] = list(self.notes)
        return d


class DecisionResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    options: tuple[DecisionOption, ...]
    best: str | None
    target_date: _dt.date | None
    confidence: str
    start: str
    discount_rate: float
    basis: str = "usage"
    objective: str = "cost"
    margin_usd: float | None = None       #: best vs runner-up on the basis (None: one route)
    knife_edge: bool = False              #: p_best of the best route < 0.8
    drivers: tuple[dict[str, Any], ...] = ()
    break_even: tuple[dict[str, Any], ...] = ()
    sized_rows: tuple[dict[str, Any], ...] = ()  #: decision.size_to_target: each route solved for the target
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def option(self, mode: str) -> DecisionOption:
        return next(o for o in self.options if o.mode == mode)

    def chosen(self) -> DecisionOption:
        """The best option, else the one trained earliest (what the headline names)."""
        if self.best is not None:
            return self.option(self.best)
        return min(self.options, key=lambda o: (o.trained_by(self.confidence), o.cost_usd))

    def headline(self) -> str:
        from clustertwin.decision.words import headline

        return headline(self)

    def to_contract(self) -> dict[str, Any]:
        by_mode = {o.mode: {k: v for k, v in o.to_contract().items()
                            if k not in ("mode", "cash_flow_usd_per_month", "notes")} for o in self.options}
        chosen = self.chosen()  # the best route, else the one trained earliest
        return {
            "options": [o.to_contract() for o in self.options],
            "best": self.best,
            "headline": self.headline(),
            "mode": chosen.mode,
            "trained_by": chosen.trained_by(self.confidence).isoformat(),
            "cost_usd": chosen.cost_usd,
            "meets_target": chosen.meets_target,
            "target_date": self.target_date.isoformat() if self.target_date else None,
            "confidence": self.confidence, "start": self.start, "discount_rate": self.discount_rate,
            "basis": self.basis, "objective": self.objective, "margin_usd": self.margin_usd,
            "knife_edge": self.knife_edge, "drivers": [dict(d) for d in self.drivers],
            "break_even": [dict(b) for b in self.break_even],
            "by_mode": by_mode,
            "notes": list(self.notes),
        }
