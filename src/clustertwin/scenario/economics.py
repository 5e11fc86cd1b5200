"""The ``economics`` and ``buildout`` sections."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Literal

from pydantic import Field, field_validator

from clustertwin.scenario.base import Auto, Section


class Economics(Section):
    cloud_usd_per_gpu_hour: float = Field(3.0, gt=0, le=1000, description="rental price to compare against")
    electricity_usd_per_kwh: float = Field(0.08, ge=0, le=10, description="energy price")
    pue: float | Auto = Field("auto", description="power usage effectiveness; auto = from the cooling design")
    depreciation_years: float = Field(4.0, ge=1, le=100, description="straight-line life of IT equipment, "
                                      "1 to 100 years (hyperscalers use 4-6)")
    facility: Literal["auto", "build", "lease"] = Field("auto", description="build the facility (capex) or lease colocation (opex); auto = lease when the design fits an existing facility, else build")
    wasted_fraction: float | Auto = Field("auto", description="extra GPU-hours lost to failures and checkpoints over a failure-free run (0.3 = +30%); auto = from reliability")
    costs: str = Field("us-2025", description="cost-book catalog id (facility, colocation, staff, maintenance)")

    @field_validator("pue")
    @classmethod
    def _pue(cls, v: Any) -> Any:
        if v != "auto" and not 1.0 <= v <= 5.0:
            raise ValueError(f"PUE is at least 1.0 and at most 5.0 (got {v:g})")
        return v

    @field_validator("wasted_fraction")
    @classmethod
    def _wasted(cls, v: Any) -> Any:
        if v != "auto" and not 0 <= v <= 100:
            raise ValueError("must be 'auto' or a number from 0 to 100 (0.3 = 30% extra GPU-hours)")
        return v


_NUM = r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?"
_CHANGE = re.compile(rf"^(?:[+-]?{_NUM}|[x*]{_NUM}|{_NUM}/{_NUM}/{_NUM})$")
_CHANGE_HELP = ("+N or -N days (shift), xF (scale), N (the likely days; the other two move with it) "
                "or O/L/P (all three)")

_MAX_DAYS = 36_500  # 100 years: past it a date overflows; a typo, not a lead time
_MAX_FACTOR = 100.0


def _check_magnitude(text: str) -> None:
    """Refuse a shape-valid change whose size leaves the calendar (``99999999999999``, ``x1e9``)."""
    if text[:1] in "x*":
        if float(text[1:]) > _MAX_FACTOR:
            raise ValueError(f"expected a factor of at most x{_MAX_FACTOR:g}, got {text!r}")
    elif max(float(p) for p in text.lstrip("+-").split("/")) > _MAX_DAYS:
        raise ValueError(f"expected at most {_MAX_DAYS} days (100 years), got {text!r}")


class LeadTimes(Section):
    """Build-out what-ifs as scenario keys (``buildout.lead_times.<name>``), so sweeps can vary
    them: each changes the three-point duration of the step it names (``clustertwin buildout
    --what-if`` takes the same names and values). Absent = the step book's durations."""

    gpu_lead_time_days: str | float | None = Field(None, description="GPU order to delivery (step 1)")
    gpu_allocation_days: str | float | None = Field(None, description="GPU allocation talks (step 2)")
    nic_lead_time_days: str | float | None = Field(None, description="compute NIC order (step 39)")
    switch_lead_time_days: str | float | None = Field(None, description="leaf/spine switch order (step 40)")
    optics_lead_time_days: str | float | None = Field(None, description="cables and optics order (step 45)")
    utility_study_days: str | float | None = Field(None, description="utility capacity and grid study (step 74)")
    utility_agreement_days: str | float | None = Field(None, description="utility service agreement (step 75)")
    switchgear_days: str | float | None = Field(None, description="medium-voltage switchgear (step 76)")
    substation_days: str | float | None = Field(None, description="on-site substation (step 77)")
    ups_days: str | float | None = Field(None, description="UPS modules (step 78)")
    generator_days: str | float | None = Field(None, description="standby generators (step 80)")
    chiller_days: str | float | None = Field(None, description="chilled-water plant (step 114)")
    cooling_tower_days: str | float | None = Field(None, description="heat rejection (step 115)")
    storage_lead_time_days: str | float | None = Field(None, description="storage system order (step 123)")
    burn_in_days: str | float | None = Field(None, description="GPU burn-in (step 34)")
    validation_days: str | float | None = Field(None, description="end-to-end training at growing scale (step 186)")

    @field_validator("*")
    @classmethod
    def _change(cls, v: Any) -> Any:
        if v is None:
            return v
        if isinstance(v, bool) or not _CHANGE.match(str(v).strip()):
            raise ValueError(f"expected {_CHANGE_HELP}, got {v!r}")
        if not isinstance(v, str) and v < 0:
            raise ValueError("a number of days is at least 0 (write '-30' as text to shift by -30)")
        _check_magnitude(str(v).strip())
        return v

    def changes(self) -> dict[str, str]:
        """``{name: value}`` of the keys set, values as text (``+90``, ``x1.5``, ``120``)."""
        return {k: (v if isinstance(v, str) else f"{v:g}") for k, v in self.model_dump().items() if v is not None}


class Buildout(Section):
    profile: Literal["auto", "new-build", "existing-facility", "small-order", "colocation", "fast-track"] = Field(
        "auto", description="auto = existing-facility when the design fits one, else new-build")
    start_date: _dt.date = Field(_dt.date(2027, 1, 5), ge=_dt.date(1970, 1, 1), le=_dt.date(2200, 12, 31),
                                 description="day the program starts (ISO date, 1970 to 2200)")
    lead_times: LeadTimes = Field(default_factory=LeadTimes, description="named lead-time changes (what-ifs as scenario keys)")
    crews: float = Field(1.0, gt=0, le=100, description="multiplier on every step's crew cap (2 = twice the crews)")
