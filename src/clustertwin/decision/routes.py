"""The procurement routes' catalog figures (``route`` entries of ``catalog/data/routes.yaml``),
looked up per GPU generation, with the scenario's ``decision.<route>`` overrides applied."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

#: a generation without its own figure takes hopper's (the generation most figures cover)
FALLBACK_GENERATION = "hopper"


def route(catalog: Any, route_id: str) -> Any:
    return catalog.get("route", route_id, path=f"route {route_id}")


def per_generation(entry: Any, key: str, generation: str, notes: list[str]) -> float:
    """``key_<generation>``, else hopper's with a note naming the substitution."""
    own = f"{key}_{generation}"
    if own in entry.items:
        return entry.value(own)
    notes.append(f"{entry.id}: no {key} figure for {generation} GPUs in the catalog; hopper's used")
    return entry.value(f"{key}_{FALLBACK_GENERATION}")


def hardware_ready_days(catalog: Any, lead: tuple[float, float], gpus: int) -> tuple[float, float, float]:
    """(P50, P90) days from order to ``gpus`` GPUs delivered, racked and accepted in ready space:
    the GPU order lead time ``lead`` (P50, P90; :attr:`Inputs.gpu_lead`) + installation of the
    first rack + the quantity at the fastest published delivery rate (xAI Colossus); then the
    order lead time's P50 alone."""
    hw = route(catalog, "hardware")
    install = hw.value("first_rack_to_training_days") + gpus / hw.value("delivery_gpus_per_day")
    return lead[0] + install, lead[1] + install, lead[0]


def curve_points(entry: Any, prefix: str) -> list[tuple[float, float]]:
    """``(MW, value)`` points of items named ``<prefix><MW>mw``, in MW order."""
    import re

    pts = []
    for key in entry.items:
        m = re.fullmatch(re.escape(prefix) + r"(\d+(?:\.\d+)?)mw", key)
        if m:
            pts.append((float(m.group(1)), entry.value(key)))
    return sorted(pts)


def region(catalog: Any, region_id: str) -> Any:
    """The siting region (``decision.region``; catalog kind ``region``)."""
    return catalog.get("region", region_id, path=f"region {region_id}")


@lru_cache(maxsize=1024)
def grid_wait_days(catalog: Any, region_id: str, facility_mw: float) -> tuple[float, float]:
    """(P50, P90) days until the region's utility energises a facility of ``facility_mw``:
    linear in MW between the region's points, flat past the last, prorated below the first.
    Remembered per arguments (a catalog is read-only once built): the route Monte Carlo prices
    the build route a dozen times at the same load."""
    import numpy as np

    pts = region(catalog, region_id).grid
    xs = [0.0] + [p.mw for p in pts]
    p50 = float(np.interp(facility_mw, xs, [0.0] + [p.p50_days for p in pts]))
    p90 = float(np.interp(facility_mw, xs, [0.0] + [p.p90_days for p in pts]))
    return p50, max(p50, p90)


def colo_ready_chance(catalog: Any, region_id: str, it_mw: float) -> float:
    """Chance a block of ``it_mw`` is found in the region's existing powered space: 1 up to its
    small block, falling linearly to 0 at the largest block one site hands over."""
    c = region(catalog, region_id).colo
    lo, hi = c.small_block_mw, c.largest_block_mw
    return float(min(1.0, max(0.0, (hi - it_mw) / (hi - lo))))
