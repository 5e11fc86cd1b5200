"""Rack units per device model, for the exports that stack devices in racks (NetBox positions).

The drawings themselves (floor plan, rack elevations) live in :mod:`clustertwin.drawings`.
"""

from __future__ import annotations

from clustertwin.export.stage import ExportContext


def device_heights(ctx: ExportContext) -> dict[str, int]:
    """Rack units per device model / role, from the catalog and the design rules (1U where
    neither says: UFM appliances, NVL72 compute and switch trays)."""
    from clustertwin.design.rules import load_rules

    rules = load_rules()
    out = {"management": int(rules.num("management_server_ru"))}
    if ctx.node.rack_units:
        out["node"] = int(ctx.node.rack_units)
    cat = ctx.catalog
    if cat is not None:
        for d in ctx.inventory.devices:
            if d.model and d.model not in out and d.role not in ("node", "pdu", "cdu"):
                kind = "storage" if d.role == "storage" else "switch"
                try:
                    out[d.model] = int(cat.get(kind, d.model).rack_units or 1)
                except Exception:  # noqa: BLE001 - a model the catalog lacks draws as 1U
                    out[d.model] = 1
    return out
