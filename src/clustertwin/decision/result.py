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
    cost_usd: float                  #: cash spent minus resale of what is owned at the end
    npv_usd: float                   #: the same cash flows discounted at decision.discount_rate
    cash_peak_usd: float
    meets_target: bool
    ready_date_p90: _dt.date
    start_date_p90: _dt.date
    wall_clock_days_p50: float       #: trained_by_p50 - start_date (phased runs summed)
    wall_clock_days_p90: float
    capex_usd: float
    residual_usd: float
    cost_amortized_usd: float        #: owned: the run's share of depreciation + running costs
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
        o = self.chosen()
        when = f"Trained by {o.trained_by(self.confidence).isoformat()} ({self.confidence.upper()})"
        from clustertwin.fmt import usd

        if self.best is None and self.target_date is not None:
            return (f"Not trained by {self.target_date.isoformat()}: earliest {when[11:]} "
                    f"via {o.mode} for {usd(o.cost_usd)}")
        return f"{when} via {o.mode} for {usd(o.cost_usd)}"

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
            "by_mode": by_mode,
            "notes": list(self.notes),
        }
