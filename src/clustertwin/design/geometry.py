"""Floor geometry: where a rack stands and how long a cable between two devices runs.

Rows come in pairs around a contained hot aisle and face cold aisles (design rules
``rack_width_m``, ``rack_depth_m``, ``cold_aisle_m``, ``hot_aisle_m``; DC 4.5's 7-tile pitch):
a cold aisle, row 1, the hot aisle, row 2, the next cold aisle, row 3, ... A cross aisle
``end_aisle_m`` wide runs at each end of every row (PDUs/RPPs and CDUs stand there). Rack
``position`` p sits ``end_aisle_m + (p - 1) x rack_width_m`` from the hall's left wall. Halls
follow each other along the row axis, ``hall_gap_m`` apart.

A cable between racks rises from its device to the overhead tray ``tray_above_rack_m`` over
the rack tops, runs along the tray (along the row, then across rows: a Manhattan route), drops
to the other device, and gets ``cable_slack_frac`` of its length plus a ``cable_service_loop_m``
at each end. Inside one rack it runs the vertical distance between the two devices plus the
service loops. Units: metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Geometry:
    """The floor's dimensions: rack footprint, aisles, trays and heights."""

    rack_width_m: float
    rack_depth_m: float
    cold_aisle_m: float
    hot_aisle_m: float
    end_aisle_m: float
    rack_height_m: float
    ru_m: float
    tray_m: float
    slack_frac: float
    loop_m: float
    hall_gap_m: float

    @classmethod
    def from_rules(cls, rules) -> Geometry:
        n = rules.num
        return cls(n("rack_width_m"), n("rack_depth_m"), n("cold_aisle_m"), n("hot_aisle_m"),
                   n("end_aisle_m"), n("rack_ru") * n("rack_unit_m"), n("rack_unit_m"),
                   n("tray_above_rack_m"), n("cable_slack_frac"), n("cable_service_loop_m"),
                   n("hall_gap_m"))

    @property
    def pair_pitch_m(self) -> float:
        """Distance between the same row of two neighbouring row pairs."""
        return 2 * self.rack_depth_m + self.cold_aisle_m + self.hot_aisle_m

    def row_top_m(self, hall_row) -> np.ndarray:
        """Distance from the hall's front wall to the front of a row (1-based within its hall)."""
        k = np.asarray(hall_row, dtype=np.int64) - 1
        return (self.cold_aisle_m + (k // 2) * self.pair_pitch_m
                + (k % 2) * (self.rack_depth_m + self.hot_aisle_m))

    def hall_depth_m(self, rows: int) -> float:
        return float(self.row_top_m(max(1, rows))) + self.rack_depth_m + self.cold_aisle_m

    def hall_width_m(self, racks_per_row: int) -> float:
        return 2 * self.end_aisle_m + racks_per_row * self.rack_width_m

    def rack_xy(self, hall, hall_row, position, racks_per_row: int):
        """(x, y) of rack centres in metres; halls side by side along x."""
        hall = np.asarray(hall, dtype=np.int64)
        x = ((hall - 1) * (self.hall_width_m(racks_per_row) + self.hall_gap_m)
             + self.end_aisle_m + (np.asarray(position) - 0.5) * self.rack_width_m)
        y = self.row_top_m(hall_row) + self.rack_depth_m / 2
        return x, y

    def route_m(self, ax, ay, az, bx, by, bz, same_rack) -> np.ndarray:
        """Routed cable length (m) between devices at (x, y, height above floor)."""
        ax, ay, az, bx, by, bz = (np.asarray(v, dtype=float) for v in (ax, ay, az, bx, by, bz))
        top = self.rack_height_m + self.tray_m
        across = np.abs(ax - bx) + np.abs(ay - by)
        between = (top - az) + across + (top - bz)
        inside = np.abs(az - bz)
        run = np.where(np.asarray(same_rack, dtype=bool), inside, between)
        return run * (1.0 + self.slack_frac) + 2 * self.loop_m
