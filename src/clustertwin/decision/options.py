"""One priced, dated option per procurement route (build, colo, lease, cloud).

Each returns an :class:`Option`: ready/start days and wall-clock days at P50 and P90 (days from
the decision date) and the monthly cash flows of the P50 case. Owned routes (build, colo) buy
hardware just in time (paid on delivery, shortly before its capacity is accepted), pay the
run's energy, staff and maintenance while it trains, and sell the hardware at the end of the
run at the resale curve's value for its age. Rented routes pay the provider's price.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clustertwin.decision import cash
from clustertwin.decision.inputs import Inputs
from clustertwin.decision.routes import (
    hardware_ready_days,
    per_generation,
    residual_fraction,
    route,
)

HOURS_PER_MONTH = 730.0
DAYS_PER_YEAR = 365.25


@dataclass(frozen=True)
class Option:
    mode: str
    gpus: int
    ready: tuple[float, float]      #: (P50, P90) days to capacity ready
    start: tuple[float, float]      #: (P50, P90) days to the run's start
    wall: tuple[float, float]       #: (P50, P90) wall-clock days of the run (phased runs summed)
    flows: np.ndarray               #: monthly cash, P50 case (+ out, - in)
    capex_usd: float = 0.0
    residual_usd: float = 0.0
    amortized_usd: float | None = None  #: owned: depreciation + running costs of the run's days only
    notes: tuple[str, ...] = field(default_factory=tuple)
    max_gpus: int | None = None         #: most GPUs the route can supply (cloud without a contract)


def phased_days(offsets: list[float], fracs: list[float], full_days: float) -> float:
    """Wall-clock days from the first wave until the run is done when capacity grows in waves
    (``offsets`` days after the first wave, ``fracs`` cumulative share of the GPUs) and progress
    is proportional to the GPUs in use (the run re-plans at each wave)."""
    work, t = full_days, 0.0
    for k, frac in enumerate(fracs):
        nxt = offsets[k + 1] if k + 1 < len(offsets) else math.inf
        span = nxt - offsets[k]
        if frac * span >= work:
            return offsets[k] + work / frac
        work -= frac * span
        t = nxt
    return t  # unreachable: the last wave's span is infinite


def _owned_flows(inp: Inputs, purchases: list[tuple[float, float]], start: float, end: float,
                 rent_from: float, rent_usd_month: float, curve: list[float]) -> tuple[np.ndarray, float]:
    """Cash of an owned cluster: hardware paid on ``purchases`` (day, USD), rent from
    ``rent_from`` to the end, the run's opex from ``start`` to ``end``, resale at ``end``."""
    flows = np.zeros(1)
    for day, usd in purchases:
        flows = cash.add(flows, day, usd)
    flows = cash.spread(flows, rent_from, end, rent_usd_month / cash.DAYS_PER_MONTH)
    flows = cash.spread(flows, start, end, inp.run_opex_month / cash.DAYS_PER_MONTH)
    resale = sum(usd * residual_fraction(curve, (end - day) / DAYS_PER_YEAR) for day, usd in purchases)
    return cash.add(flows, end, -resale), resale


def amortized(inp: Inputs, it_capex: float, facility_capex: float, extra_usd_month: float, wall: float) -> float:
    """The run's share of owning: straight-line depreciation (IT over ``economics.depreciation_years``,
    the facility over its life) and the running costs, for the run's wall-clock days only."""
    years = wall / DAYS_PER_YEAR
    return (it_capex * years / inp.depreciation_years + facility_capex * years / inp.facility_life_years
            + (inp.run_opex_month + extra_usd_month) * wall / cash.DAYS_PER_MONTH)


def _override(o: Any, p50: float, p90: float) -> tuple[float, float]:
    if o.ready_days is None:
        return p50, p90
    return float(o.ready_days), float(o.ready_days_p90 if o.ready_days_p90 is not None else o.ready_days)


def _build_ready(inp: Inputs, catalog: Any, o: Any, notes: list[str]) -> tuple[float, float]:
    """Go-live of the build-out (P50, P90), no earlier than the utility's wait for a large load."""
    if o.ready_days is not None:
        return _override(o, inp.go_live_p50, inp.go_live_p90)
    grid = route(catalog, "build")
    r50, r90 = inp.go_live_p50, inp.go_live_p90
    mw = inp.facility_kw / 1000.0
    if mw > grid.value("grid_large_load_mw"):
        r50, r90 = max(r50, grid.value("grid_wait_days_p50")), max(r90, grid.value("grid_wait_days_p90"))
        notes.append(f"build: {mw:,.0f} MW is past the utility's {grid.value('grid_large_load_mw'):g} MW "
                     f"large-load queue (ready no earlier than the grid connection)")
    return r50, r90


def _waves(inp: Inputs, ready: float) -> list[tuple[float, float]]:
    """(day, cumulative share of GPUs) per wave, the last on ``ready``."""
    if not inp.waves:
        return [(ready, 1.0)]
    shift = ready - inp.waves[-1][0]
    total = inp.waves[-1][1]
    return [(d + shift, g / total) for d, g in inp.waves]


def build(inp: Inputs, catalog: Any, settings: Any, curve: list[float]) -> Option:
    """A new facility: the build-out's waves, phased start, facility capex during construction."""
    notes: list[str] = []
    r50, r90 = _build_ready(inp, catalog, settings.build, notes)
    first_wave = settings.start == "first-wave"
    starts, walls = [], []
    for ready, wall in ((r50, inp.wall_p50), (r90, inp.wall_p90)):
        waves = _waves(inp, ready) if first_wave else [(ready, 1.0)]
        offsets = [d - waves[0][0] for d, _ in waves]
        starts.append(waves[0][0])
        walls.append(phased_days(offsets, [f for _, f in waves], wall))
    install = route(catalog, "hardware").value("first_rack_to_training_days")
    waves = _waves(inp, r50)
    purchases, prev = [], 0.0
    for day, frac in waves:  # each wave's hardware arrives just before its acceptance
        purchases.append((max(0.0, day - install), inp.it_capex * (frac - prev)))
        prev = frac
    end = starts[0] + walls[0]
    flows, resale = _owned_flows(inp, purchases, starts[0], end, end, 0.0, curve)
    built = max(1.0, waves[0][0] - install)  # facility paid evenly until the first hall is ready
    flows = cash.spread(flows, 0.0, built, inp.facility_capex / built)
    flows = cash.spread(flows, starts[0], end, inp.facility_capex * inp.facility_om_frac / DAYS_PER_YEAR)
    book = inp.facility_capex * max(0.0, 1.0 - (end - built) / DAYS_PER_YEAR / inp.facility_life_years)
    flows = cash.add(flows, end, -book)
    if first_wave and len(waves) > 1:
        notes.append(f"build: training starts on the first of {len(waves)} waves and re-plans at each "
                     "(progress proportional to the GPUs accepted)")
    om = inp.facility_capex * inp.facility_om_frac / 12.0
    return Option("build", inp.gpus, (r50, r90), (starts[0], starts[1]), (walls[0], walls[1]), flows,
                  inp.it_capex + inp.facility_capex, resale + book,
                  amortized(inp, inp.it_capex, inp.facility_capex, om, walls[0]), tuple(notes))


def colo(inp: Inputs, catalog: Any, settings: Any, curve: list[float]) -> Option:
    """Racks in an existing hall: space in weeks (a block past one site's largest is preleased
    and takes years), hardware at its lead time, rent on the provisioned IT kW."""
    notes: list[str] = []
    c, o = route(catalog, "colo"), settings.colo
    mw = inp.it_kw / 1000.0
    if mw <= c.value("largest_block_mw"):
        space = (c.value("ready_days_p50"), c.value("ready_days_p90"))
    else:
        space = (c.value("prelease_days_p50"), c.value("prelease_days_p90"))
        notes.append(f"colo: {mw:,.1f} MW of IT load is more than one site's largest free block "
                     f"({c.value('largest_block_mw'):g} MW): preleased capacity")
    hw = hardware_ready_days(catalog, inp.generation, inp.installed_gpus, notes)
    r50, r90 = _override(o, max(space[0], hw[0]), max(space[1], hw[1]))
    delivery = max(0.0, r50 - route(catalog, "hardware").value("first_rack_to_training_days"))
    rate = o.usd_per_kw_month or c.value("usd_per_kw_month")
    end = r50 + inp.wall_p50
    capex = inp.it_capex + inp.fitout_capex
    flows, resale = _owned_flows(inp, [(delivery, capex)], r50, end, min(space[0], r50), rate * inp.it_kw, curve)
    return Option("colo", inp.gpus, (r50, r90), (r50, r90), (inp.wall_p50, inp.wall_p90), flows,
                  capex, resale, amortized(inp, capex, 0.0, rate * inp.it_kw, inp.wall_p50), tuple(notes))


def lease(inp: Inputs, catalog: Any, settings: Any, curve: list[float]) -> Option:
    """Reserved capacity from a GPU cloud: a committed term at the generation's contract price;
    a count past what a provider hands over now waits for the provider's own hardware."""
    notes: list[str] = []
    ls, o = route(catalog, "lease"), settings.lease
    r50 = r90 = ls.value("contract_days")
    if inp.gpus > ls.value("ready_gpus_now"):
        hw = hardware_ready_days(catalog, inp.generation, inp.gpus, notes)
        r50, r90 = r50 + hw[0], r90 + hw[1]
        notes.append(f"lease: {inp.gpus:,} GPUs is more than a provider hands over now "
                     f"({ls.value('ready_gpus_now'):,.0f}); it installs them first")
    r50, r90 = _override(o, r50, r90)
    price = o.usd_per_gpu_hour or per_generation(ls, "usd_per_gpu_hour", inp.generation, notes)
    term_min = o.min_term_months if o.min_term_months is not None else ls.value("min_term_months")
    months = max(term_min, inp.wall_p50 / cash.DAYS_PER_MONTH)
    total = inp.gpus * price * HOURS_PER_MONTH * months
    days = months * cash.DAYS_PER_MONTH
    flows = cash.spread(np.zeros(1), r50, r50 + days, total / days if days else 0.0)
    if months > inp.wall_p50 / cash.DAYS_PER_MONTH:
        notes.append(f"lease: the {term_min:g}-month minimum term is paid though the run takes "
                     f"{inp.wall_p50 / cash.DAYS_PER_MONTH:.1f} months")
    return Option("lease", inp.gpus, (r50, r90), (r50, r90), (inp.wall_p50, inp.wall_p90), flows,
                  notes=tuple(notes))


def cloud(inp: Inputs, catalog: Any, settings: Any, curve: list[float]) -> Option:
    """On-demand instances: ready in days, but only up to the count one account gets without a
    contract; a larger run is sized down and takes longer (progress proportional to GPUs)."""
    notes: list[str] = []
    cl, o = route(catalog, "cloud"), settings.cloud
    cap = int(o.max_gpus or cl.value("max_gpus"))
    gpus = min(inp.gpus, max(inp.node_gpus, cap // inp.node_gpus * inp.node_gpus))
    scale = inp.gpus / gpus
    if scale > 1:
        notes.append(f"cloud: {inp.gpus:,} GPUs is past the {cap:,} one account gets on demand; "
                     f"the run uses {gpus:,} and takes {scale:.1f}x as long")
    r50, r90 = _override(o, cl.value("ready_days"), cl.value("ready_days"))
    price = o.usd_per_gpu_hour or per_generation(cl, "usd_per_gpu_hour", inp.generation, notes)
    w50, w90 = inp.wall_p50 * scale, inp.wall_p90 * scale
    flows = cash.spread(np.zeros(1), r50, r50 + w50, gpus * price * 24.0)
    return Option("cloud", gpus, (r50, r90), (r50, r90), (w50, w90), flows, max_gpus=cap, notes=tuple(notes))


def gpus_to_meet(o: Option, days_left: float, node_gpus: int, confidence: str) -> int | None:
    """GPUs this route would need to finish within ``days_left`` of the decision date: the
    run's GPU-days held (progress proportional to GPUs, start date unchanged), in whole nodes.
    None when the route cannot start in time or would need more than it can supply. An
    estimate: the per-GPU throughput and failure rate of a resized cluster are not re-solved."""
    k = 1 if confidence == "p90" else 0
    available = days_left - o.start[k]
    if available <= 0:
        return None
    need = max(1, math.ceil(o.gpus * o.wall[k] / available / node_gpus)) * node_gpus
    return None if o.max_gpus is not None and need > o.max_gpus else need


BUILDERS = {"build": build, "colo": colo, "lease": lease, "cloud": cloud}
