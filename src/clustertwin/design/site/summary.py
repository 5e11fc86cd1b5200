"""Cables by medium: what the design reports of its cabling (``design.cabling``).

:func:`closed_form` counts them from the link classes
(:func:`~clustertwin.design.site.classes.cable_classes`: links, cables and one medium per
class, without placing the site): what the bill of materials prices. :func:`cable_counts`
places the site (:func:`~clustertwin.design.site.inventory.build_inventory`, default names),
routes every link (:func:`~clustertwin.design.site.cabling.cable_runs`, the map ``cabling.csv``
holds without its names) and adds the lengths: total / median / longest cable length in metres
per medium (:func:`by_medium`); its links and cables per medium equal the closed form's. A
cable's length is its first link's routed length (the links of one cable run between the same
two devices).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np


@dataclass(frozen=True)
class MediumCount:
    """Links, cables and lengths of one medium."""

    medium: str
    kind: str              #: passive-copper, active-copper, active-optical, multimode, ...
    part_number: str
    links: int
    cables: int
    total_length_m: float | None    #: None until the site is placed (lengths are routed)
    median_length_m: float | None
    max_length_m: float | None
    reach_m: float          #: the medium's reach; every cable of it is at most this long

    def to_dict(self) -> dict:
        return {"kind": self.kind, "part_number": self.part_number, "links": self.links,
                "cables": self.cables, "total_length_m": self.total_length_m,
                "median_length_m": self.median_length_m, "max_length_m": self.max_length_m,
                "reach_m": self.reach_m}


def cable_counts(design, catalog) -> tuple[MediumCount, ...]:
    """``design``'s cables by medium: its site placed with default names, each link routed and
    given a medium (:func:`~clustertwin.design.site.cabling.cable_runs`, the numeric part of
    the map ``cabling.csv`` holds), counted by :func:`by_medium`."""
    from clustertwin.design.site.cabling import cable_runs
    from clustertwin.design.site.inventory import build_inventory

    inv = build_inventory(SimpleNamespace(name="cluster"), catalog, design)
    return by_medium(*cable_runs(inv, design))


def closed_form(classes) -> tuple[MediumCount, ...]:
    """Per medium (in the order of :func:`~clustertwin.design.media.load_media`), the links and
    cables of the link classes that take it; lengths None (the site is not placed)."""
    from clustertwin.design.media import load_media

    out = []
    for m in load_media():
        mine = [c for c in classes if c.medium == m.id]
        if mine:
            out.append(MediumCount(m.id, m.kind, m.part_number, sum(c.links for c in mine),
                                   sum(c.cables for c in mine), None, None, None,
                                   float(m.max_length_m)))
    return tuple(out)


def routed(design, catalog):
    """``design`` with its cables' routed lengths in ``cabling`` (the site placed and every
    link routed: what ``plan --cabling`` asks for); links and cables per medium unchanged."""
    from dataclasses import replace

    return replace(design, cabling=cable_counts(design, catalog))


def by_medium(pick: np.ndarray, cable_id: np.ndarray, length_m: np.ndarray) -> tuple[MediumCount, ...]:
    """Per medium (in the order of :func:`~clustertwin.design.media.load_media`; ``pick`` indexes
    it), from each link's medium, cable id and length."""
    from clustertwin.design.media import load_media

    _, first = np.unique(cable_id, return_index=True)
    first_pick = pick[first]
    lengths_all = np.asarray(length_m, dtype=float)
    out = []
    for k, m in enumerate(load_media()):
        n = int(np.count_nonzero(pick == k))
        if not n:
            continue
        lengths = lengths_all[first[first_pick == k]]
        out.append(MediumCount(m.id, m.kind, m.part_number, n, int(lengths.size),
                               round(float(lengths.sum()), 1), round(float(np.median(lengths)), 1),
                               round(float(lengths.max()), 1), float(m.max_length_m)))
    return tuple(out)


def cabling_contract(counts: tuple[MediumCount, ...]) -> dict:
    """``design.cabling`` in the plan JSON."""
    routed = all(c.total_length_m is not None for c in counts)
    return {"links": sum(c.links for c in counts), "cables": sum(c.cables for c in counts),
            "total_length_m": round(sum(c.total_length_m for c in counts), 1) if routed else None,
            "placed": routed and bool(counts),
            "by_medium": {c.medium: c.to_dict() for c in counts}}


def media_bom_lines(counts: tuple[MediumCount, ...]) -> tuple:
    """Network BOM lines per medium of the cabling map, so the bill of materials and
    ``cabling.csv`` count the same parts. A copper or active-optical medium is one line: its
    cables with their fixed ends, ``links`` at ``usd_per_link``. An optical medium whose part
    number names a transceiver and a fibre (``MODULE + FIBRE``) is three: the transceivers at
    end A and at end B of every link (quantity = link ends, priced per port; a twin-port module
    carries two) and the fibre; the three sum to ``links x usd_per_link``."""
    from clustertwin.design.media import load_media

    media = {m.id: m for m in load_media()}
    out = []
    for c in counts:
        m = media[c.medium]
        parts = [p.strip() for p in m.part_number.split(" + ")]
        if m.cable_usd_per_link > 0 and len(parts) == 2:
            out += _optics_lines(c, m, parts[0], parts[1])
            continue
        item = (f"{c.medium} links ({m.kind}, up to {m.max_length_m:g} m; cable with its ends): "
                f"{c.cables:,} cables")
        out.append(_medium_line(item, c.links, float(m.usd_per_link), m, m.part_number))
    return tuple(out)


def _medium_line(item: str, qty: float, unit: float, m, part: str, unit_name: str = "each"):
    from clustertwin.design.bom import BomLine

    return BomLine("network", item, None, qty, unit, unit * qty, m.source, part_number=part,
                   as_of=m.as_of, vendor=m.vendor, unit=unit_name)


def _optics_lines(c: MediumCount, m, module: str, fibre: str) -> list:
    import math

    per_port = (float(m.usd_per_link) - float(m.cable_usd_per_link)) / 2.0
    ppm = max(1, int(m.ports_per_module))
    modules = math.ceil(c.links / ppm)
    kind = f"{ppm}-port module" if ppm > 1 else "module"
    out = [_medium_line(f"{c.medium} transceiver, end {end} of each link: {module} ({kind}; "
                        f"{modules:,} modules for {c.links:,} ports)", c.links, per_port, m,
                        module, "port")
           for end in ("A", "B")]
    out.append(_medium_line(f"{c.medium} fibre, one per link: {fibre} ({c.cables:,} cables, "
                            f"up to {m.max_length_m:g} m)",
                            c.links, float(m.cable_usd_per_link), m, fibre))
    return out
