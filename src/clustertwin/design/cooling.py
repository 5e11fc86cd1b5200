"""Cooling: mode by rack density, heat to reject, CRAH, rear-door, CDU and chiller counts, PUE
per mode.

Mode (datacenter-anchors 4.2 thresholds): liquid-cooled nodes or racks above
``containment_max_rack_kw`` -> "liquid" (direct-to-chip with CDUs); above ``air_max_rack_kw``
-> "air-containment"; else "air". Air racks above ``high_density_air_kw`` are flagged. All IT
power becomes heat; liquid racks send ``liquid_heat_fraction`` of theirs to the CDUs and the
rest to air handlers. Contained air racks ("air-containment") reject their heat through an
active rear-door heat exchanger on every compute rack (``rdhx_kw`` each, DC 4.2: 20-80 kW per
door); what is left in the room air goes to fan-wall CRAHs of ``crah_kw`` in the halls' side
galleries, N+1 per hall (:func:`with_halls`). All heat leaves through chillers of
``chiller_kw``, N + ``chiller_spare``.

CDUs: enough for the liquid heat at ``cdu_kw`` each and, when ``cdu_racks_per_unit`` > 0, at
most that many liquid racks per CDU; plus ``cdu_spare``. Row CDUs by kW with N+1 are the
default; ExaDigiT's Frontier model is 3 cabinets per CDU with no spare (74 -> 25, datacenter-
anchors 4.3 / case 22: ``cdu_racks_per_unit=3, cdu_spare=0``); xAI Colossus puts one CDU in
every rack (``cdu_racks_per_unit=1, cdu_spare=0``, its pumps are redundant inside the unit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class CoolingDesign:
    """The cooling mode, its PUE and the heat it removes (air and liquid)."""

    mode: str                 #: "air" | "air-containment" | "liquid"
    pue: float                #: PUE of this mode (economics uses it when pue is 'auto')
    heat_kw: float
    liquid_kw: float
    air_kw: float
    crah_units: int           #: N+1
    cdu_units: int            #: N+1 (0 without liquid)
    high_density: bool        #: air-cooled racks above the high-density threshold
    crah_rating_kw: float = 0.0   #: sensible capacity of one CRAH (design rule crah_kw)
    rdhx_units: int = 0       #: rear-door heat exchangers, one per compute rack (air-containment)
    rdhx_kw: float = 0.0      #: heat the rear doors take out of the room
    chillers: int = 0         #: N + chiller_spare on all heat
    chiller_rating_kw: float = 0.0
    halls: int = 1            #: halls the CRAHs are spread over (N+1 in each)

    @property
    def crah_kw(self) -> float:
        """Air load per working CRAH (kW)."""
        return self.air_kw / max(1, self.crah_units - self.halls)


def cooling_mode(rack_kw: float, node_cooling: str, rules) -> str:
    if node_cooling == "liquid" or rack_kw > rules.num("containment_max_rack_kw"):
        return "liquid"
    if rack_kw > rules.num("air_max_rack_kw"):
        return "air-containment"
    return "air"


def cdu_count(liquid_kw: float, liquid_racks: int, rules) -> int:
    """CDUs for ``liquid_kw`` of heat in ``liquid_racks`` racks (0 without liquid)."""
    if liquid_kw <= 0 and liquid_racks <= 0:
        return 0
    by_kw = math.ceil(liquid_kw / rules.num("cdu_kw") - 1e-9)
    per = rules.num("cdu_racks_per_unit")
    by_racks = math.ceil(liquid_racks / per - 1e-9) if per > 0 else 0
    return max(1, by_kw, by_racks) + int(rules.num("cdu_spare"))


def crahs(air_kw: float, halls: int, rules) -> int:
    """Fan-wall CRAHs for ``air_kw`` of room heat spread over ``halls``, N+1 in each hall."""
    halls = max(1, halls)
    return halls * (math.ceil(air_kw / halls / rules.num("crah_kw") - 1e-9) + 1)


@dataclass(frozen=True)
class HeatLoad:
    """The heat a cooling plant takes away (kW): the densest rack's ``rack_kw``, the whole
    ``it_kw``, the draw of the liquid-cooled racks and their count, and the compute racks and
    their draw (rear doors in air-containment mode)."""

    rack_kw: float
    it_kw: float
    liquid_racks_kw: float
    liquid_racks: int = 0
    compute_racks: int = 0
    compute_kw: float = 0.0


def plan_cooling(load: HeatLoad, node_cooling: str, rules) -> CoolingDesign:
    """The cooling mode, PUE and plant for ``load`` of nodes cooled by ``node_cooling``."""
    rack_kw, it_kw, liquid_racks_kw = load.rack_kw, load.it_kw, load.liquid_racks_kw
    liquid_racks, compute_racks, compute_kw = load.liquid_racks, load.compute_racks, load.compute_kw
    mode = cooling_mode(rack_kw, node_cooling, rules)
    pue = rules.num({"air": "pue_air", "air-containment": "pue_air_containment",
                     "liquid": "pue_liquid"}[mode])
    liquid = liquid_racks_kw * rules.num("liquid_heat_fraction") if mode == "liquid" else 0.0
    doors = compute_racks if mode == "air-containment" else 0
    rdhx = min(compute_kw, doors * rules.num("rdhx_kw")) if doors else 0.0
    air = it_kw - liquid - rdhx
    cdu = cdu_count(liquid, liquid_racks if liquid > 0 else 0, rules) if liquid > 0 else 0
    dense = mode != "liquid" and rack_kw > rules.num("high_density_air_kw")
    chillers = (math.ceil(it_kw / rules.num("chiller_kw") - 1e-9)
                + int(rules.num("chiller_spare")))
    return CoolingDesign(mode=mode, pue=pue, heat_kw=it_kw, liquid_kw=liquid, air_kw=air,
                         crah_units=crahs(air, 1, rules), cdu_units=cdu, high_density=dense,
                         crah_rating_kw=rules.num("crah_kw"), rdhx_units=doors, rdhx_kw=rdhx,
                         chillers=chillers, chiller_rating_kw=rules.num("chiller_kw"))


def with_halls(cooling: CoolingDesign, halls: int, rules) -> CoolingDesign:
    """The cooling with its CRAHs spread over ``halls`` (N+1 in each hall)."""
    from dataclasses import replace

    return replace(cooling, halls=max(1, halls), crah_units=crahs(cooling.air_kw, halls, rules))


def crah_fit_warnings(cooling, floor, rules, catalog) -> list[str]:
    """A warning when a hall's CRAHs (N+1) do not fit along its two side galleries."""
    from clustertwin.design.geometry import Geometry

    if not cooling.crah_units or not catalog.has("equipment", "crah-fanwall-400kw"):
        return []
    width = catalog.get("equipment", "crah-fanwall-400kw").width_m
    depth = Geometry.from_rules(rules).hall_depth_m(max(1, floor.rows_per_hall or floor.rows))
    per_hall = math.ceil(cooling.crah_units / max(1, cooling.halls))
    fit = 2 * int(depth // width) if width else per_hall
    if per_hall <= fit:
        return []
    return [f"{per_hall} CRAHs per hall do not fit the two {depth:.0f} m side galleries "
            f"({fit} of {width:g} m each): lower the rack density of air-cooled rows, or use "
            "rear-door or liquid cooling"]
