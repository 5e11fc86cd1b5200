"""The ``economics`` and ``buildout`` sections."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Literal

from pydantic import Field, field_validator

from clustertwin.scenario.base import Auto, _Section


class Economics(_Section):
    cloud_usd_per_gpu_hour: float = Field(3.0, gt=0, le=1000, description="rental price to compare against")
    electricity_usd_per_kwh: float = Field(0.08, ge=0, le=10, description="energy price")
    pue: float | Auto = Field("auto", description="power usage effectiveness; auto = from the cooling design")
    depreciation_years: float = Field(4.0, gt=0, le=100, description="straight-line life of IT equipment")
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


class Buildout(_Section):
    profile: Literal["auto", "new-build", "existing-facility", "small-order", "colocation", "fast-track"] = Field(
        "auto", description="auto = existing-facility when the design fits one, else new-build")
    start_date: _dt.date = Field(_dt.date(2027, 1, 5), ge=_dt.date(1970, 1, 1), le=_dt.date(2200, 12, 31),
                                 description="day the program starts (ISO date, 1970 to 2200)")
