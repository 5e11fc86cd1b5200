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


def hardware_ready_days(catalog: Any, generation: str, gpus: int,
                        notes: list[str]) -> tuple[float, float, float]:
    """(P50, P90) days from order to ``gpus`` GPUs delivered, racked and accepted in ready space:
    the generation's order lead time + installation of the first rack + the quantity at the
    fastest published delivery rate (xAI Colossus); then the order lead time's P50 alone."""
    hw = route(catalog, "hardware")
    p50 = per_generation(hw, "lead_days_p50", generation, notes)
    p90 = max(p50, per_generation(hw, "lead_days_p90", generation, notes))
    install = hw.value("first_rack_to_training_days") + gpus / hw.value("delivery_gpus_per_day")
    return p50 + install, p90 + install, p50
