"""The floor plan: one sheet per hall at a standard scale (1:100, 1:200 ...) on the smallest ISO
A sheet that holds it, with a title block, and for a multi-hall site a key plan of every hall
with the inter-hall cable trunks. Everything a hall sheet draws comes from
:func:`clustertwin.drawings.hall_layout.hall_layouts` (checked by ``check_layout``); every
text is at least 2 mm tall at the sheet's print size (:mod:`clustertwin.drawings.sheet`)."""

from __future__ import annotations

from clustertwin.drawings import sheet as S
from clustertwin.drawings.hall_layout import hall_layouts
from clustertwin.drawings.svgkit import KIND_COLOURS

_COLD, _HOT = "#dbeaf7", "#f7d9d4"
COLOURS = {"crah": "#9ecae1", "cdu": "#26a69a", "rdhx": "#3182bd", "gallery": "#eeeeee",
           "busway": "#d62728"}
_PAD_M = 2.5          #: room around a hall on its sheet for dimensions, m


def inventory_of(design, inventory=None, name: str = ""):
    """(inventory, catalog): the given inventory, or one built from the built-in catalog."""
    from types import SimpleNamespace

    from clustertwin.catalog import load_catalog

    cat = load_catalog()
    if inventory is not None:
        return inventory, cat
    from clustertwin.design.site.inventory import build_inventory

    return build_inventory(SimpleNamespace(name=name or "cluster"), cat, design), cat


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


def layouts(design, inventory=None, name: str = ""):
    """(inventory, hall layouts, geometry, racks per row) of a design."""
    from clustertwin.design.geometry import Geometry
    from clustertwin.design.rules import load_rules

    inv, cat = inventory_of(design, inventory, name)
    rules = load_rules()
    geo = Geometry.from_rules(rules)
    per_row = max(1, int(rules.num("racks_per_row")))
    return inv, hall_layouts(design, inv, cat, geo, per_row), geo, per_row


def floor_plan_sheets(design, inventory=None, name: str = "", *, trunks=None, date: str = "",
                      revision: str = "A") -> list[tuple[str, str]]:
    """[(file stem, SVG)]: a multi-hall site's key plan first (``floor-plan``), then one sheet
    per hall (``floor-plan-hall-NN``); a single hall is one sheet (``floor-plan``)."""
    inv, lays, geo, per_row = layouts(design, inventory, name)
    project = name or inv.name
    multi = len(lays) > 1
    total = len(lays) + (1 if multi else 0)
    sheets = S.SheetSet(project, date, revision, total)
    out = []
    if multi:
        out.append(("floor-plan", _site_sheet(inv, lays, geo, trunks or {}, sheets)))
    for i, lay in enumerate(lays):
        stem = f"floor-plan-hall-{lay.hall:02d}" if multi else "floor-plan"
        out.append((stem, _hall_sheet(design, lay, geo, sheets, i + 1 + (1 if multi else 0))))
    return out


def floor_plan_svg(design, inventory=None, name: str = "", trunks=None,
                   detail_halls: int | None = None, *, date: str = "",
                   revision: str = "A") -> str:
    """The first floor-plan sheet: the key plan of a multi-hall site, else the hall's sheet.
    ``detail_halls=1`` returns the first hall's sheet of a multi-hall site instead."""
    sheets = floor_plan_sheets(design, inventory, name, trunks=trunks, date=date,
                               revision=revision)
    if detail_halls and len(sheets) > 1:
        return sheets[1][1]
    return sheets[0][1]


def _hall_sheet(design, lay, geo, sheets: S.SheetSet, n: int) -> str:
    project = sheets.project
    ex, ey, ew, eh = lay.envelope
    sh = S.choose_sheet(ew + 2 * _PAD_M, eh + 2 * _PAD_M)
    ax, ay, aw, ah = sh.area
    ox = ax + (aw - sh.mm(ew + 2 * _PAD_M)) / 2 + sh.mm(_PAD_M + lay.gallery_m)
    oy = ay + sh.mm(_PAD_M)

    def P(x: float, y: float) -> tuple[float, float]:
        return ox + sh.mm(x), oy + sh.mm(y)

    racks = [b for b in lay.boxes if b.kind == "rack"]
    title = (f"floor plan: {project}, hall {lay.hall}: {len(racks)} racks in {lay.rows} rows, "
             f"{lay.width_m:.1f} m x {lay.depth_m:.1f} m white space, 1:{sh.scale} at {sh.size}")
    out = S.open_sheet(sh, title)
    out += _galleries(lay, P, sh)
    out.append(_rect(*P(0, 0), sh.mm(lay.width_m), sh.mm(lay.depth_m), "#ffffff", "hall",
                     f"hall {lay.hall}: {lay.width_m:.1f} m x {lay.depth_m:.1f} m", "#000"))
    for b in lay.boxes:
        out.append(_box(b, P, sh))
    out += _busway_lines(lay, P)
    out += _labels(lay, P, sh, geo)
    x0, y0 = P(0, 0)
    out.append(S.text(x0 + sh.mm(lay.width_m) / 2, y0 + sh.mm(lay.depth_m) + 4.5,
                      f"{lay.width_m:.1f} m", anchor="middle", cls="dimension"))
    out.append(S.text(x0 - sh.mm(lay.gallery_m) - 2, y0 + sh.mm(lay.depth_m) / 2,
                      f"{lay.depth_m:.1f} m", anchor="middle", cls="dimension", rotate=True))
    out += _legend(sh, lay, design)
    right = ox + sh.mm(lay.width_m + lay.gallery_m) + 12
    below = oy + sh.mm(lay.depth_m) + 14
    if ax + aw - right >= 90:                       # the schedule beside the hall, or below it
        out += _schedule(right, ay + 10, lay, design)
    elif ay + ah - below >= 75:
        out += _schedule(ax + 10, below, lay, design)
    out += S.title_block(sh, sheets, f"hall {lay.hall} floor plan ({design.cooling.mode} cooling)", n)
    out.append("</svg>")
    return "\n".join(out) + "\n"


# an SVG element: its box and one argument per attribute it may carry
def _rect(x: float, y: float, w: float, h: float, fill: str, cls: str, title: str = "",
          stroke: str = "", sw: float = 0.15) -> str:
    from clustertwin.quoting import html_text

    s = f' stroke="{stroke}" stroke-width="{sw:g}"' if stroke else ""
    t = f"<title>{html_text(title)}</title>" if title else ""
    return (f'<rect class="{cls}" x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}" '
            f'fill="{fill}"{s}>{t}</rect>')


def _box(b, P, sh) -> str:
    x, y = P(b.x, b.y)
    fill = {"rack": KIND_COLOURS.get(b.rack_kind, "#999"), "cold-aisle": _COLD,
            "hot-aisle": _HOT}.get(b.kind, COLOURS.get(b.kind, "#999"))
    stroke = "#ffffff" if b.kind == "rack" else ("#333" if b.kind in COLOURS else "")
    return _rect(x, y, sh.mm(b.w), sh.mm(b.h), fill, b.kind, b.name, stroke)


def _galleries(lay, P, sh) -> list[str]:
    out = []
    for side, gx in (("left", -lay.gallery_m), ("right", lay.width_m)):
        x, y = P(gx, 0)
        out.append(_rect(x, y, sh.mm(lay.gallery_m), sh.mm(lay.depth_m), COLOURS["gallery"],
                         "gallery", f"{side} mechanical gallery ({lay.gallery_m:.1f} m)", "#000"))
    return out


def _busway_lines(lay, P) -> list[str]:
    out = []
    for x0, x1, y, feed in lay.busways:
        (a, b), (c, _) = P(x0, y), P(x1, y)
        dash = "2 1" if feed == "A" else "0.6 0.8"
        out.append(f'<line class="busway" x1="{a:.2f}" y1="{b:.2f}" x2="{c:.2f}" y2="{b:.2f}" '
                   f'stroke="{COLOURS["busway"]}" stroke-width="0.3" stroke-dasharray="{dash}">'
                   f"<title>busway {feed}</title></line>")
    return out


def _labels(lay, P, sh, geo) -> list[str]:
    """Rack names along each rack where 2 mm text fits, else a row label at each row's left
    end; CRAH labels along their units."""
    out = []
    racks = [b for b in lay.boxes if b.kind == "rack"]
    long = max((len(b.name.split(" ")[0]) for b in racks), default=0)
    per_rack = (sh.mm(geo.rack_width_m) >= S.MIN_TEXT_MM * 1.2
                and S.text_fits("x" * long, S.MIN_TEXT_MM, sh.mm(geo.rack_depth_m) * 0.9))
    if per_rack:
        for b in racks:
            x, y = P(b.x + b.w / 2, b.y + b.h / 2)
            out.append(S.text(x + 0.7, y, b.name.split(" ")[0], S.MIN_TEXT_MM, anchor="middle",
                              cls="rack-label", fill="#fff", rotate=True))
    else:
        for k in range(1, lay.rows + 1):
            x, y = P(0.15, float(geo.row_top_m(k)) + geo.rack_depth_m * 0.75)
            out.append(S.text(x, y, f"row {lay.first_row + k - 1}", S.MIN_TEXT_MM,
                              cls="row-label"))
    for b in lay.of("crah"):
        if S.text_fits("CRAH", S.MIN_TEXT_MM, sh.mm(b.h)) and sh.mm(b.w) >= 2.4:
            x, y = P(b.x + b.w / 2, b.y + b.h / 2)
            out.append(S.text(x + 0.7, y, "CRAH", S.MIN_TEXT_MM, anchor="middle", rotate=True,
                              cls="crah-label"))
    return out


def _legend(sh, lay, design) -> list[str]:
    """Key, notes and scale bar in the strip left of the title block."""
    x = S.MARGIN_MM + 2
    y = sh.height_mm - S.MARGIN_MM - S.TITLE_BLOCK_MM[1] + 4
    items = [(k, c) for k, c in KIND_COLOURS.items()] + [
        ("cold aisle", _COLD), ("hot aisle (contained)", _HOT), ("CRAH (gallery)", COLOURS["crah"]),
        ("rear-door HX", COLOURS["rdhx"]), ("CDU", COLOURS["cdu"])]
    out = ['<g class="legend">']
    cx = x
    for label, colour in items:
        out.append(_rect(cx, y, 3, 3, colour, "key", stroke="#333"))
        out.append(S.text(cx + 4, y + 2.6, label))
        cx += 8 + 1.5 * len(label)
    crahs = len(lay.of("crah"))
    note = (f"hall {lay.hall}: {lay.rows} rows; {crahs} fan-wall CRAHs (N+1) in the side "
            f"galleries; {len(lay.of('rdhx'))} rear doors; {len(lay.of('cdu'))} CDUs; "
            "A (dashed) and B (dotted) overhead busway over every row")
    out.append(S.text(x, y + 9, note, cls="note"))
    out.append(S.text(x, y + 14, f"{design.power.rack_kw:.1f} kW per compute rack at maximum "
                      f"draw; cooling mode {design.cooling.mode}", cls="note"))
    out.append("</g>")
    out += S.scale_bar(sh, x, y + 24)
    return out


def _schedule(x: float, y: float, lay, design) -> list[str]:
    """The hall's schedule beside the plan: racks by kind, load, cooling and power units."""
    kinds: dict[str, int] = {}
    for b in lay.of("rack"):
        kinds[b.rack_kind] = kinds.get(b.rack_kind, 0) + 1
    c, p = design.cooling, design.power
    halls = max(1, c.halls)
    rows = [("white space", f"{lay.width_m:.1f} m x {lay.depth_m:.1f} m "
             f"({lay.width_m * lay.depth_m:,.0f} m2)"),
            ("with galleries", f"{lay.width_m + 2 * lay.gallery_m:.1f} m x {lay.depth_m:.1f} m"),
            ("rows", f"{lay.rows} (site rows {lay.first_row}-{lay.first_row + lay.rows - 1})")]
    rows += [(f"{k} racks", f"{n:,}") for k, n in sorted(kinds.items())]
    rows += [("compute rack", f"{p.rack_kw:.1f} kW at maximum draw"),
             ("cooling", c.mode),
             ("CRAHs (N+1)", f"{len(lay.of('crah'))} x {c.crah_rating_kw:,.0f} kW fan walls"),
             ("room air load", f"{c.air_kw / halls:,.0f} kW (site {c.air_kw:,.0f} kW)"),
             ("rear doors", f"{len(lay.of('rdhx')):,} x {c.rdhx_kw / max(1, c.rdhx_units):,.1f} "
                            "kW" if c.rdhx_units else "none"),
             ("CDUs", f"{len(lay.of('cdu')):,}"),
             ("busway", f"{len(lay.busways):,} runs (A and B per row)")]
    out = ['<g class="schedule">', S.text(x, y, f"hall {lay.hall} schedule", S.HEAD_MM,
                                           weight="bold")]
    for i, (k, v) in enumerate(rows):
        out.append(S.text(x, y + 8 + i * 4.5, k, fill="#555"))
        out.append(S.text(x + 32, y + 8 + i * 4.5, v))
    out.append("</g>")
    return out


def _site_sheet(inv, lays, geo, trunks: dict, sheets: S.SheetSet) -> str:
    """Key plan: every hall's outline with galleries, rows and rack counts, and the trunks."""
    project = sheets.project
    hw = lays[0].width_m + 2 * lays[0].gallery_m
    gap = geo.hall_gap_m - 2 * lays[0].gallery_m
    depth = max(lay.depth_m for lay in lays)
    ext_w = len(lays) * hw + (len(lays) - 1) * gap + 2 * _PAD_M
    sh = S.choose_sheet(ext_w, depth + 4 * _PAD_M)
    ax, ay, aw, _ = sh.area
    ox = ax + (aw - sh.mm(ext_w)) / 2 + sh.mm(_PAD_M)
    oy = ay + sh.mm(3 * _PAD_M)
    out = S.open_sheet(sh, f"key plan: {project}, {len(inv.racks)} racks in {len(lays)} halls, "
                           f"1:{sh.scale} at {sh.size}")
    centre = {}
    for i, lay in enumerate(lays):
        x = ox + sh.mm(i * (hw + gap))
        kinds: dict[str, int] = {}
        for b in lay.of("rack"):
            kinds[b.rack_kind] = kinds.get(b.rack_kind, 0) + 1
        label = ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items()))
        out.append(_rect(x, oy, sh.mm(hw), sh.mm(lay.depth_m), "#f4f4f4", "hall hall-block",
                         f"hall {lay.hall}: {lay.width_m:.1f} m x {lay.depth_m:.1f} m, "
                         f"{lay.rows} rows ({label} racks)", "#000", 0.3))
        cx = x + sh.mm(hw) / 2
        centre[lay.hall] = cx
        out.append(S.text(cx, oy - 2, f"hall {lay.hall}", S.TEXT_MM, anchor="middle"))
        out.append(S.text(cx, oy + sh.mm(lay.depth_m) / 2, f"{lay.rows} rows, "
                          f"{sum(kinds.values()):,} racks", S.MIN_TEXT_MM, anchor="middle",
                          rotate=True))
        out.append(S.text(cx, oy + sh.mm(lay.depth_m) + 4, f"{lay.width_m:.1f} m + galleries",
                          S.MIN_TEXT_MM, anchor="middle", cls="dimension"))
    for k, ((a, b), n) in enumerate(sorted(trunks.items())):
        if a in centre and b in centre:
            y = oy - 6 - 4 * (k % 3)
            out.append(f'<g class="trunk"><line x1="{centre[a]:.2f}" y1="{y:.2f}" '
                       f'x2="{centre[b]:.2f}" y2="{y:.2f}" stroke="#6a3d9a" stroke-width="0.8"/>')
            out.append(S.text((centre[a] + centre[b]) / 2, y - 1,
                              f"hall {a} - hall {b}: {n:,} links", anchor="middle") + "</g>")
    out += S.scale_bar(sh, S.MARGIN_MM + 2, sh.height_mm - S.MARGIN_MM - 8)
    out += S.title_block(sh, sheets, "site key plan, all halls", 1)
    out.append("</svg>")
    return "\n".join(out) + "\n"
