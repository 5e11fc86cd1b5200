"""One priced, dated option per procurement route (build, colo, lease, cloud, existing).

Each returns an :class:`Option`: ready/start days and wall-clock days at P50 and P90 (days from
the decision date), its cost on the usage basis and the monthly cash flows of the P50 case on
the exit basis (:mod:`clustertwin.decision.basis`), the latter priced when first read: the route
Monte Carlo prices each route a dozen times and, on the usage basis, reads none of them. On the exit basis owned routes (build, colo)
buy hardware just in time (paid on delivery, shortly before its capacity is accepted), pay the
run's energy, staff and maintenance while it trains and every commitment (a colocation
contract's term), and sell the hardware at the end of the run at its market value by product
age less a disposal haircut. Rented routes pay the provider's price (a lease its minimum term).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

import numpy as np

from clustertwin.decision import cash
from clustertwin.decision.basis import market_fraction, recovery_usd
from clustertwin.decision.inputs import Inputs
from clustertwin.decision.routes import (
    colo_ready_chance,
    grid_wait_days,
    hardware_ready_days,
    per_generation,
    region,
    route,
)

HOURS_PER_MONTH = 730.0
DAYS_PER_YEAR = 365.25


@dataclass(frozen=True)
class Option:
    """One route dated and priced: GPUs, ready and start days, cash flows."""

    mode: str
    gpus: int
    ready: tuple[float, float]      #: (P50, P90) days to capacity ready
    start: tuple[float, float]      #: (P50, P90) days to the run's start
    wall: tuple[float, float]       #: (P50, P90) wall-clock days of the run (phased runs summed)
    #: the exit basis of the P50 case: () -> (monthly cash, + out - in; residual value in USD)
    exit_cash: Callable[[], tuple[np.ndarray, float]]
    usage_usd: float = 0.0          #: the capacity-time the run uses (usage basis)
    capex_usd: float = 0.0
    commitment_months: float = 0.0  #: minimum term charged on the exit basis
    lead_days: float = 0.0          #: the GPU lead time (P50) the route waited for, 0 if none
    mfu: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)
    max_gpus: int | None = None         #: most GPUs the route can supply (cloud without a contract)
    grid: tuple[float, float] = (0.0, 0.0)  #: the region's utility wait (P50, P90) the start waits for
    start_own: tuple[float, float] | None = None  #: (P50, P90) start without that wait

    @cached_property
    def _exit(self) -> tuple[np.ndarray, float]:
        return self.exit_cash()

    @property
    def flows(self) -> np.ndarray:
        """Monthly cash on the exit basis, P50 case (+ out, - in)."""
        return self._exit[0]

    @property
    def residual_usd(self) -> float:
        """What the owned hardware (and a build's facility) is worth after the run."""
        return self._exit[1]


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


def _date(inp: Inputs, day: float) -> Any:
    import datetime as _dt

    return inp.start + _dt.timedelta(days=max(day, 0.0))


def resale_usd(inp: Inputs, catalog: Any, purchases: list[tuple[float, float]], sold: float) -> float:
    """Market value on day ``sold`` of hardware bought on each purchase day, less the haircut."""
    return inp.resale_scale * sum(usd * market_fraction(catalog, inp.generation, _date(inp, day), _date(inp, sold),
                                     inp.haircut, inp.holding_curve or None)
               for day, usd in purchases)


def _owned_flows(inp: Inputs, catalog: Any, purchases: list[tuple[float, float]], start: float,
                 end: float, rent: tuple[float, float, float]) -> tuple[np.ndarray, float]:
    """Exit cash of an owned cluster: hardware paid on ``purchases`` (day, USD), rent
    ``(from, to, usd_per_month)``, the run's opex from ``start`` to ``end``, resale at ``end``."""
    flows = np.zeros(1)
    for day, usd in purchases:
        flows = cash.add(flows, day, usd)
    flows = cash.spread(flows, rent[0], rent[1], rent[2] / cash.DAYS_PER_MONTH)
    flows = cash.spread(flows, start, end, inp.run_opex_month / cash.DAYS_PER_MONTH)
    # the hardware is priced at the decision date (the design's bill of materials): its market
    # value at the sale moves from that date along the generation's price-by-age curve
    resale = resale_usd(inp, catalog, [(0.0, usd) for _, usd in purchases], end)
    return cash.add(flows, end, -resale), resale


def usage_owned(inp: Inputs, it: list[tuple[float, float]], end: float, start: float,
                facility_capex: float, extra_usd_month: float) -> float:
    """Usage basis of an owned route: capital recovery of each purchase (day it is in use, USD)
    over the IT life (``economics.depreciation_years``) until ``end``, of the facility over its
    life from ``start``, plus ``extra_usd_month`` (rent, facility O&M) and the run's opex."""
    days = end - start
    return (sum(recovery_usd(usd, inp.rate, inp.depreciation_years, end - max(day, start)) for day, usd in it)
            + recovery_usd(facility_capex, inp.rate, inp.facility_life_years, days)
            + (inp.run_opex_month + extra_usd_month) * days / cash.DAYS_PER_MONTH)


def _override(o: Any, p50: float, p90: float) -> tuple[float, float]:
    if o.ready_days is None:
        return p50, p90
    return float(o.ready_days), float(o.ready_days_p90 if o.ready_days_p90 is not None else o.ready_days)


def _build_ready(inp: Inputs, catalog: Any, o: Any, site: str,
                 notes: list[str]) -> tuple[tuple[float, float], tuple[float, float]]:
    """The build-out's own go-live (P50, P90; the route's override if given) and the region's
    utility wait for the facility's load (P50, P90; (0, 0) on a site with power contracted:
    ``decision.site``, or with an override). Capacity is ready at the later of the two."""
    if o.ready_days is not None:
        return _override(o, inp.go_live_p50, inp.go_live_p90), (0.0, 0.0)
    own = (inp.go_live_p50, inp.go_live_p90)
    if site != "greenfield":
        notes.append(f"build: decision.site {site}: power is contracted, no utility queue")
        return own, (0.0, 0.0)
    mw = inp.facility_kw / 1000.0
    g50, g90 = grid_wait_days(catalog, inp.region, mw)
    if g50 > own[0]:
        notes.append(f"build: the utility ({inp.region}) energises {mw:,.0f} MW in {g50:,.0f} days (P50; {g90:,.0f} at P90), "
                     f"after the build-out's go-live: waves wait for the grid")
    return own, (g50, g90)


def _waves(inp: Inputs, ready: float, grid: float = 0.0) -> list[tuple[float, float]]:
    """(day, cumulative share of GPUs) per wave: the build-out's waves moved so the last is on
    ``ready`` (the build-out's own go-live at this percentile), none before the decision date
    or the grid's energisation (``grid``, at the same percentile)."""
    if not inp.waves:
        return [(max(ready, grid), 1.0)]
    shift = ready - inp.waves[-1][0]
    total = inp.waves[-1][1]
    return [(max(d + shift, grid, 0.0), g / total) for d, g in inp.waves]


def build(inp: Inputs, catalog: Any, settings: Any) -> Option:
    """A new facility: the build-out's waves, phased start, facility capex during construction."""
    notes: list[str] = []
    own, grid = _build_ready(inp, catalog, settings.build, settings.site, notes)
    r50, r90 = max(own[0], grid[0]), max(own[1], grid[1])
    first_wave = settings.start == "first-wave"
    starts, walls = _build_starts(inp, own, grid, first_wave)
    # the start without the utility's wait: the route Monte Carlo draws the grid on its own
    own_start = _build_starts(inp, own, (0.0, 0.0), first_wave)[0] if grid[0] > 0 else None
    install = route(catalog, "hardware").value("first_rack_to_training_days")
    waves = _waves(inp, own[0], grid[0])
    purchases, accepted, prev = [], [], 0.0
    for day, frac in waves:  # each wave's hardware arrives just before its acceptance
        purchases.append((max(0.0, day - install), inp.it_capex * (frac - prev)))
        accepted.append((day, inp.it_capex * (frac - prev)))
        prev = frac
    end = starts[0] + walls[0]
    built = max(1.0, waves[0][0] - install)  # facility paid evenly until the first hall is ready
    if first_wave and len(waves) > 1:
        notes.append(f"build: training starts on the first of {len(waves)} waves and re-plans at each "
                     "(progress proportional to the GPUs accepted)")
    om = inp.facility_capex * inp.facility_om_frac / 12.0
    usage = usage_owned(inp, accepted, end, starts[0], inp.facility_capex, om)
    return Option("build", inp.gpus, (r50, r90), (starts[0], starts[1]), (walls[0], walls[1]),
                  partial(_build_exit, inp, catalog, purchases, built, starts[0], end),
                  usage, inp.it_capex + inp.facility_capex, lead_days=inp.gpu_lead[0],
                  mfu=inp.mfu, notes=tuple(notes), grid=grid,
                  start_own=None if own_start is None else (own_start[0], own_start[1]))


def _build_exit(inp: Inputs, catalog: Any, purchases: list[tuple[float, float]], built: float,
                start: float, end: float) -> tuple[np.ndarray, float]:
    """Exit cash of a build (flows, residual): the owned cluster's (:func:`_owned_flows`), the
    facility paid evenly until day ``built`` (the first hall ready), its O&M while the run
    trains, and its book value at the end of the run (straight line over its life) back."""
    flows, resale = _owned_flows(inp, catalog, purchases, start, end, (end, end, 0.0))
    flows = cash.spread(flows, 0.0, built, inp.facility_capex / built)
    flows = cash.spread(flows, start, end, inp.facility_capex * inp.facility_om_frac / DAYS_PER_YEAR)
    book = inp.facility_capex * max(0.0, 1.0 - (end - built) / DAYS_PER_YEAR / inp.facility_life_years)
    return cash.add(flows, end, -book), resale + book


def _rented_exit(day0: float, day1: float, usd_per_day: float) -> tuple[np.ndarray, float]:
    """Exit cash of rented capacity: ``usd_per_day`` from ``day0`` to ``day1``, nothing owned."""
    return cash.spread(np.zeros(1), day0, day1, usd_per_day), 0.0


def _build_starts(inp: Inputs, own: tuple[float, float], grid: tuple[float, float],
                  first_wave: bool) -> tuple[list[float], list[float]]:
    """(P50, P90) start days and wall-clock days of the build's run: the build-out's own
    go-live ``own`` and the utility's wait ``grid`` (each P50, P90); a first-wave start trains
    from the first wave and re-plans at each, a full start from the later of the two."""
    starts, walls = [], []
    for r, g, wall in ((own[0], grid[0], inp.wall_p50), (own[1], grid[1], inp.wall_p90)):
        waves = _waves(inp, r, g) if first_wave else [(max(r, g), 1.0)]
        offsets = [d - waves[0][0] for d, _ in waves]
        starts.append(waves[0][0])
        walls.append(phased_days(offsets, [f for _, f in waves], wall))
    return starts, walls


def colo_term_months(inp: Inputs, catalog: Any) -> float:
    """The colocation contract's minimum term: retail up to the wholesale size, wholesale past it."""
    c = route(catalog, "colo")
    big = inp.it_kw > c.value("wholesale_above_kw")
    return float(c.value("min_term_months_wholesale" if big else "min_term_months_retail"))


def colo_space_days(inp: Inputs, catalog: Any, notes: list[str]) -> tuple[float, float]:
    """(P50, P90) days to space for the IT load in a colocation hall of the region: weeks for a
    block found in existing powered space, preleased years for one that is not, blended by the
    chance of finding it (1 up to the region's small block, 0 past the largest one site hands
    over)."""
    c, m = route(catalog, "colo"), region(catalog, inp.region).colo
    mw = inp.it_kw / 1000.0
    p = colo_ready_chance(catalog, inp.region, mw)
    if p < 1.0:
        notes.append(f"colo: {mw:,.1f} MW of IT load in {inp.region}: {p:.0%} chance of a block in existing "
                     f"powered space (blocks up to {m.small_block_mw:g} MW found, none past "
                     f"{m.largest_block_mw:g} MW); the rest preleased")
    return (p * c.value("ready_days_p50") + (1 - p) * m.prelease_days_p50,
            p * c.value("ready_days_p90") + (1 - p) * m.prelease_days_p90)


def colo(inp: Inputs, catalog: Any, settings: Any) -> Option:
    """Racks in an existing hall: space in weeks (a block past one site's largest is preleased
    and takes years), hardware at its lead time, rent on the provisioned IT kW."""
    notes: list[str] = []
    o = settings.colo
    space = colo_space_days(inp, catalog, notes)
    hw = hardware_ready_days(catalog, inp.gpu_lead, inp.installed_gpus)
    r50, r90 = _override(o, max(space[0], hw[0]), max(space[1], hw[1]))
    delivery = max(0.0, r50 - route(catalog, "hardware").value("first_rack_to_training_days"))
    rent = (o.usd_per_kw_month or inp.colo_usd_per_kw_month) * inp.it_kw * inp.colo_scale
    end = r50 + inp.wall_p50
    capex = inp.it_capex + inp.fitout_capex
    term = colo_term_months(inp, catalog)
    rent_from = min(space[0], r50)
    rent_to = max(end, rent_from + term * cash.DAYS_PER_MONTH)
    exit_cash = partial(_owned_flows, inp, catalog, [(delivery, capex)], r50, end, (rent_from, rent_to, rent))
    usage = usage_owned(inp, [(r50, capex)], end, r50, 0.0, rent)
    return Option("colo", inp.gpus, (r50, r90), (r50, r90), (inp.wall_p50, inp.wall_p90), exit_cash, usage,
                  capex, term, hw[2], inp.mfu, tuple(notes))


def lease(inp: Inputs, catalog: Any, settings: Any) -> Option:
    """Reserved capacity from a GPU cloud: a committed term at the generation's contract price;
    a count past what a provider hands over now waits for the provider's own hardware."""
    notes: list[str] = []
    ls, o = route(catalog, "lease"), settings.lease
    r50 = r90 = ls.value("contract_days")
    lead = 0.0
    now, most = ls.value("ready_gpus_now"), ls.value("ready_gpus_max")
    if inp.gpus > now:  # the chance a provider has the block ready falls from 1 at `now` to 0 at `most`
        p = min(1.0, max(0.0, (most - inp.gpus) / (most - now)))
        hw = hardware_ready_days(catalog, inp.gpu_lead, inp.gpus)
        space = colo_space_days(inp, catalog, [])  # the provider's own hall and power
        r50 += (1 - p) * max(hw[0], space[0])
        r90 += (1 - p) * max(hw[1], space[1])
        lead = hw[2]
        notes.append(f"lease: {inp.gpus:,} GPUs is more than a provider hands over now ({now:,.0f}); "
                     f"{p:.0%} chance one has the block ready, else it installs them first, in space with power")
    r50, r90 = _override(o, r50, r90)
    price = (o.usd_per_gpu_hour or per_generation(ls, "usd_per_gpu_hour", inp.generation, notes)) * inp.rental_scale
    term_min = o.min_term_months if o.min_term_months is not None else ls.value("min_term_months")
    run_months = inp.wall_p50 / cash.DAYS_PER_MONTH
    months = max(term_min, run_months)
    total = inp.gpus * price * HOURS_PER_MONTH * months
    days = months * cash.DAYS_PER_MONTH
    exit_cash = partial(_rented_exit, r50, r50 + days, total / days if days else 0.0)
    if months > run_months:
        notes.append(f"lease: on the exit basis the {term_min:g}-month minimum term is paid though "
                     f"the run takes {run_months:.1f} months")
    usage = inp.gpus * price * 24.0 * inp.wall_p50
    return Option("lease", inp.gpus, (r50, r90), (r50, r90), (inp.wall_p50, inp.wall_p90), exit_cash, usage,
                  commitment_months=float(term_min), lead_days=lead, mfu=inp.mfu, notes=tuple(notes))


def cloud_account_gpus(catalog: Any, settings: Any) -> int:
    """The most GPUs one cloud account gets on demand (``decision.cloud.max_gpus``, else the
    catalog's cloud route)."""
    return int(settings.cloud.max_gpus or route(catalog, "cloud").value("max_gpus"))


def cloud_cap_gpus(catalog: Any, settings: Any, node_gpus: int) -> int:
    """:func:`cloud_account_gpus` in whole ``node_gpus`` instances."""
    cap = cloud_account_gpus(catalog, settings)
    return max(node_gpus, cap // node_gpus * node_gpus)


def cloud_gpus(inp: Inputs, catalog: Any, settings: Any) -> int:
    """GPUs the cloud route runs on: the run's, at most the count one account gets on demand."""
    return min(inp.gpus, cloud_cap_gpus(catalog, settings, inp.node_gpus))


def cloud(inp: Inputs, catalog: Any, settings: Any) -> Option:
    """On-demand instances: ready in days, but only up to the count one account gets without a
    contract; a larger run runs on that count, planned for it (``inp`` is that plan's)."""
    notes: list[str] = []
    cl, o = route(catalog, "cloud"), settings.cloud
    cap = cloud_account_gpus(catalog, settings)
    r50, r90 = _override(o, cl.value("ready_days"), cl.value("ready_days"))
    price = (o.usd_per_gpu_hour or inp.cloud_price
             or per_generation(cl, "usd_per_gpu_hour", inp.generation, notes)) * inp.rental_scale
    exit_cash = partial(_rented_exit, r50, r50 + inp.wall_p50, inp.gpus * price * 24.0)
    usage = inp.gpus * price * 24.0 * inp.wall_p50
    return Option("cloud", inp.gpus, (r50, r90), (r50, r90), (inp.wall_p50, inp.wall_p90), exit_cash, usage,
                  mfu=inp.mfu, max_gpus=cap, notes=tuple(notes))


def existing(inp: Inputs, catalog: Any, settings: Any) -> Option:
    """The buyer's own cluster: free on ``decision.existing.ready_date``; charged for its
    capital recovery, its space (at the colocation rate) and the run's opex (usage), or for the
    market value it loses over the run, its space and opex (exit)."""
    e = settings.existing
    ready = float(((e.ready_date or inp.start) - inp.start).days)
    ready = max(ready, 0.0)
    bought = (e.bought_date or inp.start) - inp.start
    end = ready + inp.wall_p50
    rent = (settings.colo.usd_per_kw_month or inp.colo_usd_per_kw_month) * inp.it_kw * inp.colo_scale
    value = [(float(bought.days), inp.it_capex)]
    usage = usage_owned(inp, [(ready, inp.it_capex)], end, ready, 0.0, rent)
    notes = ("existing: the owned cluster, its space charged at the colocation rate",)
    return Option("existing", inp.gpus, (ready, ready), (ready, ready), (inp.wall_p50, inp.wall_p90),
                  partial(_existing_exit, inp, catalog, value, ready, end, rent), usage, 0.0,
                  mfu=inp.mfu, notes=notes)


def _existing_exit(inp: Inputs, catalog: Any, value: list[tuple[float, float]], ready: float,
                   end: float, rent: float) -> tuple[np.ndarray, float]:
    """Exit cash of the owned cluster (flows, residual 0: it is kept): its space and the run's
    opex while it trains, and the market value it loses over the run."""
    lost = resale_usd(inp, catalog, value, ready) - resale_usd(inp, catalog, value, end)
    flows = cash.spread(np.zeros(1), ready, end, (inp.run_opex_month + rent) / cash.DAYS_PER_MONTH)
    return cash.add(flows, end, max(lost, 0.0)), 0.0


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


BUILDERS = {"build": build, "colo": colo, "lease": lease, "cloud": cloud, "existing": existing}
