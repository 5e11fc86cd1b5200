"""Floor plan and rack elevations as standalone SVG (no scripts, no external references).

* ``floor_plan_svg``: rows of racks seen from above, each rack a cell coloured by kind
  (compute, network, management, storage), row labels on the left, a legend.
* ``rack_elevations_svg``: one front elevation per distinct rack layout (the first rack of each
  kind), with every racked device in its slot, coloured by role.
"""

from __future__ import annotations

from html import escape

from clustertwin.export.stage import ExportContext

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
    from clustertwin.export.inventory import _racks
    from clustertwin.export.naming import Naming

    return racks_svg(_racks(design, load_rules(), Naming()), name)


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


def rack_elevations_svg(ctx: ExportContext, unit: int = 9, width: int = 150) -> str:
    inv = ctx.inventory
    firsts: dict[str, str] = {}
    for r in inv.racks:
        firsts.setdefault(r.kind, r.name)
    content: dict[str, list] = {name: [] for name in firsts.values()}
    for d in inv.devices:
        if d.rack in content and d.slot:
            content[d.rack].append(d)
    slots = max((len(v) for v in content.values()), default=1)
    h = 40 + max(slots, 1) * unit + 20
    w = 20 + len(content) * (width + 30)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="8">',
             f"<title>rack elevations: {escape(inv.name)}</title>"]
    for i, (kind, name) in enumerate(firsts.items()):
        x = 20 + i * (width + 30)
        parts.append(f'<text x="{x}" y="14" font-size="10">{escape(name)} ({kind})</text>')
        parts.append(f'<rect x="{x}" y="22" width="{width}" height="{slots * unit + 4}" '
                     'fill="none" stroke="#333"/>')
        for k, d in enumerate(sorted(content[name], key=lambda d: d.slot)):
            y = 24 + k * unit
            parts.append(f'<rect x="{x + 2}" y="{y}" width="{width - 4}" height="{unit - 1}" '
                         f'fill="{ROLE_COLOURS.get(d.role, "#999")}"><title>{escape(d.name)} '
                         f"({d.role})</title></rect>"
                         f'<text x="{x + 5}" y="{y + unit - 2}" fill="#fff">'
                         f"{escape(d.name)}</text>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
