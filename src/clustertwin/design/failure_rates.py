"""Turn a failure profile (catalog data) into the failure rates of one job.

A profile gives a total rate per 1000 node-days of its basis run and a cause mix. For a job of
``gpus`` GPUs on nodes of ``gpus_per_node``, a cause that scales with GPUs sees
``gpus / profile.gpus_per_node`` basis node-equivalents, one that scales with nodes sees the
job's node count. Planned interruptions are a per-job-day rate that does not scale with size.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from clustertwin.catalog.lookup import FALLBACK_PROFILE, default_profile_id
from clustertwin.catalog.models import FailureProfile

__all__ = ["FALLBACK_PROFILE", "HOURS_PER_DAY", "JobRates", "default_profile_id", "job_rates",
           "profile_for", "scenario_rates"]

HOURS_PER_DAY = 24.0


@dataclass(frozen=True)
class JobRates:
    """Failure rates of one job, per hour of wall-clock time."""

    causes: tuple[str, ...]
    rates_per_h: tuple[float, ...]        #: unexpected interruptions per hour, by cause
    needs_repair: tuple[bool, ...]
    planned_per_h: float                  #: planned (graceful) interruptions per hour
    repair_h: float                       #: repair turnaround of a failed node, hours
    per_1000_node_days: float             #: total unexpected rate used, per basis node

    @property
    def unexpected_per_h(self) -> float:
        return float(sum(self.rates_per_h))

    @property
    def mtbf_h(self) -> float:
        """Job mean time between unexpected interruptions, hours (inf without failures)."""
        lam = self.unexpected_per_h
        return 1.0 / lam if lam > 0 else float("inf")

    @property
    def repair_share(self) -> float:
        lam = self.unexpected_per_h
        if lam <= 0:
            return 0.0
        return float(np.dot(self.rates_per_h, self.needs_repair)) / lam


def job_rates(profile: FailureProfile, gpus: int, node_gpus: int,
              per_1000_node_days: float | None = None, include_planned: bool = True) -> JobRates:
    """Rates for a job of ``gpus`` GPUs on nodes of ``node_gpus`` GPUs. ``per_1000_node_days``
    overrides the profile's total (the cause mix is kept)."""
    total = profile.total_per_1000_node_days if per_1000_node_days is None else per_1000_node_days
    shares = profile.cause_shares()
    per_node_h = total / 1000.0 / HOURS_PER_DAY
    names, rates, repair = [], [], []
    for name, share in shares.items():
        cause = profile.causes.get(name)
        scales = cause.scales_with if cause is not None else "gpus"
        units = gpus / profile.gpus_per_node if scales == "gpus" else gpus / node_gpus
        names.append(name)
        rates.append(share * per_node_h * units)
        repair.append(cause.needs_repair if cause is not None else True)
    planned = profile.planned_per_day / HOURS_PER_DAY if include_planned else 0.0
    return JobRates(tuple(names), tuple(rates), tuple(repair), planned, profile.repair_h, total)


def profile_for(scenario, catalog) -> FailureProfile:
    """The scenario's failure profile (``auto`` resolved by the cluster's GPU generation)."""
    pid = scenario.reliability.failure_profile
    if pid == "auto":
        pid = default_profile_id(catalog, scenario.cluster.gpu)
    return catalog.get("failure_profile", pid, source=scenario.source,
                       path="reliability.failure_profile")


def scenario_rates(scenario, profile: FailureProfile, gpus: int, node_gpus: int,
                   include_planned: bool = True) -> JobRates:
    """:func:`job_rates` under the scenario's reliability section: its
    ``failures_per_1000_node_days`` override and ``repair_h`` (the one reading of those keys
    for the job analysis, the shared cluster's rates and the spares rule)."""
    r = scenario.reliability
    override = None if r.failures_per_1000_node_days == "auto" else float(r.failures_per_1000_node_days)
    rates = job_rates(profile, gpus, node_gpus, override, include_planned=include_planned)
    repair = r.repair_h
    return rates if repair == "auto" else replace(rates, repair_h=float(repair))
