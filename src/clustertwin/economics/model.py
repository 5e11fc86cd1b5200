"""Capex, opex, owned $/GPU-hour and the cost of the training run, owned vs rented.

Conventions
- Capex of IT equipment (compute, network, storage, integration) is depreciated straight-line
  over ``economics.depreciation_years``; a built facility over the cost book's facility life.
- Capex is the sum of the design's bill-of-materials lines (:mod:`clustertwin.design.bom`), plus
  integration services as a share of IT hardware. Facility ``build``: every line counts, the
  building and its power and cooling plant (``scope == "plant"``: transformers, switchgear, UPS,
  generators, chillers, CRAHs, shell ...) priced by the equipment the design sized and
  depreciated over the facility life. ``lease``: colocation $/kW-month is opex and only the IT
  and tenant fit-out lines (rack PDUs, enclosures, rear doors, CDUs) are capex. A built facility
  whose design lists no plant (a cluster sized for an existing facility) falls back to the cost
  book's $/MW of critical IT load, with a note.
- Energy = average IT draw x PUE x hours x price. Average draw is the node's typical training
  power over its maximum (catalog), else the cost book's default fraction.
- Wasted compute is expressed as extra GPU-hours over a failure-free run: wall-clock time =
  ideal time x (1 + waste). With a reliability result, waste = 1/ETTR - 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from clustertwin.catalog import Catalog
from clustertwin.economics.fallback import fallback_design
from clustertwin.scenario import Scenario

if TYPE_CHECKING:
    from clustertwin.design.result import ClusterDesign
    from clustertwin.perf.stage import TrainingEstimate
    from clustertwin.reliability.cluster import ClusterReliability
    from clustertwin.reliability.result import ReliabilityResult

HOURS_PER_MONTH = 730.0  # 8,760 h / 12

#: Waste when no reliability result exists: Llama 3 405B reported "higher than 90% effective
#: training time" (arXiv 2407.21783 section 3.3.4) -> 1/0.9 - 1 = 0.11.
DEFAULT_WASTE = 1 / 0.9 - 1

#: scenario keys :func:`economics` reads (a section name covers the whole section)
READS = ("source", "model", "training", "cluster", "reliability", "economics")

CAPEX_CATEGORIES = ("compute", "network", "storage", "power", "cooling", "facility", "integration", "other")


class EconomicsResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    capex_usd: float
    capex_by_category_usd: dict[str, float]
    opex_usd_per_month: float
    opex_by_category_usd_per_month: dict[str, float]
    depreciation_usd_per_month: float
    owned_usd_per_gpu_hour: float
    cloud_usd_per_gpu_hour: float
    run_cost_owned_usd: float | None     #: None for a design-only plan (no run)
    run_cost_cloud_usd: float | None
    run_cost_cloud_ideal_usd: float | None
    wasted_compute_frac: float
    wasted_compute_source: str
    run_days_wall_clock: float | None
    cluster_gpus: int
    it_kw: float
    pue: float
    pue_source: str
    facility: str
    basis: str
    unpriced_bom_lines: list[str] = []
    notes: list[str] = []
    capex_plant_usd: float = 0.0     #: building and its power/cooling plant (built facility only)
    capex_fitout_usd: float = 0.0    #: tenant fit-out: rack PDUs, enclosures, rear doors, CDUs
    plant_if_built_usd: float = 0.0  #: the plant a built facility buys (whatever economics.facility)

    def to_contract(self) -> dict[str, Any]:
        return self.model_dump()


def energy_usd_per_month(avg_it_kw: float, pue: float, usd_per_kwh: float) -> float:
    """Energy bill: average IT draw x PUE x hours in a month x price."""
    return avg_it_kw * pue * HOURS_PER_MONTH * usd_per_kwh


def colocation_usd_per_month(it_kw: float, usd_per_kw_month: float) -> float:
    """Leased space and power, billed on the provisioned IT kW."""
    return it_kw * usd_per_kw_month


def facility_capex_usd(it_kw: float, usd_per_mw: float) -> float:
    """Building the shell and its power and cooling plant for this much critical IT load."""
    return it_kw / 1000.0 * usd_per_mw


def run_cost_cloud(gpus: int, usd_per_gpu_hour: float, ideal_days: float, waste: float = 0.0) -> float:
    """Rented cost of a run: GPUs x rate x hours, with ``waste`` extra GPU-hours (0.3 = +30%)."""
    return gpus * usd_per_gpu_hour * ideal_days * 24.0 * (1.0 + waste)


def _bom_lines(design: ClusterDesign) -> list[tuple[str, float, str | None, str]]:
    """(category, total USD, item name if the line has no price, scope) per BOM line."""
    out = []
    for line in design.bom:
        unit, total = line.unit_usd, line.total_usd
        if total is None:
            total = (line.quantity or 0) * (unit or 0)
        unpriced = str(line.item) if unit is None else None
        out.append((str(line.category), float(total or 0.0), unpriced, str(line.scope)))
    return out


def capex_lines(lines: list[tuple[str, float, str | None, str]], facility: str
                ) -> tuple[dict[str, float], float, float, list[str]]:
    """(capex by category, plant, fit-out, unpriced items) of the lines a ``facility`` buys:
    plant lines only when it is built."""
    capex = dict.fromkeys(CAPEX_CATEGORIES, 0.0)
    plant = fitout = 0.0
    unpriced: list[str] = []
    for cat, total, missing, scope in lines:
        if scope == "plant" and facility != "build":
            continue                      # the colocation provider's plant
        capex[cat if cat in capex else "other"] += total
        plant += total if scope == "plant" else 0.0
        fitout += total if scope == "fit-out" else 0.0
        if missing:
            unpriced.append(missing)
    return capex, plant, fitout, unpriced


def _facility(setting: str, design: ClusterDesign | None) -> str:
    """``economics.facility`` resolved: auto leases when the design fits an existing facility."""
    if setting != "auto":
        return setting
    return "lease" if design is not None and design.facility == "existing-facility" else "build"


def _pue(eco: Any, design: ClusterDesign | None, node: Any, book: Any) -> tuple[float, str]:
    """PUE and its source: the scenario's number, else the cooling design's, else the cost
    book's default by cooling type."""
    if eco.pue != "auto":
        return float(eco.pue), "scenario"
    if design is not None and design.cooling.pue:
        return float(design.cooling.pue), f"cooling design ({design.cooling.mode})"
    key = "pue_liquid_default" if node.cooling == "liquid" else "pue_air_default"
    pue = book.value(key) if key in book.items else (1.15 if node.cooling == "liquid" else 1.4)
    return pue, f"default for {node.cooling}-cooled nodes"


def _staff_fte(book: Any, facility: str, gpus: int, notes: list[str]) -> float:
    """Operations staff: scale with the GPUs (nodes) installed, never below the floor: one's own
    24/7 rota in a built facility, the provider's remote hands covering it in colocation."""
    key = "staff_fte_min_colo" if facility == "lease" and "staff_fte_min_colo" in book.items else "staff_fte_min"
    scaled = book.value("staff_fte_per_1000_gpus") * gpus / 1000.0
    if scaled < book.value(key):
        notes.append(f"staff: floor of {book.value(key):g} FTE ({key}) for {gpus:,} GPUs "
                     f"(scaled {scaled:.2f} FTE)")
    return max(book.value(key), scaled)


def _waste(eco: Any, reliability: Any) -> tuple[float, str]:
    """Wasted share of compute (wall clock / failure-free - 1) and its source."""
    if eco.wasted_fraction != "auto":
        return float(eco.wasted_fraction), "scenario"
    from clustertwin.reliability.result import ReliabilityResult

    if isinstance(reliability, ReliabilityResult) and reliability.ettr_mean:  # a job's, not a cluster's
        return 1.0 / float(reliability.ettr_mean) - 1.0, "reliability Monte Carlo (1/ETTR - 1)"
    return DEFAULT_WASTE, "default: Llama 3 reported >90% effective training time"


def economics(scenario: Scenario, catalog: Catalog, estimate: TrainingEstimate | None,
              design: ClusterDesign | None = None,
              reliability: ReliabilityResult | ClusterReliability | None = None) -> EconomicsResult:
    """Costs of owning the designed cluster and of the run, owned vs rented."""
    eco = scenario.economics
    book = catalog.get("costs", eco.costs)
    node = catalog.node(scenario.cluster.node)
    notes: list[str] = []
    facility = _facility(eco.facility, design)
    gpus = (int(estimate.gpus) if estimate is not None
            else int((design.gpus if design is not None else None) or scenario.cluster.gpus or 0))

    if design is not None and design.bom:
        lines = _bom_lines(design)
        it_kw = float(design.power.it_kw)
        nodes = int(design.nodes)  # hot spares included
        basis = "design bill of materials"
    else:
        fb = fallback_design(scenario, catalog, gpus)
        lines = [(ln.category, ln.total_usd, None if ln.unit_usd else ln.item, "it")
                 for ln in fb.bom]
        it_kw, nodes = fb.it_kw, fb.nodes
        basis = "fallback sizing (design stage unavailable)"
        notes.append("capex from a coarse fallback sizing; the design stage was not available")
    cluster_gpus = nodes * node.gpus

    capex, plant, fitout, unpriced = capex_lines(lines, facility)
    plant_if_built = plant if facility == "build" else capex_lines(lines, "build")[1]
    if unpriced:
        notes.append(f"{len(unpriced)} bill-of-materials lines have no catalog price and add $0 to capex: "
                     + "; ".join(unpriced[:6]) + ("; ..." if len(unpriced) > 6 else ""))
    it_hw = capex["compute"] + capex["network"] + capex["storage"] + capex["other"]
    capex["integration"] = it_hw * book.value("integration_frac")
    if facility == "build" and plant == 0.0:
        plant = facility_capex_usd(it_kw, book.value("facility_build_usd_per_mw"))
        capex["facility"] += plant
        notes.append("facility: the design lists no plant (an existing facility's, or no design)"
                     "; a built facility is priced at the cost book's $/MW of critical IT load")

    pue, pue_source = _pue(eco, design, node, book)

    avg_frac = (node.typical_power_kw / node.max_power_kw) if node.typical_power_kw else (
        book.value("avg_power_frac_default") if "avg_power_frac_default" in book.items else 0.75)
    opex = {
        "energy": energy_usd_per_month(it_kw * avg_frac, pue, eco.electricity_usd_per_kwh),
        "facility": (plant * book.value("facility_om_frac_per_year") / 12.0 if facility == "build"
                     else colocation_usd_per_month(it_kw, book.value("colo_usd_per_kw_month"))),
        "staff": _staff_fte(book, facility, cluster_gpus, notes) * book.value("staff_usd_per_fte_year") / 12.0,
        "maintenance": (it_hw + capex["integration"]) * book.value("hw_maintenance_frac_per_year") / 12.0,
    }
    facility_life = book.value("facility_life_years") if "facility_life_years" in book.items else 20.0
    depreciation = ((sum(capex.values()) - plant) / (eco.depreciation_years * 12.0)
                    + plant / (facility_life * 12.0))
    monthly = depreciation + sum(opex.values())
    owned_gpu_hour = monthly / HOURS_PER_MONTH / max(cluster_gpus, 1)

    waste, waste_src = _waste(eco, reliability)
    run_owned = run_cloud = run_ideal = wall_days = None
    if estimate is not None:
        ideal_days = float(estimate.days)
        wall_days = ideal_days * (1.0 + waste)
        # the owned cluster is paid for in full (spares included) for the run's wall-clock days
        run_owned = monthly / HOURS_PER_MONTH * wall_days * 24.0
        run_cloud = run_cost_cloud(gpus, eco.cloud_usd_per_gpu_hour, ideal_days, waste)
        run_ideal = run_cost_cloud(gpus, eco.cloud_usd_per_gpu_hour, ideal_days, 0.0)
    return EconomicsResult(
        capex_usd=sum(capex.values()), capex_by_category_usd=capex,
        opex_usd_per_month=sum(opex.values()), opex_by_category_usd_per_month=opex,
        depreciation_usd_per_month=depreciation, owned_usd_per_gpu_hour=owned_gpu_hour,
        cloud_usd_per_gpu_hour=eco.cloud_usd_per_gpu_hour,
        run_cost_owned_usd=run_owned,
        run_cost_cloud_usd=run_cloud, run_cost_cloud_ideal_usd=run_ideal,
        wasted_compute_frac=waste, wasted_compute_source=waste_src, run_days_wall_clock=wall_days,
        cluster_gpus=cluster_gpus, it_kw=it_kw, pue=pue, pue_source=pue_source,
        facility=facility, basis=basis, unpriced_bom_lines=unpriced, notes=notes,
        capex_plant_usd=plant, capex_fitout_usd=fitout,
        plant_if_built_usd=plant_if_built or facility_capex_usd(it_kw, book.value("facility_build_usd_per_mw")),
    )
