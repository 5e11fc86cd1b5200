"""The procurement routes' catalog figures (``route`` entries of ``catalog/data/routes.yaml``),
looked up per GPU generation, with the scenario's ``decision.<route>`` overrides applied."""

from __future__ import annotations

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


def grid_wait_days(catalog: Any, facility_mw: float) -> tuple[float, float]:
    """(P50, P90) days until the utility energises a facility of ``facility_mw``: linear in MW
    between the catalog's points (``route build``), flat past the last, prorated below the first."""
    import numpy as np

    b = route(catalog, "build")
    out = []
    for q in ("p50", "p90"):
        pts = curve_points(b, f"grid_wait_{q}_days_at_")
        xs, ys = [0.0] + [p[0] for p in pts], [0.0] + [p[1] for p in pts]
        out.append(float(np.interp(facility_mw, xs, ys)))
    return out[0], max(out)


def colo_ready_chance(catalog: Any, it_mw: float) -> float:
    """Chance a block of ``it_mw`` is found in existing powered space: 1 up to the catalog's
    small block, falling linearly to 0 at the largest block one site hands over."""
    c = route(catalog, "colo")
    lo, hi = c.value("small_block_mw"), c.value("largest_block_mw")
    return float(min(1.0, max(0.0, (hi - it_mw) / (hi - lo))))
