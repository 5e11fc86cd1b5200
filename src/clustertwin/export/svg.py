"""Floor plan and rack elevations as standalone SVG (no scripts, no external references).

* ``floor_plan_svg``: rows of racks seen from above, each rack a cell coloured by kind
  (compute, network, management, storage), row labels on the left, a legend.
* ``rack_elevations_svg``: one front elevation per distinct rack layout (the first rack of each
  kind), with every racked device in its slot, coloured by role.
"""

from __future__ import annotations

from clustertwin.export.stage import ExportContext
from clustertwin.quoting import html_text as escape

KIND_COLOURS = {"compute": "#4c78a8", "network": "#f58518", "management": "#54a24b",
                "storage": "#b279a2"}
ROLE_COLOURS = {"node": "#4c78a8", "nvswitch": "#72b7b2", "leaf": "#f58518",
                "spine": "#e45756", "core": "#9d755d", "storage-leaf": "#eeca3b",
                "storage-spine": "#eeca3b", "storage-core": "#eeca3b", "inband": "#54a24b",
                "oob": "#88d27a", "ufm": "#bab0ac", "management": "#54a24b",
                "storage": "#b279a2"}


def floor_plan_svg(ctx: ExportContext, cell: int = 14, gap: int = 2) -> str:
    return racks_svg(ctx.inventory.racks, ctx.inventory.name, cell, gap)


def design_floor_plan(design, name: str) -> str:
    """The floor plan of a design alone (no catalog needed): the figure plan.html embeds."""
    from clustertwin.design.rules import load_rules
    from clustertwin.design.site.inventory import rack_list
    from clustertwin.design.site.naming import Naming

    return racks_svg(rack_list(design, load_rules(), Naming()), name)


def racks_svg(racks, name: str, cell: int = 14, gap: int = 2) -> str:
    """Rows of racks seen from above, coloured by kind, with a legend."""
    per_row = max((r.position for r in racks), default=1)
    rows = max((r.row for r in racks), default=0)
    left, top = 44, 28
    w = max(left + per_row * (cell + gap) + 10, 4 * 110 + left)
    h = top + rows * (cell + 3 * gap) + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="10">',
             f"<title>floor plan: {escape(name)}, {len(racks)} racks in {rows} rows"
             "</title>"]
    for r in racks:
        x = left + (r.position - 1) * (cell + gap)
        y = top + (r.row - 1) * (cell + 3 * gap)
        parts.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" '
                     f'fill="{KIND_COLOURS.get(r.kind, "#999")}"><title>{escape(r.name)} '
                     f"({r.kind})</title></rect>")
    for row in range(1, rows + 1):
        y = top + (row - 1) * (cell + 3 * gap) + cell - 3
        parts.append(f'<text x="4" y="{y}">row {row}</text>')
    x = left
    for kind, colour in KIND_COLOURS.items():
        n = sum(1 for r in racks if r.kind == kind)
        parts.append(f'<rect x="{x}" y="6" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{x + 13}" y="15">{kind} ({n})</text>')
        x += 110
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


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


def rack_elevations_svg(ctx: ExportContext, unit: int = 9, width: int = 150) -> str:
    """Front elevation of the first rack of each kind: devices stacked from the bottom at
    their catalog height (U), the rack's ``rack_ru`` drawn with U marks every 5."""
    from clustertwin.design.rules import load_rules

    inv = ctx.inventory
    rack_u = int(load_rules().num("rack_ru"))
    heights = device_heights(ctx)
    firsts: dict[str, str] = {}
    for r in inv.racks:
        firsts.setdefault(r.kind, r.name)
    content: dict[str, list] = {name: [] for name in firsts.values()}
    for d in inv.devices:
        if d.rack in content and d.slot:
            content[d.rack].append(d)
    top = 22
    h = top + rack_u * unit + 24
    w = 20 + len(content) * (width + 40)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="8">',
             f"<title>rack elevations: {escape(inv.name)}</title>"]
    for i, (kind, name) in enumerate(firsts.items()):
        x = 30 + i * (width + 40)
        parts.append(f'<text x="{x}" y="14" font-size="10">{escape(name)} ({kind})</text>')
        parts.append(f'<rect x="{x}" y="{top}" width="{width}" height="{rack_u * unit}" '
                     'fill="#f4f4f4" stroke="#333"/>')
        for u in range(5, rack_u + 1, 5):
            parts.append(f'<text x="{x - 16}" y="{top + (rack_u - u + 1) * unit - 1}">'
                         f"{u}</text>")
        used = 0
        for d in sorted(content[name], key=lambda d: d.slot):
            hu = heights.get(d.model, heights.get(d.role, 1))
            if used + hu > rack_u:
                break                      # more than the rack holds: drawn up to the top
            y = top + (rack_u - used - hu) * unit
            used += hu
            parts.append(f'<rect x="{x + 2}" y="{y + 1}" width="{width - 4}" '
                         f'height="{hu * unit - 2}" fill="{ROLE_COLOURS.get(d.role, "#999")}">'
                         f"<title>{escape(d.name)} ({d.role}, {hu}U)</title></rect>"
                         f'<text x="{x + 5}" y="{y + min(hu, 2) * unit - 2}" fill="#fff">'
                         f"{escape(d.name)}</text>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
