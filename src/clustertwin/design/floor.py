"""Racks by kind, rows and floor area (datacenter-anchors 4.5: 1.30 m2 in-row per 600 mm rack
on a 7-tile pitch, times a support multiplier for galleries and circulation)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Racks:
    compute: int
    network: int      #: compute-fabric switch racks
    management: int   #: storage fabric, in-band, OOB, UFM, head nodes
    storage: int

    @property
    def total(self) -> int:
        return self.compute + self.network + self.management + self.storage


@dataclass(frozen=True)
class FloorDesign:
    racks: int
    rows: int
    in_row_m2: float
    area_m2: float


def plan_floor(racks: Racks, rules) -> FloorDesign:
    n = racks.total
    in_row = n * rules.num("rack_area_m2")
    return FloorDesign(racks=n, rows=math.ceil(n / rules.num("racks_per_row")),
                       in_row_m2=in_row, area_m2=in_row * rules.num("floor_support_multiplier"))
