"""Placement drives cabling (issue 22): every link has a routed length, an orderable medium
whose reach covers it, and the copper / optical cable counts per fabric are the design's."""

from __future__ import annotations

import numpy as np
import pytest

from clustertwin.design.geometry import Geometry
from clustertwin.design.media import choose_media, load_media
from clustertwin.design.rules import load_rules
from clustertwin.errors import InfeasibleError
from clustertwin.export.cabling import cabling_columns
from clustertwin.export.inventory import build_inventory
from export.helpers import catalog, design_of, scenario

CASES = [("1024-h100", 1024, {}), ("1008-gb200", 1008, {"node": "gb200-nvl72", "gpu": "gb200"}),
         ("2048-h100-fat-tree", 2048, {"fabric": {"topology": "fat-tree"}})]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def built(request):
    _, gpus, cluster = request.param
    scen = scenario(gpus, **cluster)
    d = design_of(scen)
    inv = build_inventory(scen, catalog(), d)
    return d, inv, cabling_columns(inv, d)


def test_every_link_has_a_length_within_its_media_reach(built):
    _, _, c = built
    assert (c["length_m"] > 0).all()
    assert (c["length_m"] <= c["max_length_m"]).all()
    assert all(c["part_number"]) and all(c["medium"])


def test_copper_and_optical_counts_are_the_designs(built):
    d, _, c = built
    media = {m.id: m for m in load_media()}
    compute = c["fabric"] == "compute"
    copper = np.array([media[m].copper for m in c["medium"]])
    ids = lambda sel: len(set(c["cable_id"][sel].tolist()))  # noqa: E731
    assert ids(compute & copper) == d.fabric.copper_cables
    assert ids(compute & ~copper) == d.fabric.fiber_cables


def test_cable_ids_are_unique_across_fabrics(built):
    _, _, c = built
    seen: dict[int, str] = {}
    for cid, fab in zip(c["cable_id"].tolist(), c["fabric"].tolist(), strict=True):
        assert seen.setdefault(cid, fab) == fab


def test_inband_runs_at_the_switch_speed_and_bonds_over_two_switches(built):
    d, inv, c = built
    sw = catalog().get("switch", d.networks.inband_switch_id)
    inb = c["kind"] == "inband"
    assert (c["gbps"][inb] <= sw.port_gbps).all()
    by_node: dict[str, set] = {}
    for a, b in zip(c["a_device"][inb].tolist(), c["b_device"][inb].tolist(), strict=True):
        by_node.setdefault(a, set()).add(b)
    bonded = [s for s in by_node.values()]
    if inv.count("inband") >= 2:
        assert all(len(s) == min(2, inv.storage_nics) for s in bonded)
    assert all(c["cable"][inb])                                      # every row typed


def test_100k_h100_node_leaf_median_within_30_m():
    """Issue 22 'Done when': at 100,000 H100 the median node-leaf run is <= 30 m and every
    link is within its medium's reach (the old layout ran leaves up to 95 rows away)."""
    scen = scenario(100_000)
    d = design_of(scen)
    inv = build_inventory(scen, catalog(), d)
    c = cabling_columns(inv, d)
    nl = c["kind"] == "node-leaf"
    assert np.median(c["length_m"][nl]) <= 30.0
    assert (c["length_m"] <= c["max_length_m"]).all()
    assert d.floor.halls > 1 and len({r.hall for r in inv.racks}) == d.floor.halls
    inter = c["reach"] == "inter-hall"                 # links between halls are marked
    assert inter.any() and (c["kind"][inter] != "oob").all()
    assert np.median(c["length_m"][inter]) > np.median(c["length_m"][nl])
    # and drawn: one labelled trunk per pair of halls they join, counts adding up
    import xml.etree.ElementTree as ET

    from clustertwin.drawings.floor import floor_plan_svg, inter_hall_counts

    trunks = inter_hall_counts(inv, c)
    assert sum(trunks.values()) == int(inter.sum())
    root = ET.fromstring(floor_plan_svg(d, inv, "t", trunks=trunks))
    drawn = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "trunk"]
    assert len(drawn) == len(trunks)


def test_routes_follow_the_tray():
    geo = Geometry.from_rules(load_rules())
    # same rack: only the vertical distance, plus slack and the two service loops
    inside = geo.route_m(0, 0, 0.5, 0, 0, 1.5, True)
    assert inside == pytest.approx(1.0 * (1 + geo.slack_frac) + 2 * geo.loop_m)
    # neighbouring racks: up to the tray, one rack width along it, down again
    x1, _ = geo.rack_xy(1, 1, 1, 20)
    x2, _ = geo.rack_xy(1, 1, 2, 20)
    assert x2 - x1 == pytest.approx(geo.rack_width_m)
    up = geo.rack_height_m + geo.tray_m
    run = geo.route_m(x1, 0, 1.0, x2, 0, 1.0, False)
    assert run == pytest.approx((2 * (up - 1.0) + geo.rack_width_m) * (1 + geo.slack_frac)
                                + 2 * geo.loop_m)
    # rows 1 and 2 share a hot aisle; rows 2 and 3 a cold aisle
    y = geo.row_top_m(np.array([1, 2, 3]))
    assert y[1] - y[0] == pytest.approx(geo.rack_depth_m + geo.hot_aisle_m)
    assert y[2] - y[1] == pytest.approx(geo.rack_depth_m + geo.cold_aisle_m)


def test_cheapest_medium_that_reaches_and_refusal_past_every_reach():
    media = load_media()
    pick = choose_media(np.array([400.0, 400.0, 400.0, 400.0]), np.array([1.5, 4.0, 30.0, 300.0]),
                        np.array([True, True, True, True]))
    kinds = [media[i].kind for i in pick]
    assert kinds == ["passive-copper", "active-copper", "multimode", "single-mode"]
    assert media[choose_media(np.array([400.0]), np.array([1.0]), False)[0]].kind == "multimode"
    with pytest.raises(InfeasibleError, match="reach no cable medium"):
        choose_media(np.array([400.0]), np.array([5000.0]))


def test_cable_summary_counts_the_map(built):
    import csv
    import io

    from clustertwin.export.tables import cable_summary_csv

    _, _, c = built
    rows = list(csv.DictReader(io.StringIO(cable_summary_csv(c))))
    assert sum(int(r["links"]) for r in rows) == len(c["kind"])
    assert sum(int(r["cables"]) for r in rows) == len(set(c["cable_id"].tolist()))
    assert all(float(r["max_length_m"]) <= float(r["medium_reach_m"]) for r in rows)
