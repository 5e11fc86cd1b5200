"""Cables by medium: what the design reports of its cabling map (``design.cabling``).

:func:`cable_counts` builds the site (:func:`~clustertwin.design.site.inventory.build_inventory`,
default names) and its links' routed lengths and media
(:func:`~clustertwin.design.site.cabling.cable_runs`, the map ``cabling.csv`` holds without
its names). :func:`by_medium` counts it per medium: links, cables (links sharing a physical cable, such as
twin-port DACs, count once), total / median / longest cable length in metres, the medium's part
number and reach. A cable's length is its first link's routed length (the links of one cable
run between the same two devices).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np


@dataclass(frozen=True)
class MediumCount:
    medium: str
    kind: str              #: passive-copper, active-copper, active-optical, multimode, ...
    part_number: str
    links: int
    cables: int
    total_length_m: float
    median_length_m: float
    max_length_m: float
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
    return {"links": sum(c.links for c in counts), "cables": sum(c.cables for c in counts),
            "total_length_m": round(sum(c.total_length_m for c in counts), 1),
            "by_medium": {c.medium: c.to_dict() for c in counts}}


def media_bom_lines(counts: tuple[MediumCount, ...]) -> tuple:
    """One network BOM line per medium: ``links`` of it, each priced at the medium's
    ``usd_per_link`` (the cable with the optics at both ends), with its part number(s), so the
    bill of materials and ``cabling.csv`` count the same parts."""
    from clustertwin.design.bom import BomLine
    from clustertwin.design.media import load_media

    media = {m.id: m for m in load_media()}
    out = []
    for c in counts:
        m = media[c.medium]
        item = (f"{c.medium} links ({m.kind}, up to {m.max_length_m:g} m; cable and both ends' "
                f"optics): {c.cables:,} cables, {c.total_length_m:,.0f} m in all")
        out.append(BomLine("network", item, None, c.links, float(m.usd_per_link),
                           float(m.usd_per_link) * c.links, m.source,
                           part_number=m.part_number, as_of=m.as_of, vendor=m.vendor))
    return tuple(out)
