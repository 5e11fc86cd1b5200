"""Drawings to scale (issue 22): valid SVG, racks spaced by the documented rack width and
aisles, every hall drawn with its dimensions, CDU / CRAH / RPP positions labelled, and a fabric
diagram that shows every tier of the design."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

import pytest

from clustertwin.design import design, load_rules
from clustertwin.design.geometry import Geometry
from clustertwin.drawings import floor_plan_svg, rack_elevations_svg, topology_svg
from design.helpers import scenario

NS = "{http://www.w3.org/2000/svg}"


def _rects(svg: str, cls: str):
    return [e for e in ET.fromstring(svg).iter(f"{NS}rect") if e.get("class") == cls]


@pytest.fixture(scope="module")
def nvl72(catalog):
    return design(scenario(catalog, 1008, node="gb200-nvl72", gpu="gb200"), catalog, None)


@pytest.fixture(scope="module")
def h100(catalog):
    return design(scenario(catalog, 16_384), catalog, None)


def _mm_per_m(svg: str) -> float:
    """Paper mm per metre of the sheet's scale (title block "1:100 at A1")."""
    scale = next(e.text for e in ET.fromstring(svg).iter(f"{NS}text") if e.get("class") == "tb-scale")
    return 1000.0 / float(scale.split(" ")[0].split(":")[1])


def test_floor_plan_is_to_scale(h100):
    svg = floor_plan_svg(h100, name="t")
    racks = _rects(svg, "rack")
    assert len(racks) == h100.racks
    geo = Geometry.from_rules(load_rules())
    s = _mm_per_m(svg)
    by_row = defaultdict(list)
    for r in racks:
        by_row[float(r.get("y"))].append(float(r.get("x")))
        assert float(r.get("width")) == pytest.approx(geo.rack_width_m * s, abs=0.01)
        assert float(r.get("height")) == pytest.approx(geo.rack_depth_m * s, abs=0.01)
    xs = sorted(by_row[min(by_row)])
    steps = {round(b - a, 1) for a, b in zip(xs, xs[1:], strict=False)}
    assert steps == {round(geo.rack_width_m * s, 1)}
    ys = sorted(by_row)
    # rows alternate around a hot aisle and a cold aisle
    assert ys[1] - ys[0] == pytest.approx((geo.rack_depth_m + geo.hot_aisle_m) * s, abs=0.02)
    assert ys[2] - ys[1] == pytest.approx((geo.rack_depth_m + geo.cold_aisle_m) * s, abs=0.02)
    dims = [e.text for e in ET.fromstring(svg).iter(f"{NS}text") if e.get("class") == "dimension"]
    assert f"{geo.hall_width_m(20):.1f} m" in dims


def test_floor_plan_labels_power_and_cooling(nvl72):
    svg = floor_plan_svg(nvl72, name="t")
    root = ET.fromstring(svg)
    assert len(_rects(svg, "cdu")) == nvl72.cooling.cdu_units > 0
    assert len(_rects(svg, "crah")) == nvl72.cooling.crah_units
    busways = [e for e in root.iter(f"{NS}line") if e.get("class") == "busway"]
    assert len(busways) == 2 * nvl72.floor.rows               # an A and a B run over every row
    labels = [e.find(f"{NS}title").text for e in _rects(svg, "rack")]
    assert labels[0].startswith("r01-01")
    assert len(_rects(svg, "hot-aisle")) >= 1 and len(_rects(svg, "cold-aisle")) >= 2


def test_every_hall_is_drawn(catalog):
    from clustertwin.drawings.floor import floor_plan_sheets

    big = design(scenario(catalog, 100_000), catalog, None)
    sheets = floor_plan_sheets(big, name="t")
    key = ET.fromstring(sheets[0][1])
    blocks = [e for e in key.iter(f"{NS}rect") if "hall-block" in (e.get("class") or "")]
    assert len(blocks) == big.floor.halls > 1
    assert sum(len(_rects(svg, "rack")) for _, svg in sheets[1:]) == big.racks
    assert [stem for stem, _ in sheets[1:]] == [f"floor-plan-hall-{h:02d}"
                                                for h in range(1, big.floor.halls + 1)]


@pytest.mark.parametrize("gpus,tiers", [(1024, {"nodes", "leaf", "spine"}),
                                        (16_384, {"nodes", "leaf", "spine", "core"})])
def test_topology_shows_every_tier_with_links(catalog, gpus, tiers):
    d = design(scenario(catalog, gpus), catalog, None)
    svg = topology_svg(d, name="t")
    root = ET.fromstring(svg)
    shown = {e.find(f"{NS}title").text.split(":")[0] for e in root.iter(f"{NS}rect")
             if e.get("class") == "tier"}
    assert shown == tiers
    edges = [e.text for e in root.iter(f"{NS}text") if e.get("class") == "edge"]
    assert f"{d.fabric.plane.leaf_spine_links:,} links x 400 Gb/s" in edges
    assert len(_rects(svg, "su-leaf")) == d.fabric.leaves_per_su


def test_rack_elevations_are_valid_svg(nvl72):
    svg = rack_elevations_svg(nvl72, name="t")
    ET.fromstring(svg)
    # every NVL72 rack type (they differ by the management devices they carry): 18 compute
    # trays and 9 NVLink switch trays each
    n = svg.count("(node, 1U)")
    assert n and n % 18 == 0 and svg.count("(nvswitch, 1U)") == n // 2
