"""What the decision stage reads from the stages before it, gathered once."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, NamedTuple

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
    rate: float = 0.08                     #: decision.discount_rate (capital recovery and NPV)
    haircut: float = 0.15                  #: disposal haircut of owned hardware sold after the run
    holding_curve: tuple[float, ...] | None = None  #: decision.residual_frac_per_year (1.0 first)
    mfu: float = 0.0                       #: MFU of the run at ``gpus``
    colo_usd_per_kw_month: float = 0.0     #: colocation rent: the economics cost book's (one figure)
    cloud_price: float | None = None       #: economics' on-demand price (its result: one figure)
    deadline_days: float | None = None     #: cluster.deadline_days in these wall-clock days (goodput included)
    gpu_lead: tuple[float, float] = (0.0, 0.0)  #: GPU order lead time (P50, P90): the build-out's step 1
    mfu_band: tuple[float, float] = (1.0, 1.0)  #: wall-clock multipliers at the training band's ends
    #: multipliers the route Monte Carlo moves (1.0 = the figures as given)
    rental_scale: float = 1.0              #: lease and on-demand GPU-hour prices
    colo_scale: float = 1.0                #: colocation rent
    resale_scale: float = 1.0              #: resale value of owned hardware
    region: str = "northern-virginia"      #: decision.region: the utility and colocation market

    def scaled(self, m: float, *names: str) -> Inputs:
        """A copy with each field of ``names`` multiplied by ``m`` (the route Monte Carlo's
        moves, a dozen per route: ``dataclasses.replace`` re-runs ``__init__`` over every field,
        this copies the instance's fields and changes those)."""
        values = dict(self.__dict__)
        for name in names:
            values[name] = values[name] * m
        new = object.__new__(Inputs)
        new.__dict__.update(values)
        return new


class Upstream(NamedTuple):
    """The results of the stages before the decision (None where one did not run)."""

    training: Any
    design: Any
    reliability: Any
    economics: Any
    buildout: Any


def wall_days(training: Any, reliability: Any, economics: Any) -> tuple[float, float]:
    """(P50, P90) wall-clock days with every goodput part (data stalls, restarts, failures):
    the training estimate's ``wall_clock_days`` (the reliability stage's ETTR charged in it),
    its P90 spread from the reliability stage's P95 on a normal spread; without reliability, the
    economics stage's failure-adjusted days, else the training estimate's."""
    wall = float(training.wall_clock_days or 0.0)
    if reliability is not None:
        mean = float(reliability.effective_days)
        p95 = float(reliability.effective_days_p95 or mean)
        p90 = mean + max(0.0, p95 - mean) * Z90 / Z95
        ratio = wall / mean if wall > mean else 1.0  # the goodput parts besides failures
        return mean * ratio, p90 * ratio
    days = (economics.run_days_wall_clock if economics is not None else None) or wall or float(training.days)
    return float(days), float(days)


def gather(scenario: Any, catalog: Any, training: Any, design: Any, reliability: Any,
           economics: Any, buildout: Any) -> Inputs:
    """The decision's inputs from the earlier stages' results (none recomputed)."""
    from clustertwin.economics.model import facility_capex_usd

    node = catalog.node(scenario.cluster.node)
    book = catalog.get("costs", scenario.economics.costs)
    cap, opex = economics.capex_by_category_usd, economics.opex_by_category_usd_per_month
    # a build buys the plant and the fit-out (economics' BOM lines, whatever economics.facility
    # prices the owned cluster in); without plant lines, the cost book's $/MW
    plant = float(economics.plant_if_built_usd or 0.0)
    fitout = float(economics.capex_fitout_usd or 0.0)
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
        rate=float(scenario.decision.discount_rate), haircut=_haircut(scenario, catalog),
        holding_curve=(None if scenario.decision.residual_frac_per_year is None
                       else (1.0, *scenario.decision.residual_frac_per_year)),
        mfu=float(training.mfu or 0.0), mfu_band=_band(training),
        deadline_days=_deadline(scenario, reliability, w50),
        gpu_lead=gpu_lead(catalog, catalog.gpu(scenario.cluster.gpu).generation, buildout),
        colo_usd_per_kw_month=book.value("colo_usd_per_kw_month"),
        cloud_price=float(economics.cloud_usd_per_gpu_hour or 0.0) or None,
        region=scenario.decision.region,
    )


def gpu_lead(catalog: Any, generation: str, buildout: Any) -> tuple[float, float]:
    """The GPU order lead time (P50, P90) every route waits for: the build-out's step 1 (the
    catalog's figure for the generation, or the profile's own: servers from stock, a standing
    allocation), else the catalog's."""
    from clustertwin.catalog.lookup import gpu_lead_days

    step = next((s for s in (buildout.steps if buildout is not None else ()) if s.number == 1), None)
    if step is not None and step.applicable:
        return float(step.likely_days), float(step.pessimistic_days)
    p50, p90, _ = gpu_lead_days(catalog, generation)
    return p50, p90


def _deadline(scenario: Any, reliability: Any, wall: float) -> float | None:
    """``cluster.deadline_days`` as the routes' wall-clock days: the deadline solver meets the
    reliability stage's days (failures, checkpoints, restarts); the routes' days also carry the
    run's other goodput losses, so the deadline grows by the same ratio."""
    days = scenario.cluster.deadline_days
    if days is None:
        return None
    eff = float(reliability.effective_days or 0.0) if reliability is not None else 0.0
    basis = scenario.cluster.deadline_basis
    return float(days) * (wall / eff if eff > 0 and basis == "wall-clock" else 1.0)


def _band(training: Any) -> tuple[float, float]:
    """The training stack's calibration band as multipliers of its days (1, 1 when not computed)."""
    days, lo, hi = (float(x or 0.0) for x in (training.days, training.days_low, training.days_high))
    if days <= 0 or lo <= 0 or hi <= 0:
        return 1.0, 1.0
    return min(1.0, lo / days), max(1.0, hi / days)


def _haircut(scenario: Any, catalog: Any) -> float:
    own = scenario.decision.disposal_haircut
    return float(own) if own is not None else float(
        catalog.get("route", "residual", path="route residual").value("disposal_haircut"))
