"""The floor plan to scale: every hall, its rows, aisles, racks and power / cooling equipment
(see the package docstring for what is drawn and the dimensions used)."""

from __future__ import annotations

from clustertwin.drawings.svgkit import KIND_COLOURS, line, rect, svg_open, text

#: drawing scale, pixels per metre
SCALE_PX_PER_M = 12.0
_MARGIN_M = 4.0
_GALLERY_M = 3.0        #: mechanical gallery along each hall's front wall (CRAHs)
_COLD, _HOT = "#dbeaf7", "#f7d9d4"


def inventory_of(design, inventory=None, name: str = ""):
    """(inventory, catalog): the given inventory, or one built from the built-in catalog."""
    from types import SimpleNamespace

    from clustertwin.catalog import load_catalog

    cat = load_catalog()
    if inventory is not None:
        return inventory, cat
    from clustertwin.export.inventory import build_inventory

    return build_inventory(SimpleNamespace(name=name or "cluster"), cat, design), cat


def _halls(inv) -> dict[int, tuple[int, int]]:
    """hall -> (first site row, rows in the hall)."""
    out: dict[int, list[int]] = {}
    for r in inv.racks:
        out.setdefault(r.hall, []).append(r.row)
    return {h: (min(rows), max(rows) - min(rows) + 1) for h, rows in sorted(out.items())}


def inter_hall_counts(inv, cols) -> dict[tuple[int, int], int]:
    """{(hall a, hall b): links} between halls, a < b, from the cabling map's columns."""
    import numpy as np

    inter = np.flatnonzero(cols["reach"] == "inter-hall")
    if not inter.size:
        return {}
    hall_of = {r.name: r.hall for r in inv.racks}
    dev_hall = {d.name: hall_of.get(d.rack, 0) for d in inv.devices}
    out: dict[tuple[int, int], int] = {}
    for a, b in zip(cols["a_device"][inter].tolist(), cols["b_device"][inter].tolist(),
                    strict=True):
        key = tuple(sorted((dev_hall[a], dev_hall[b])))
        out[key] = out.get(key, 0) + 1
    return out


def floor_plan_svg(design, inventory=None, name: str = "", trunks=None) -> str:
    """Every hall seen from above, to scale (package docstring)."""
    from clustertwin.design.geometry import Geometry
    from clustertwin.design.rules import load_rules

    inv, _ = inventory_of(design, inventory, name)
    rules = load_rules()
    geo = Geometry.from_rules(rules)
    per_row = max(1, int(rules.num("racks_per_row")))
    halls = _halls(inv)
    s = SCALE_PX_PER_M
    hw = geo.hall_width_m(per_row)
    depth = max((geo.hall_depth_m(n) for _, n in halls.values()), default=geo.hall_depth_m(1))
    w = (2 * _MARGIN_M + len(halls) * hw + (len(halls) - 1) * geo.hall_gap_m) * s
    h = (2 * _MARGIN_M + _GALLERY_M + depth + 4) * s
    out = svg_open(max(w, 1150.0), h + 40, f"floor plan: {name or inv.name}, {len(inv.racks)} racks in "
                   f"{len(halls)} hall(s), to scale ({s:g} px per metre)")
    crah = _per_hall(design.cooling.crah_units, len(halls))
    for i, (hall, (first, rows)) in enumerate(halls.items()):
        x0 = (_MARGIN_M + i * (hw + geo.hall_gap_m)) * s
        y0 = (_MARGIN_M + _GALLERY_M) * s
        out += _hall(inv, geo, hall, first, rows, x0, y0, per_row, crah[i])
    out += _trunks(trunks or {}, list(halls), hw, geo.hall_gap_m)
    out += _scale_bar(h, s) + _legend(h + 20, inv)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _per_hall(n: int, halls: int) -> list[int]:
    return [n * (i + 1) // max(1, halls) - n * i // max(1, halls) for i in range(max(1, halls))]


def _hall(inv, geo, hall: int, first: int, rows: int, x0: float, y0: float, per_row: int,
          crahs: int) -> list[str]:
    s = SCALE_PX_PER_M
    hw, hd = geo.hall_width_m(per_row), geo.hall_depth_m(rows)
    out = [rect(x0, y0, hw * s, hd * s, "#ffffff", cls="hall", stroke="#222",
                title=f"hall {hall}: {hw:.1f} m x {hd:.1f} m"),
           text(x0 + hw * s / 2, y0 - _GALLERY_M * s - 6, f"hall {hall}", anchor="middle",
                size=12),
           text(x0 + hw * s / 2, y0 + hd * s + 14, f"{hw:.1f} m", anchor="middle",
                cls="dimension"),
           text(x0 - 4, y0 + hd * s / 2, f"{hd:.1f} m", anchor="end", cls="dimension")]
    out += _aisles(geo, rows, x0, y0, hw)
    out += _racks(inv, geo, hall, first, x0, y0)
    out += _row_ends(inv, geo, hall, first, rows, x0, y0, per_row)
    gy = y0 - _GALLERY_M * s
    out.append(rect(x0, gy, hw * s, _GALLERY_M * s, "#eeeeee", stroke="#999",
                    title=f"hall {hall} mechanical gallery ({_GALLERY_M:g} m)"))
    cw = min(2.4, 0.85 * hw / max(1, crahs))           # CRAH width along the gallery (m)
    for k in range(crahs):
        cx = x0 + (k + 0.5) * hw * s / max(1, crahs)
        out.append(rect(cx - cw * s / 2, gy + 0.8 * s, cw * s, 1.2 * s, "#9ecae1", cls="crah",
                        stroke="#333", title=f"CRAH {k + 1} of hall {hall}"))
        out.append(text(cx, gy + 1.6 * s, "CRAH", anchor="middle", size=min(0.7, cw / 3) * s))
    return out


def _aisles(geo, rows: int, x0: float, y0: float, hw: float) -> list[str]:
    s = SCALE_PX_PER_M
    out = []
    for r in range(1, rows + 2, 2):                       # cold aisles before odd rows
        y = y0 + (float(geo.row_top_m(r)) - geo.cold_aisle_m) * s
        out.append(rect(x0, y, hw * s, geo.cold_aisle_m * s, _COLD, cls="cold-aisle",
                        title=f"cold aisle {geo.cold_aisle_m:g} m"))
    for r in range(1, rows, 2):                           # contained hot aisle of each pair
        y = y0 + (float(geo.row_top_m(r)) + geo.rack_depth_m) * s
        out.append(rect(x0 + geo.end_aisle_m * s, y, (hw - 2 * geo.end_aisle_m) * s,
                        geo.hot_aisle_m * s, _HOT, cls="hot-aisle",
                        title=f"hot aisle {geo.hot_aisle_m:g} m, contained"))
    return out


def _racks(inv, geo, hall: int, first: int, x0: float, y0: float) -> list[str]:
    s = SCALE_PX_PER_M
    out = []
    for r in inv.racks:
        if r.hall != hall:
            continue
        x = x0 + (geo.end_aisle_m + (r.position - 1) * geo.rack_width_m) * s
        y = y0 + float(geo.row_top_m(r.row - first + 1)) * s
        tier = f", {r.tier}" if r.tier else ""
        out.append(rect(x, y, geo.rack_width_m * s, geo.rack_depth_m * s,
                        KIND_COLOURS.get(r.kind, "#999"), cls="rack", stroke="#fff",
                        title=f"{r.name} ({r.kind}{tier})"))
        out.append(text(x + geo.rack_width_m * s / 2, y + geo.rack_depth_m * s * 0.6,
                        r.name, anchor="middle", size=geo.rack_width_m * s * 0.22,
                        fill="#fff", cls="rack-label"))
    return out


def _row_ends(inv, geo, hall: int, first: int, rows: int, x0: float, y0: float,
              per_row: int) -> list[str]:
    """An RPP at the left end of every row, CDUs at the right end of the rows they serve,
    a 'network row' mark on rows of network racks only."""
    s = SCALE_PX_PER_M
    cdus: dict[int, list[str]] = {}
    for d in inv.role("cdu"):
        cdus.setdefault(d.row, []).append(d.name)
    pdus: dict[int, int] = {}
    kinds: dict[int, set[str]] = {}
    for r in inv.racks:
        if r.hall == hall:
            kinds.setdefault(r.row, set()).add(r.kind)
    for d in inv.role("pdu"):
        pdus[d.row] = pdus.get(d.row, 0) + 1
    out = []
    right = x0 + (geo.end_aisle_m + per_row * geo.rack_width_m) * s
    for row in range(first, first + rows):
        y = y0 + float(geo.row_top_m(row - first + 1)) * s
        out.append(rect(x0 + 0.3 * s, y, 0.8 * s, geo.rack_depth_m * s, "#fdd835", cls="rpp",
                        stroke="#333", title=f"RPP row {row}: feeds {pdus.get(row, 0)} rack PDUs"))
        here = cdus.get(row, [])
        deep = geo.rack_depth_m / max(1, -(-len(here) // 2))   # two abreast in the end aisle
        for k, nm in enumerate(here):
            out.append(rect(right + (0.1 + 0.8 * (k % 2)) * s, y + (k // 2) * deep * s,
                            0.7 * s, deep * s, "#26a69a", cls="cdu", stroke="#333",
                            title=f"{nm} (CDU)"))
        if kinds.get(row) == {"network"}:
            out.append(text(right + 0.2 * s, y - 2, "network row", size=0.6 * s))
    return out


def _trunks(trunks: dict, halls: list[int], hw: float, gap: float) -> list[str]:
    """Inter-hall cable trunks: an arc over the galleries between the two halls' centres,
    labelled with its link count."""
    s = SCALE_PX_PER_M
    centre = {h: (_MARGIN_M + i * (hw + gap) + hw / 2) * s for i, h in enumerate(halls)}
    out = []
    for k, ((a, b), n) in enumerate(sorted(trunks.items())):
        if a not in centre or b not in centre:
            continue
        y = (_MARGIN_M - 0.6 - 0.5 * (k % 4)) * s
        out.append(line(centre[a], y, centre[b], y, stroke="#6a3d9a", width=3))
        label = text((centre[a] + centre[b]) / 2, y - 3, f"hall {a} - hall {b}: {n:,} links",
                     anchor="middle", size=9)
        out.append(f'<g class="trunk">{rect(centre[a] - 2, y - 2, 4, 4, "#6a3d9a")}{label}</g>')
    return out


def _scale_bar(y: float, s: float) -> list[str]:
    x = _MARGIN_M * s
    return [line(x, y, x + 10 * s, y, width=2), line(x, y - 4, x, y + 4),
            line(x + 10 * s, y - 4, x + 10 * s, y + 4),
            text(x + 5 * s, y - 6, "10 m", anchor="middle", cls="scale")]


def _legend(y: float, inv) -> list[str]:
    items = [(k, c) for k, c in KIND_COLOURS.items()] + [
        ("cold aisle", _COLD), ("hot aisle (contained)", _HOT), ("RPP", "#fdd835"),
        ("CDU", "#26a69a"), ("CRAH", "#9ecae1")]
    out, x = [], _MARGIN_M * SCALE_PX_PER_M
    for label, colour in items:
        n = sum(1 for r in inv.racks if r.kind == label)
        out.append(rect(x, y, 10, 10, colour, stroke="#333"))
        out.append(text(x + 13, y + 9, f"{label} ({n})" if n else label))
        x += 16 + 7 * len(label) + (30 if n else 0)
    return out



