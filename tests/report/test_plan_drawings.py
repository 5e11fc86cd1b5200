"""plan.html's drawings section (issue 22): the floor plan to scale, the fabric topology and
the rack elevations from ``clustertwin.drawings``; a hostile scenario name reaches them only
escaped, and at 100K GPUs the page shows the site's key plan and the first hall's sheet."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from clustertwin.design import design
from clustertwin.drawings.floor import floor_plan_svg
from design.helpers import scenario

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "</svg><script>alert(1)</script>\u2028<img src=x onerror=alert(2)> & \"q\" 'a'"


def _classes(svg: str, cls: str) -> int:
    return sum(1 for e in ET.fromstring(svg).iter() if cls in (e.get("class") or "").split())


def test_default_drawings_are_the_real_ones(default_plan):
    from clustertwin.report.html import default_drawings

    d = default_drawings(default_plan)
    assert list(d) == ["Floor plan", "Fabric topology", "Rack elevations"]
    for svg in d.values():
        ET.fromstring(svg)                                   # each a well-formed SVG document
    assert _classes(d["Floor plan"], "rack") == default_plan.design.racks
    assert _classes(d["Floor plan"], "cdu") == default_plan.design.cooling.cdu_units


def test_hostile_scenario_name_is_escaped_in_every_drawing(default_plan):
    from dataclasses import replace

    from clustertwin.report.html import default_drawings, render

    plan = replace(default_plan, scenario=default_plan.scenario.model_copy(update={"name": HOSTILE}))
    drawings = default_drawings(plan)
    for svg in drawings.values():
        root = ET.fromstring(svg)                            # the name cannot close the <svg>
        assert not any(e.tag.endswith("script") or e.tag.endswith("img") for e in root.iter())
        assert "<script" not in svg and "<img" not in svg
    page = render(plan)
    section = page[page.index('id="drawing-'):]
    assert "<script>alert(1)" not in section and "<img src=x" not in section


def test_page_draws_the_key_plan_and_one_hall_at_100k(catalog):
    big = design(scenario(catalog, 100_000), catalog, None)
    assert big.floor.halls > 1
    key = floor_plan_svg(big, name="t")
    hall1 = floor_plan_svg(big, name="t", detail_halls=1)
    assert _classes(key, "hall-block") == big.floor.halls          # every hall, to scale
    assert _classes(key, "rack") == 0
    assert 0 < _classes(hall1, "rack") < big.racks                 # one hall, rack by rack


@pytest.mark.parametrize("halls", [0, 1, 99])
def test_detail_halls_is_bounded(catalog, halls):
    d = design(scenario(catalog, 1024), catalog, None)
    svg = floor_plan_svg(d, name="t", detail_halls=halls)
    assert _classes(svg, "rack") == d.racks                  # one hall: always drawn in full
