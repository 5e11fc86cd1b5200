"""Rack elevations: the front of every rack type the site holds, with its power.

A rack type is a distinct content: the rack's kind and tier and the (role, model) of every
racked device in slot order. Each type is drawn once, at 1:10 (1:20 when the types do not fit
an A0 sheet at 1:10), devices stacked from the bottom at their catalog height (U), with how
many racks of that type the site holds, its maximum draw (the sum of its devices' maximum
power: nodes ``max_power_kw``, switches ``power_kw_max``, storage blocks ``power_kw``, UFM
appliances and head nodes by design rule) and its rack PDUs' capacity (``pdu_kw`` each).
"""

from __future__ import annotations

from dataclasses import dataclass

from clustertwin.drawings import sheet as S
from clustertwin.drawings.svgkit import KIND_COLOURS

ROLE_COLOURS = {"node": "#4c78a8", "nvswitch": "#72b7b2", "leaf": "#f58518", "spine": "#e45756",
                "core": "#9d755d", "storage-leaf": "#eeca3b", "storage-spine": "#eeca3b",
                "storage-core": "#eeca3b", "inband": "#54a24b", "oob": "#88d27a",
                "ufm": "#bab0ac", "management": "#54a24b", "storage": "#b279a2"}
_GAP_MM = 30.0          #: between racks on the sheet (U marks and labels)


@dataclass(frozen=True)
class RackType:
    kind: str
    tier: str
    example: str                     #: name of the first rack of this type
    count: int                       #: racks of this type on the site
    devices: tuple[tuple[str, str, str, int], ...]   #: (name, role, model, height U)
    power_kw: float                  #: maximum draw of the rack
    pdus: int
    pdu_kw: float                    #: one PDU's rating


def rack_types(design, inv, catalog, rules) -> list[RackType]:
    """Every distinct rack content on the site, in floor order of first appearance."""
    node = catalog.node(design.node_id)
    per_node_kw = node.max_power_kw / max(1, inv.trays_per_system)
    by_rack: dict[str, list] = {r.name: [] for r in inv.racks}
    pdus: dict[str, int] = {}
    for d in inv.devices:
        if d.rack in by_rack and d.slot:
            by_rack[d.rack].append(d)
        elif d.role == "pdu" and d.rack:
            pdus[d.rack] = pdus.get(d.rack, 0) + 1
    seen: dict[tuple, list] = {}
    for r in inv.racks:
        devs = sorted(by_rack[r.name], key=lambda d: d.slot)
        key = (r.kind, r.tier, tuple((d.role, d.model) for d in devs), pdus.get(r.name, 0))
        if key in seen:
            seen[key][1] += 1
            continue
        rows = tuple((d.name, d.role, d.model, _height(d, node, inv, catalog, rules))
                     for d in devs)
        kw = sum(_power(d, per_node_kw, catalog, rules) for d in devs)
        seen[key] = [(r, rows, kw, pdus.get(r.name, 0)), 1]
    return [RackType(r.kind, r.tier, r.name, n, rows, kw, p, rules.num("pdu_kw"))
            for (r, rows, kw, p), n in seen.values()]


def _height(d, node, inv, catalog, rules) -> int:
    if d.role == "node":
        return int(node.rack_units or max(1, int(inv.node_ru or 1)))   # NVL72 trays: 1U
    if d.role == "management":
        return int(rules.num("management_server_ru"))
    for kind in ("switch", "storage"):
        if d.model and catalog.has(kind, d.model):
            return int(catalog.get(kind, d.model).rack_units or 1)
    return 1


def _power(d, per_node_kw: float, catalog, rules) -> float:
    if d.role == "node":
        return per_node_kw
    if d.role == "ufm":
        return rules.num("ufm_appliance_kw")
    if d.role == "management":
        return rules.num("management_server_kw")
    if d.model and catalog.has("switch", d.model):
        return catalog.get("switch", d.model).power_kw_max
    if d.model and catalog.has("storage", d.model):
        return catalog.get("storage", d.model).power_kw
    return 0.0                     # NVLink switch trays: inside the rack-scale system's power


def elevations_svg(design, inv, catalog, rules, *, project: str = "", date: str = "",
                   revision: str = "A") -> str:
    """One sheet with the front elevation of every rack type and its power."""
    types = rack_types(design, inv, catalog, rules)
    rack_u = int(rules.num("rack_ru"))
    height_m = rack_u * rules.num("rack_unit_m")
    width_m = rules.num("rack_width_m")
    sh, cols = _sheet(len(types), width_m, height_m)
    ax, ay, _, _ = sh.area
    out = S.open_sheet(sh, f"rack elevations: {project}, {len(types)} rack types")
    for i, t in enumerate(types):
        x = ax + 12 + (i % cols) * (sh.mm(width_m) + _GAP_MM)
        y = ay + 16 + (i // cols) * (sh.mm(height_m) + 26)
        out += _rack(t, x, y, sh, rack_u, rules.num("rack_unit_m"), width_m)
    out += S.title_block(sh, S.SheetSet(project, date, revision),
                         f"rack elevations, every rack type ({len(types)})", 1)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _sheet(n: int, width_m: float, height_m: float):
    for scale in (10, 20, 50):
        for size in S.SHEETS:
            w, h = S.SHEETS[size]
            sh = S.Sheet(size, w, h, scale, S._area(w, h))
            cols = max(1, int((sh.area[2] - 12) // (sh.mm(width_m) + _GAP_MM)))
            rows = -(-n // cols)
            if rows * (sh.mm(height_m) + 26) + 16 <= sh.area[3]:
                return sh, cols
    w, h = S.SHEETS["A0"]
    sh = S.Sheet("A0", w, h, 50, S._area(w, h))
    return sh, max(1, int((sh.area[2] - 12) // (sh.mm(width_m) + _GAP_MM)))


def _rack(t: RackType, x: float, y: float, sh, rack_u: int, ru_m: float, width_m: float):
    from clustertwin.quoting import html_text

    W, H, U = sh.mm(width_m), sh.mm(rack_u * ru_m), sh.mm(ru_m)
    cap = t.pdus * t.pdu_kw
    head = f"{t.kind}{' ' + t.tier if t.tier else ''} x {t.count:,}"
    out = [f'<g class="rack-type" data-kind="{html_text(t.kind)}">',
           S.text(x, y - 10, head, S.TEXT_MM, weight="bold"),
           S.text(x, y - 6, f"{t.power_kw:,.1f} kW max", S.TEXT_MM, cls="rack-power"),
           S.text(x, y - 2, f"{t.pdus} PDU, {cap:,.1f} kW" if t.pdus else "no PDU listed",
                  S.MIN_TEXT_MM),
           f'<rect class="rack-frame" x="{x:.2f}" y="{y:.2f}" width="{W:.2f}" height="{H:.2f}" '
           f'fill="#f4f4f4" stroke="{KIND_COLOURS.get(t.kind, "#333")}" stroke-width="0.6"/>']
    for u in range(5, rack_u + 1, 5):
        out.append(S.text(x - 1, y + (rack_u - u + 1) * U - 0.3, str(u), S.MIN_TEXT_MM,
                          anchor="end"))
    used = 0
    for name, role, _model, hu in t.devices:
        if used + hu > rack_u:
            break                          # more than the rack holds: drawn up to the top
        dy = y + (rack_u - used - hu) * U
        used += hu
        out.append(f'<rect class="device" x="{x + 0.5:.2f}" y="{dy + 0.2:.2f}" '
                   f'width="{W - 1:.2f}" height="{hu * U - 0.4:.2f}" '
                   f'fill="{ROLE_COLOURS.get(role, "#999")}"><title>{html_text(name)} '
                   f"({role}, {hu}U)</title></rect>")
        label = f"{name} ({role})"
        if hu * U >= S.MIN_TEXT_MM + 0.4 and S.text_fits(label, S.MIN_TEXT_MM, W - 2):
            out.append(S.text(x + 1.2, dy + min(hu * U, 4.0) - 0.6, label, S.MIN_TEXT_MM,
                              fill="#fff"))
    out.append(S.text(x, y + H + 4, t.example, S.MIN_TEXT_MM, fill="#555"))
    out.append("</g>")
    return out
