"""The ``decision`` section: the buyer's question (trained by when, by which route, for how much)."""

from __future__ import annotations

import datetime as _dt
from typing import Literal

from pydantic import Field, field_validator, model_validator

from clustertwin.scenario.base import Section

MODES = ("build", "colo", "lease", "cloud")
Mode = Literal["build", "colo", "lease", "cloud", "existing"]
_DAY = {"ge": 0, "le": 36_500}


class RouteOverride(Section):
    """Per-route overrides of the catalog's price and lead time (``decision.<route>.*``)."""

    usd_per_gpu_hour: float | None = Field(None, gt=0, le=1000, description="lease/cloud price per GPU-hour")
    usd_per_kw_month: float | None = Field(None, gt=0, le=100_000, description="colocation price per kW of IT load per month")
    ready_days: float | None = Field(None, **_DAY, description="days from the decision to capacity ready (P50); replaces the catalog's lead time (build: the build-out's go-live)")
    ready_days_p90: float | None = Field(None, **_DAY, description="P90 of ready_days; default ready_days")
    max_gpus: int | None = Field(None, gt=0, le=1_048_576, description="cloud: GPUs available without a contract")
    min_term_months: float | None = Field(None, ge=0, le=120, description="lease: months committed")

    @model_validator(mode="after")
    def _p90_not_before_p50(self) -> RouteOverride:
        if self.ready_days is not None and self.ready_days_p90 is not None and self.ready_days_p90 < self.ready_days:
            raise ValueError(f"ready_days_p90 ({self.ready_days_p90:g}) is earlier than ready_days "
                             f"({self.ready_days:g}); a P90 is at least the P50")
        return self


class Existing(Section):
    """The buyer's own cluster (route ``existing``): the scenario's cluster, owned and running."""

    ready_date: _dt.date | None = Field(None, ge=_dt.date(1970, 1, 1), le=_dt.date(2200, 12, 31),
                                        description="date the owned cluster is free for this run; default the decision date")
    bought_date: _dt.date | None = Field(None, ge=_dt.date(1970, 1, 1), le=_dt.date(2200, 12, 31),
                                         description="date the owned hardware was bought (its market value moves from then); default the decision date")


class Uncertainty(Section):
    """The route Monte Carlo (``decision.uncertainty``)."""

    samples: int = Field(2000, ge=0, le=200_000, description="draws of the route Monte Carlo (0 = off)")
    seed: int = Field(38, ge=0, le=2**32 - 1, description="random seed, 0 to 2**32-1 (the same seed gives the same answer)")


class Decision(Section):
    """When is the model trained, by which route, for how much (all keys optional)."""

    target_date: _dt.date | None = Field(None, ge=_dt.date(1970, 1, 1), le=_dt.date(2200, 12, 31),
                                         description="date the model must be trained by; absent = no target (best = cheapest)")
    options: list[Mode] = Field(default_factory=lambda: list(MODES), min_length=1,
                                description="routes to compare: build, colo, lease, cloud, existing (the cluster is already owned)")
    basis: Literal["usage", "exit"] = Field("usage", description="usage: each route pays for the capacity-time the run uses (owned hardware and facility through a capital-recovery charge); exit: every commitment paid, owned hardware sold after the run")
    site: Literal["greenfield", "powered-land", "existing-building"] = Field("greenfield", description="build route: greenfield waits for the utility to energise its load (a wait rising with MW); powered-land and existing-building have power contracted")
    region: str = Field("northern-virginia", max_length=64, description="siting region (catalog kind region): the utility's interconnection time rising with MW and the colocation market's availability, for the build, colo and lease routes")
    objective: Literal["cost", "date", "npv"] = Field("cost", description="best route among those meeting the target: lowest cost_usd, earliest trained-by, or lowest npv_usd")
    disposal_haircut: float | None = Field(None, ge=0, le=1, description="exit basis: fraction lost selling owned hardware in bulk after the run; default the catalog's")
    confidence: Literal["p50", "p90"] = Field("p90", description="percentile a route must meet the target at")
    start: Literal["first-wave", "full"] = Field("first-wave", description="start training on the first build-out wave (re-planning at each wave) or on the whole cluster")
    discount_rate: float = Field(0.08, ge=0, le=1, description="annual rate for the net present value of cash flows")
    size_to_target: bool = Field(False, description="also solve, per route, the GPU count that trains by target_date (the deadline solver, one plan per route)")
    residual_frac_per_year: list[float] | None = Field(None, min_length=1, max_length=20, description="resale value of owned IT hardware after 1, 2, ... years (fraction of price); default the catalog's curve")
    build: RouteOverride = Field(default_factory=RouteOverride)
    colo: RouteOverride = Field(default_factory=RouteOverride)
    lease: RouteOverride = Field(default_factory=RouteOverride)
    cloud: RouteOverride = Field(default_factory=RouteOverride)
    existing: Existing = Field(default_factory=Existing)
    uncertainty: Uncertainty = Field(default_factory=Uncertainty)

    @field_validator("options")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("each route at most once")
        return v

    @field_validator("residual_frac_per_year")
    @classmethod
    def _fractions(cls, v: list[float] | None) -> list[float] | None:
        if v is not None and any(not 0 <= f <= 1 for f in v):
            raise ValueError("fractions of the purchase price, each from 0 to 1")
        if v is not None and any(b > a for a, b in zip(v, v[1:], strict=False)):
            raise ValueError("resale value cannot rise with age: each year at most the one before")
        return v

    @model_validator(mode="after")
    def _size_needs_target(self) -> Decision:
        if self.size_to_target and self.target_date is None:
            raise ValueError("size_to_target needs decision.target_date (the date to size for)")
        return self
