"""Cooling: mode by rack density, heat to reject, CRAH and CDU counts (N+1), PUE per mode.

Mode (datacenter-anchors 4.2 thresholds): liquid-cooled nodes or racks above
``containment_max_rack_kw`` -> "liquid" (direct-to-chip with CDUs); above ``air_max_rack_kw``
-> "air-containment"; else "air". Air racks above ``high_density_air_kw`` are flagged. All IT
power becomes heat; liquid racks send ``liquid_heat_fraction`` of theirs to the CDUs and the
rest to air handlers.

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
    mode: str                 #: "air" | "air-containment" | "liquid"
    pue: float                #: PUE of this mode (economics uses it when pue is 'auto')
    heat_kw: float
    liquid_kw: float
    air_kw: float
    crah_units: int           #: N+1
    cdu_units: int            #: N+1 (0 without liquid)
    high_density: bool        #: air-cooled racks above the high-density threshold

    @property
    def crah_kw(self) -> float:
        return self.air_kw / max(1, self.crah_units - 1)


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


def plan_cooling(*, rack_kw: float, node_cooling: str, it_kw: float, liquid_racks_kw: float,
                 rules, liquid_racks: int = 0) -> CoolingDesign:
    mode = cooling_mode(rack_kw, node_cooling, rules)
    pue = rules.num({"air": "pue_air", "air-containment": "pue_air_containment",
                     "liquid": "pue_liquid"}[mode])
    liquid = liquid_racks_kw * rules.num("liquid_heat_fraction") if mode == "liquid" else 0.0
    air = it_kw - liquid
    crah = math.ceil(air / rules.num("crah_kw") - 1e-9) + 1
    cdu = cdu_count(liquid, liquid_racks if liquid > 0 else 0, rules) if liquid > 0 else 0
    dense = mode != "liquid" and rack_kw > rules.num("high_density_air_kw")
    return CoolingDesign(mode=mode, pue=pue, heat_kw=it_kw, liquid_kw=liquid, air_kw=air,
                         crah_units=crah, cdu_units=cdu, high_density=dense)
