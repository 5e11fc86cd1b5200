"""Racks by kind, rows, halls and floor area (datacenter-anchors 4.5: 1.30 m2 in-row per 600 mm
rack on a 7-tile pitch, times a support multiplier for galleries and circulation).

Past a hall's power (``hall_max_it_kw``) or floor (``hall_max_racks``) limit the site splits into
that many halls of equal rows (rows are numbered across the site; hall h holds rows
``(h - 1) x rows_per_hall + 1`` onwards); :mod:`clustertwin.design.geometry` places them."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Racks:
    """Racks by kind."""

    compute: int
    network: int      #: compute-fabric switch racks
    management: int   #: storage fabric, in-band, OOB, UFM, head nodes
    storage: int

    @property
    def total(self) -> int:
        return self.compute + self.network + self.management + self.storage


@dataclass(frozen=True)
class FloorDesign:
    """The data-hall floor: racks, rows, halls and area."""

    racks: int
    rows: int
    in_row_m2: float
    area_m2: float
    halls: int = 1
    rows_per_hall: int = 0

    def hall_of_row(self, row):
        """1-based hall of 1-based site rows (scalar or array)."""
        return (row - 1) // max(1, self.rows_per_hall or self.rows) + 1

    def hall_row(self, row):
        """1-based row number inside its hall."""
        return (row - 1) % max(1, self.rows_per_hall or self.rows) + 1


def plan_floor(racks: Racks, rules, it_kw: float = 0.0) -> FloorDesign:
    n = racks.total
    in_row = n * rules.num("rack_area_m2")
    rows = math.ceil(n / rules.num("racks_per_row"))
    halls = max(1, math.ceil(it_kw / rules.num("hall_max_it_kw") - 1e-9),
                math.ceil(n / rules.num("hall_max_racks") - 1e-9))
    halls = max(1, min(halls, rows))
    return FloorDesign(racks=n, rows=rows, in_row_m2=in_row,
                       area_m2=in_row * rules.num("floor_support_multiplier"), halls=halls,
                       rows_per_hall=math.ceil(rows / halls) if rows else 0)
