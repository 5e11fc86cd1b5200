"""What the decision stage reads from the stages before it, gathered once."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

#: one-sided normal quantiles: P90 of wall-clock days from the reliability stage's P95
Z90, Z95 = 1.2816, 1.6449
OPEX_RUN_LINES = ("energy", "staff", "maintenance")
IT_LINES = ("compute", "network", "storage", "other", "integration")


@dataclass(frozen=True)
class Inputs:
    """The run and the owned cluster, as the routes price them (days from ``start``)."""

    start: _dt.date               #: the decision date (``buildout.start_date``)
    generation: str               #: GPU generation (routes' price and lead-time key)
    gpus: int                     #: GPUs the run uses
    node_gpus: int                #: GPUs per node (the smallest rentable unit)
    installed_gpus: int           #: GPUs the owned cluster installs (spares included)
    wall_p50: float               #: wall-clock days of the run, failures included
    wall_p90: float
    it_kw: float                  #: provisioned IT load of the owned cluster
    facility_kw: float            #: IT load x PUE (what the utility connects)
    it_capex: float               #: owned IT hardware (compute, network, storage, integration)
    fitout_capex: float           #: tenant power/cooling lines (colocation only)
    facility_capex: float         #: building shell and its power/cooling plant (build only)
    facility_om_frac: float       #: facility O&M per year, fraction of its capex
    facility_life_years: float
    depreciation_years: float     #: straight-line life of IT equipment (economics section)
    run_opex_month: float         #: energy, staff and maintenance per month of the run
    staff_note: str
    waves: tuple[tuple[float, int], ...]   #: (days, cumulative GPUs) on the P50 build schedule
    go_live_p50: float
    go_live_p90: float


def wall_days(training: Any, reliability: Any, economics: Any) -> tuple[float, float]:
    """(P50, P90) wall-clock days: the reliability stage's (P90 interpolated from its P95 on a
    normal spread), else the economics stage's failure-adjusted days, else failure-free days."""
    if reliability is not None:
        mean = float(reliability.effective_days)
        p95 = float(reliability.effective_days_p95 or mean)
        return mean, mean + max(0.0, p95 - mean) * Z90 / Z95
    days = (economics.run_days_wall_clock if economics is not None else None) or float(training.days)
    return float(days), float(days)


def gather(scenario: Any, catalog: Any, training: Any, design: Any, reliability: Any,
           economics: Any, buildout: Any) -> Inputs:
    """The decision's inputs from the earlier stages' results (none recomputed)."""
    from clustertwin.economics.model import facility_capex_usd

    node = catalog.node(scenario.cluster.node)
    book = catalog.get("costs", scenario.economics.costs)
    cap, opex = economics.capex_by_category_usd, economics.opex_by_category_usd_per_month
    plant, fitout = (float(getattr(economics, "capex_plant_usd", 0.0) or 0.0),
                     float(getattr(economics, "capex_fitout_usd", 0.0) or 0.0))
    # a build buys the plant and the fit-out (economics' BOM lines); without plant lines, $/MW
    facility = (plant + fitout) or facility_capex_usd(economics.it_kw, book.value("facility_build_usd_per_mw"))
    life = book.value("facility_life_years") if "facility_life_years" in book.items else 20.0
    w50, w90 = wall_days(training, reliability, economics)
    waves = tuple((float(w["days"]), int(w["cumulative_gpus"]))
                  for w in (buildout.waves if buildout is not None else ()) or ())
    staff_min = book.value("staff_fte_min")
    return Inputs(
        start=scenario.buildout.start_date, generation=catalog.gpu(scenario.cluster.gpu).generation,
        gpus=int(training.gpus), node_gpus=int(node.gpus), installed_gpus=int(economics.cluster_gpus),
        wall_p50=w50, wall_p90=max(w50, w90), it_kw=float(economics.it_kw),
        facility_kw=float(economics.it_kw) * float(economics.pue),
        it_capex=sum(cap.get(k, 0.0) for k in IT_LINES),
        fitout_capex=fitout,
        facility_capex=float(facility), facility_om_frac=book.value("facility_om_frac_per_year"),
        facility_life_years=life, depreciation_years=float(scenario.economics.depreciation_years), run_opex_month=sum(opex.get(k, 0.0) for k in OPEX_RUN_LINES),
        staff_note=f"staff floor {staff_min:g} FTE (cost book {book.id})",
        waves=waves,
        go_live_p50=float(buildout.go_live_days_p50 or 0.0) if buildout is not None else 0.0,
        go_live_p90=float(buildout.go_live_days_p90 or 0.0) if buildout is not None else 0.0,
    )
