"""Drawings a designer would sign (issue 37). For 1,024, 16,384 and 100,000 H100: every cooling
unit, rack and aisle drawn fits inside its hall without overlap (the layout the sheets draw,
``check_layout``), every text is at least 2 mm tall at the sheet's print size, every sheet has
a title block, one hall per sheet, and the elevations show every rack type with its power."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from clustertwin.design import design, load_rules
from clustertwin.drawings import rack_elevations_svg
from clustertwin.drawings.floor import floor_plan_sheets, layouts
from clustertwin.drawings.hall_layout import Box, HallLayout, check_layout
from clustertwin.drawings.sheet import MIN_TEXT_MM, SHEETS, choose_sheet
from design.helpers import scenario

NS = "{http://www.w3.org/2000/svg}"
SIZES = [1024, 16_384, 100_000]


@pytest.fixture(scope="module", params=SIZES, ids=[f"{g}-h100" for g in SIZES])
def site(request, catalog):
    d = design(scenario(catalog, request.param), catalog, None)
    inv, lays, geo, per_row = layouts(d, name="t")
    return d, inv, lays, floor_plan_sheets(d, inv, "t", date="2027-01-05")


def test_everything_drawn_fits_its_hall_without_overlap(site):
    d, inv, lays, _ = site
    assert len(lays) == d.floor.halls
    assert sum(len(lay.of("rack")) for lay in lays) == d.racks
    assert sum(len(lay.of("crah")) for lay in lays) == d.cooling.crah_units
    assert sum(len(lay.of("rdhx")) for lay in lays) == d.cooling.rdhx_units
    for lay in lays:
        assert check_layout(lay) == []
        assert lay.of("cold-aisle") and lay.of("crah")


def test_every_text_is_at_least_2mm_at_print_size(site):
    _, _, _, sheets = site
    for _, svg in sheets:
        root = ET.fromstring(svg)
        w, h = (float(root.get(k).removesuffix("mm")) for k in ("width", "height"))
        assert (w, h) in {*SHEETS.values(), *((b, a) for a, b in SHEETS.values())}
        assert root.get("viewBox") == f"0 0 {w:g} {h:g}"            # 1 user unit = 1 mm
        sizes = [float(t.get("font-size", root.get("font-size"))) for t in root.iter(f"{NS}text")]
        assert sizes and min(sizes) >= MIN_TEXT_MM


def test_one_hall_per_sheet_with_a_title_block(site):
    d, _, lays, sheets = site
    halls = d.floor.halls
    assert len(sheets) == halls + (1 if halls > 1 else 0)
    for i, (_, svg) in enumerate(sheets):
        root = ET.fromstring(svg)
        texts = [t.text for t in root.iter(f"{NS}text")]
        for field in ("project", "scenario", "drawing", "date", "scale", "revision", "sheet"):
            assert field in texts
        assert f"{i + 1} of {len(sheets)}" in texts and "2027-01-05" in texts
        assert any(re.fullmatch(r"1:\d+ at A\d", t or "") for t in texts)
        racks = [e for e in root.iter(f"{NS}rect") if e.get("class") == "rack"]
        hall = i if halls > 1 else i + 1            # sheet 1 of a multi-hall site: key plan
        assert len(racks) == (len(lays[hall - 1].of("rack")) if hall else 0)


def test_crahs_that_cannot_fit_are_caught():
    """A gallery asked to hold more units than its wall length: the check names the overlap."""
    crahs = tuple(Box("crah", f"CRAH left {k}", -2.2, k * 1.0, 1.2, 2.4) for k in range(5))
    lay = HallLayout(1, 1, 2, 15.6, 6.0, 2.2, crahs, ())
    problems = check_layout(lay)
    assert any("overlaps" in p for p in problems) and any("leaves the hall" in p for p in problems)


def test_sheet_choice_prefers_the_readable_scale_on_the_least_paper():
    small = choose_sheet(20.0, 10.0)
    assert (small.scale, small.size) == (100, "A3")
    big = choose_sheet(25.0, 90.0)
    assert big.scale == 100 and big.size == "A0"
    huge = choose_sheet(120.0, 90.0)
    assert huge.scale > 100


@pytest.mark.parametrize("gpus", [1024, 1008])
def test_elevations_show_every_rack_type_with_its_power(catalog, gpus):
    from clustertwin.drawings.elevations import rack_types
    from clustertwin.drawings.floor import inventory_of

    kw = {"node": "gb200-nvl72", "gpu": "gb200"} if gpus == 1008 else {}
    d = design(scenario(catalog, gpus, **kw), catalog, None)
    inv, cat = inventory_of(d, None, "t")
    types = rack_types(d, inv, cat, load_rules())
    assert sum(t.count for t in types) == d.racks
    assert {t.kind for t in types} == {r.kind for r in inv.racks}
    compute = [t for t in types if t.kind == "compute"]
    full = max(compute, key=lambda t: t.count)
    assert full.power_kw == pytest.approx(d.power.rack_kw, rel=0.02)
    svg = rack_elevations_svg(d, inv, "t")
    root = ET.fromstring(svg)
    shown = [g for g in root.iter(f"{NS}g") if g.get("class") == "rack-type"]
    assert len(shown) == len(types)
    powers = [t.text for t in root.iter(f"{NS}text") if t.get("class") == "rack-power"]
    assert len(powers) == len(types) and all(p.endswith("kW max") for p in powers)
    sizes = [float(t.get("font-size")) for t in root.iter(f"{NS}text")]
    assert min(sizes) >= MIN_TEXT_MM


def test_an_air_hall_whose_crahs_cannot_fit_is_warned_and_caught(catalog):
    """Open-air A100 racks (28 kW rack limit) with small 100 kW CRAHs: 150 units for 78 m of
    gallery on each side. The design warns, and the drawn layout shows the overlaps."""
    rules = load_rules().with_values(rack_power_limit_air_kw=28, crah_kw=100)
    d = design(scenario(catalog, 16_384, node="dgx-a100", gpu="a100-sxm-80gb",
                        fabric={"technology": "ib-hdr"}), catalog, None, rules=rules)
    assert d.cooling.mode == "air"
    assert any("do not fit" in w and "CRAH" in w for w in d.warnings)
    _, lays, _, _ = layouts(d, name="t")
    assert any("CRAH" in p and "overlaps" in p for lay in lays for p in check_layout(lay))
