"""Where everything in a hall stands, in metres, and the checks that it physically fits.

A hall is its white space (``width_m`` x ``depth_m``: rows of racks, aisles, row-end CDUs) with
a mechanical gallery along each side wall (``gallery_m`` deep: a fan-wall CRAH's depth plus a
service clearance) holding the hall's CRAHs, N+1 per hall, spaced evenly along the wall.
Coordinates are hall-local: x along the rows from the white space's left wall (galleries at
negative x and past ``width_m``), y from its front wall. Rack, aisle and row positions come
from :mod:`clustertwin.design.geometry` (the ones cable lengths use). A contained compute rack
carries an active rear-door heat exchanger on its hot-aisle face (``cooling.rdhx_units``).

:func:`check_layout` lists every unit that leaves its hall's envelope or overlaps another unit
(racks, rear doors, CRAHs, CDUs) and every aisle that runs into a rack: the floor plan draws
exactly these boxes, so a drawing that passes the check is physically possible as drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: service clearance in front of a gallery's CRAHs, m (filter and fan access)
GALLERY_SERVICE_M = 1.0
SOLID = ("rack", "rdhx", "crah", "cdu")


@dataclass(frozen=True)
class Box:
    kind: str        #: rack | rdhx | crah | cdu | cold-aisle | hot-aisle
    name: str
    x: float
    y: float
    w: float
    h: float
    rack_kind: str = ""


@dataclass(frozen=True)
class HallLayout:
    hall: int
    first_row: int           #: site row number of the hall's first row
    rows: int
    width_m: float           #: white space along the rows
    depth_m: float           #: white space across the rows
    gallery_m: float         #: each side gallery's depth
    boxes: tuple[Box, ...]
    busways: tuple[tuple[float, float, float, str], ...]   #: (x0, x1, y, feed) per run

    @property
    def envelope(self) -> tuple[float, float, float, float]:
        """(x, y, w, h) of the hall with its galleries, m."""
        return (-self.gallery_m, 0.0, self.width_m + 2 * self.gallery_m, self.depth_m)

    def of(self, kind: str) -> list[Box]:
        return [b for b in self.boxes if b.kind == kind]


def _footprint(catalog, eid: str, default: tuple[float, float]) -> tuple[float, float]:
    if catalog is not None and catalog.has("equipment", eid):
        e = catalog.get("equipment", eid)
        return float(e.width_m or default[0]), float(e.depth_m or default[1])
    return default


def halls_of(inv) -> dict[int, tuple[int, int]]:
    """hall -> (first site row, rows in the hall)."""
    out: dict[int, list[int]] = {}
    for r in inv.racks:
        out.setdefault(r.hall, []).append(r.row)
    return {h: (min(rows), max(rows) - min(rows) + 1) for h, rows in sorted(out.items())}


def per_hall(n: int, halls: int) -> list[int]:
    """``n`` units spread over ``halls`` as evenly as counts allow."""
    halls = max(1, halls)
    return [n * (i + 1) // halls - n * i // halls for i in range(halls)]


def hall_layouts(design, inv, catalog, geo, per_row: int) -> list[HallLayout]:
    """Every hall's layout (see the module docstring)."""
    halls = halls_of(inv)
    crah_w, crah_d = _footprint(catalog, "crah-fanwall-400kw", (2.4, 1.2))
    _, door_d = _footprint(catalog, "rdhx-75kw", (0.6, 0.25))
    crahs = per_hall(design.cooling.crah_units, len(halls))
    doors = bool(design.cooling.rdhx_units)
    cdus: dict[int, list[str]] = {}
    for d in inv.role("cdu"):
        cdus.setdefault(d.row, []).append(d.name)
    out = []
    for i, (hall, (first, rows)) in enumerate(halls.items()):
        width, depth = geo.hall_width_m(per_row), geo.hall_depth_m(rows)
        boxes = _aisles(geo, rows, width)
        boxes += _racks(inv, geo, hall, first, door_d if doors else 0.0)
        boxes += _cdus(geo, cdus, first, rows, per_row)
        gallery = crah_d + GALLERY_SERVICE_M
        boxes += _crahs(crahs[i], width, depth, gallery, crah_w, crah_d)
        out.append(HallLayout(hall, first, rows, width, depth, gallery, tuple(boxes),
                              _busways(geo, rows, per_row)))
    return out


def _aisles(geo, rows: int, width: float) -> list[Box]:
    out = []
    for r in range(1, rows + 2, 2):                       # cold aisles before odd rows
        y = float(geo.row_top_m(r)) - geo.cold_aisle_m
        out.append(Box("cold-aisle", f"cold aisle before row {r}", 0.0, y, width,
                       geo.cold_aisle_m))
    for r in range(1, rows, 2):                           # contained hot aisle of each pair
        y = float(geo.row_top_m(r)) + geo.rack_depth_m
        out.append(Box("hot-aisle", f"hot aisle of rows {r}-{r + 1}", geo.end_aisle_m, y,
                       width - 2 * geo.end_aisle_m, geo.hot_aisle_m))
    return out


def _racks(inv, geo, hall: int, first: int, door_m: float) -> list[Box]:
    out = []
    for r in inv.racks:
        if r.hall != hall:
            continue
        k = r.row - first + 1
        x = geo.end_aisle_m + (r.position - 1) * geo.rack_width_m
        y = float(geo.row_top_m(k))
        tier = f", {r.tier}" if r.tier else ""
        out.append(Box("rack", f"{r.name} ({r.kind}{tier})", x, y, geo.rack_width_m,
                       geo.rack_depth_m, r.kind))
        if door_m and r.kind == "compute":        # on the hot-aisle face of the rack
            dy = y + geo.rack_depth_m if k % 2 else y - door_m
            out.append(Box("rdhx", f"{r.name} rear door", x, dy, geo.rack_width_m, door_m))
    return out


def _cdus(geo, cdus: dict[int, list[str]], first: int, rows: int, per_row: int) -> list[Box]:
    """Row CDUs at the right end of the rows they serve, two abreast in the end aisle."""
    out = []
    right = geo.end_aisle_m + per_row * geo.rack_width_m
    for row in range(first, first + rows):
        here = cdus.get(row, [])
        if not here:
            continue
        y = float(geo.row_top_m(row - first + 1))
        deep = geo.rack_depth_m / max(1, math.ceil(len(here) / 2))
        for k, nm in enumerate(here):
            out.append(Box("cdu", f"{nm} (CDU)", right + 0.1 + 0.8 * (k % 2),
                           y + (k // 2) * deep, 0.7, deep))
    return out


def _crahs(n: int, width: float, depth: float, gallery: float, w: float, d: float) -> list[Box]:
    """``n`` CRAHs, half along each side gallery's outer wall, evenly spaced along the hall."""
    out = []
    left = math.ceil(n / 2)
    for side, count in (("left", left), ("right", n - left)):
        pitch = depth / max(1, count)
        x = -gallery if side == "left" else width + gallery - d
        for k in range(count):
            y = (k + 0.5) * pitch - w / 2
            out.append(Box("crah", f"CRAH {side} {k + 1}", x, y, d, w))
    return out


def _busways(geo, rows: int, per_row: int) -> tuple[tuple[float, float, float, str], ...]:
    """An A and a B overhead busway run above every row (no floor footprint)."""
    x0, x1 = geo.end_aisle_m, geo.end_aisle_m + per_row * geo.rack_width_m
    out = []
    for k in range(1, rows + 1):
        y = float(geo.row_top_m(k))
        out.append((x0, x1, y + 0.3 * geo.rack_depth_m, "A"))
        out.append((x0, x1, y + 0.7 * geo.rack_depth_m, "B"))
    return tuple(out)


def check_layout(lay: HallLayout, eps: float = 1e-6) -> list[str]:
    """Problems of a hall layout: boxes outside the envelope, solid units overlapping each
    other, aisles overlapping racks. Empty when everything fits as drawn."""
    ex, ey, ew, eh = lay.envelope
    problems = [f"hall {lay.hall}: {b.name} leaves the hall ({b.x:.2f}, {b.y:.2f})"
                for b in lay.boxes
                if b.x < ex - eps or b.y < ey - eps or b.x + b.w > ex + ew + eps
                or b.y + b.h > ey + eh + eps]
    solid = [b for b in lay.boxes if b.kind in SOLID]
    problems += _overlaps(lay.hall, solid, solid, eps)
    aisles = [b for b in lay.boxes if b.kind.endswith("aisle")]
    racks = [b for b in lay.boxes if b.kind == "rack"]
    problems += _overlaps(lay.hall, aisles, racks, eps, same=False)
    return problems


def _overlaps(hall: int, a: list[Box], b: list[Box], eps: float, same: bool = True) -> list[str]:
    """Pairs of boxes (``a`` x ``b``) whose interiors intersect (touching edges is fine)."""
    if not a or not b:
        return []
    A = np.array([(x.x, x.y, x.x + x.w, x.y + x.h) for x in a])
    B = np.array([(x.x, x.y, x.x + x.w, x.y + x.h) for x in b])
    out = []
    for i in range(0, len(A), 256):                       # chunks keep memory small
        blk = A[i:i + 256]
        hit = ((blk[:, None, 0] < B[None, :, 2] - eps) & (B[None, :, 0] < blk[:, None, 2] - eps)
               & (blk[:, None, 1] < B[None, :, 3] - eps) & (B[None, :, 1] < blk[:, None, 3] - eps))
        for p, q in zip(*np.nonzero(hit), strict=True):
            if same and i + p >= q:
                continue
            out.append(f"hall {hall}: {a[i + p].name} overlaps {b[q].name}")
            if len(out) > 20:
                return out
    return out
