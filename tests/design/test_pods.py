"""Pod builds (cluster.fabric.pod_gpus, pod_oversubscription, leaf_switch, spine_switch,
dual_tor): identity without them, properties with them, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustertwin.design import design, load_rules
from clustertwin.errors import InfeasibleError, ScenarioError

from .helpers import scenario

GOLDEN = json.loads((Path(__file__).parent / "data" / "pre_pod_designs.json").read_text())
META = {"technology": "roce-400g", "topology": "fat-tree", "pod_gpus": 3072,
        "pod_oversubscription": 7, "leaf_switch": "minipack2", "spine_switch": "arista-7808r3"}
HPN = {"technology": "roce-200g", "pod_gpus": 15360, "pod_oversubscription": 15,
       "oversubscription": 1.067, "dual_tor": True, "spine_switch": "hpn-51t"}
AIR30 = load_rules().with_values(rack_power_limit_air_kw=30)


def _meta(cat, gpus, **fabric):
    return design(scenario(cat, gpus, fabric={**META, **fabric}), cat, None, rules=AIR30)


def _hpn(cat, gpus, **fabric):
    return design(scenario(cat, gpus, node="hgx-h800", gpu="h800", fabric={**HPN, **fabric}),
                  cat, None)


# ---- without the new keys the design is the one from before they existed -------------------

@settings(max_examples=25, deadline=None)
@given(st.sampled_from(GOLDEN["rows"]))
def test_unset_pod_keys_reproduce_the_pre_pod_designs(xcatalog, row):
    """Snapshot of 48 random designs made by the stage before pods existed (test data file)."""
    d = design(scenario(xcatalog, row["gpus"], node=row["node"], gpu=row["gpu"],
                        fabric={"technology": row["technology"], "topology": row["topology"],
                                "oversubscription": row["oversubscription"]}),
               xcatalog, None,
               rules=load_rules().with_values(
                   rack_power_limit_air_kw=row["rack_power_limit_air_kw"]))
    f = d.to_contract()["fabric"]
    assert {k: f[k] for k in row["fabric"]} == row["fabric"]
    assert d.racks == row["racks"] and d.fabric.pod is None


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6000), st.sampled_from(["ib-ndr", "roce-400g", "ib-xdr", "ib-ndr200"]),
       st.sampled_from(["rail-optimized-fat-tree", "fat-tree"]), st.sampled_from([1.0, 2.0]))
def test_no_op_values_of_the_new_keys_change_nothing(catalog, nodes, tech, topo, r):
    """pod_gpus null, pod_oversubscription 1, dual_tor false and leaf/spine switch = the
    fabric's own switch give exactly the design the keys' absence gives."""
    base = {"technology": tech, "topology": topo, "oversubscription": r}
    sw = catalog.fabric(tech).switch
    a = design(scenario(catalog, 8 * nodes, fabric=base), catalog, None)
    b = design(scenario(catalog, 8 * nodes, fabric={
        **base, "pod_gpus": None, "pod_oversubscription": 1.0, "dual_tor": False,
        "leaf_switch": sw, "spine_switch": sw}), catalog, None)
    assert a.to_contract() == b.to_contract()
    assert b.fabric.pod is None and b.fabric.pods == 1


# ---- properties with pods --------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 1500), st.sampled_from(["meta", "hpn"]))
def test_more_gpus_never_less_hardware_with_pods(catalog, nodes, extra, kind):
    build = _meta if kind == "meta" else _hpn
    a, b = build(catalog, 8 * nodes), build(catalog, 8 * (nodes + extra))
    fa, fb = a.fabric, b.fabric
    for attr in ("leaf", "spine", "core", "switches", "cables", "switch_modules",
                 "leaf_spine_links", "spine_core_links"):
        assert getattr(fb, attr) >= getattr(fa, attr), attr
    assert b.racks >= a.racks
    assert b.power.it_kw >= a.power.it_kw and b.power.facility_kw >= a.power.facility_kw


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 900), st.sampled_from(["meta", "hpn"]), st.sampled_from([384, 1024]))
def test_pod_ports_land_once_and_fit_every_radix(catalog, nodes, kind, pod_gpus):
    build = _meta if kind == "meta" else _hpn
    d = build(catalog, 8 * nodes, pod_gpus=pod_gpus)
    f, pod = d.fabric, d.fabric.pod
    pm = f.port_map()
    assert len(pm) == d.nodes * f.rails * f.planes
    assert len(np.unique(pm, axis=0)) == len(pm)
    assert pm[:, 0].max() < f.leaf and pm[:, 1].max() < f.plane.leaf_down
    assert f.leaf_ports_used().max() <= f.radix
    spine = catalog.get("switch", f.upper_switch_id)
    cap = spine.ports * spine.port_gbps
    assert pod.spine_down * pod.uplink_gbps + pod.spine_up * pod.spine_gbps <= cap
    assert pod.last_spine_down <= pod.spine_down <= pod.spine_down_max
    # every leaf uplink lands on a spine port; every spine uplink on an aggregation port
    assert pod.spines_per_pod * pod.spine_down * (pod.pods - 1) \
        + pod.spines_per_pod * pod.last_spine_down == f.plane.leaf_spine_links
    if pod.pods > 1:
        assert pod.aggregation_ports <= spine.ports
        assert f.plane.core * pod.aggregation_ports >= f.plane.spine_core_links
    assert f.tiers == (3 if pod.pods > 1 else 2)


def test_cluster_of_one_pod_has_no_aggregation_tier_but_keeps_spine_uplinks(catalog):
    d = _meta(catalog, 3072)
    f = d.fabric
    assert (f.pods, f.tiers, f.core, f.spine_core_links) == (1, 2, 0, 0)
    assert f.pod.spine_up == 28                     # reserved for the aggregation layer
    assert _meta(catalog, 3080).fabric.core > 0     # one more node starts a second pod


def test_spine_switch_alone_gives_auto_pods(catalog):
    """A different spine switch without pod_gpus: one pod while the spine's radix holds every
    leaf, then non-blocking pods of half its ports."""
    fab = {"technology": "roce-400g", "spine_switch": "arista-7808r3"}
    small = design(scenario(catalog, 8 * 64, fabric=fab), catalog, None).fabric
    assert small.pod is not None and small.pods == 1 and small.pod.spine_up == 0
    big = design(scenario(catalog, 8 * 5000, fabric=fab), catalog, None).fabric
    assert big.pods > 1 and big.cross_pod_ratio == pytest.approx(1.0, rel=0.02)


def test_bom_and_power_use_each_tiers_switch(catalog):
    d = _meta(catalog, 24_576)
    items = {b.catalog_id: b for b in d.bom if b.category == "network"}
    assert items["minipack2"].quantity == 1536
    assert items["arista-7808r3"].quantity == 128 + 16
    leaf_kw = catalog.get("switch", "minipack2").power_kw_max
    spine_kw = catalog.get("switch", "arista-7808r3").power_kw_max
    assert d.power.compute_fabric_kw == pytest.approx(1536 * leaf_kw + 144 * spine_kw)
    rows = d.to_contract()["fabric"]["tier_counts"]
    assert [r["tier"] for r in rows] == ["leaf", "spine", "aggregation"]
    assert [r["switches"] for r in rows] == [1536, 128, 16]


# ---- bad input --------------------------------------------------------------------------------

def _problem(exc) -> tuple[str, str]:
    (p,) = exc.value.problems
    return p.path, p.message


@pytest.mark.parametrize("fabric,path,words", [
    ({"pod_gpus": 3072, "pod_oversubscription": 0.5}, "cluster.fabric.pod_oversubscription",
     "below 1"),
    ({"pod_oversubscription": 7}, "cluster.fabric.pod_oversubscription", "pod_gpus"),
    ({"pod_gpus": 0}, "cluster.fabric.pod_gpus", ">= 1"),
    ({"pod_gpus": "lots"}, "cluster.fabric.pod_gpus", "whole number"),
    ({"dual_tor": "sometimes"}, "cluster.fabric.dual_tor", "bool"),
])
def test_scenario_rejects_bad_pod_keys(catalog, fabric, path, words):
    with pytest.raises(ScenarioError) as e:
        scenario(catalog, 1024, fabric=fabric)
    got_path, msg = _problem(e)
    assert got_path == path and words in msg and "\n" not in msg


@pytest.mark.parametrize("fabric,path,words", [
    ({"spine_switch": "arista-7808"}, "cluster.fabric.spine_switch", "arista-7808r3"),
    ({"leaf_switch": "minipak2"}, "cluster.fabric.leaf_switch", "minipack2"),
    ({"spine_switch": "qm9700", "technology": "roce-400g"}, "cluster.fabric.spine_switch",
     "ethernet"),
    ({"pod_gpus": 3001}, "cluster.fabric.pod_gpus", "3,000 or 3,008"),
    ({"dual_tor": True, "technology": "roce-400g"}, "cluster.fabric.dual_tor", "200 Gb/s"),
])
def test_design_rejects_bad_pod_choices(catalog, fabric, path, words):
    with pytest.raises(ScenarioError) as e:
        design(scenario(catalog, 1024, fabric=fabric), catalog, None)
    got_path, msg = _problem(e)
    assert got_path == path and words in msg and "\n" not in msg


def test_pod_too_large_for_the_spine_names_the_largest_that_fits(catalog):
    with pytest.raises(InfeasibleError) as e:
        _meta(catalog, 24_576, pod_gpus=24_576)       # 1,536 ToRs > 252 spine ports at 7:1
    path, msg = _problem(e)
    assert path == "cluster.fabric.pod_gpus" and "pod_gpus <= 4,032" in msg


def test_cli_names_the_key(tmp_path):
    import yaml
    from typer.testing import CliRunner

    from clustertwin.cli import app
    from clustertwin.scenario import DEFAULT_SCENARIO

    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    doc["cluster"]["fabric"]["spine_switch"] = "arista-7808"
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(doc))
    r = CliRunner().invoke(app, ["design", str(p)])
    assert r.exit_code == 2
    assert "cluster.fabric.spine_switch" in r.output and "arista-7808r3" in r.output


@pytest.mark.parametrize("kind", ["meta", "hpn", "plain"])
def test_tier_rows_add_up_to_the_totals(catalog, kind):
    if kind == "plain":
        d = design(scenario(catalog, 16_384), catalog, None)
    else:
        d = (_meta if kind == "meta" else _hpn)(catalog, 24_576 if kind == "meta" else 15_360)
    f, rows = d.fabric, d.fabric.tier_table()
    assert sum(r["switches"] for r in rows) == f.switches
    assert sum(r["transceivers"] for r in rows) == f.switch_modules
    assert sum(r["cables_below"] for r in rows) == f.cables
