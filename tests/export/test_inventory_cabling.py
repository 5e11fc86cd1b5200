"""Inventory and cabling map: counts equal the design's (examples and a property test over
random designs), node expansion of GB200 NVL72, ports used once, naming options."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from clustertwin.design.site.cabling import build_cabling
from clustertwin.design.site.inventory import build_inventory
from clustertwin.design.site.naming import Naming, parse_naming
from clustertwin.errors import InfeasibleError, ScenarioError, UsageError

from .helpers import catalog, count_check, design_of, example, scenario

EXAMPLES = ["default", "llama3-70b-gb200-nvl72", "gpt3-175b-1024-a100",
            "deepseek-v3-2048-h800"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_export_the_design_counts(name):
    _, d, inv, links = example(name)
    assert count_check(d, inv, links) == []


def test_gb200_nvl72_racks_become_18_trays_of_4_gpus_in_one_nvlink_domain():
    _, d, inv, links = example("llama3-70b-gb200-nvl72")
    nodes = inv.nodes
    assert inv.trays_per_system == 18 and len(nodes) == 18 * d.nodes
    assert {n.gpus for n in nodes} == {4}
    by_rack: dict[str, set[int]] = {}
    for n in nodes:
        by_rack.setdefault(n.rack, set()).add(n.nvlink_domain)
    assert len(by_rack) == d.nodes and all(len(v) == 1 for v in by_rack.values())
    assert inv.count("nvswitch") == 9 * d.nodes
    # a tray's 4 compute NICs land on one leaf (rack-scale rail grouping)
    leaves = {}
    for lk in links:
        if lk.kind == "node-leaf":
            leaves.setdefault(lk.a_device, set()).add(lk.b_device)
    assert all(len(v) == 1 for v in leaves.values()) and len(leaves) == len(nodes)


def test_default_nodes_carry_rack_su_pod_and_spares():
    _, d, inv, _ = example("default")
    nodes = inv.nodes
    assert nodes[0].name == "gpu0001" and nodes[0].su == 1 and nodes[0].rack
    assert sum(n.spare for n in nodes) == d.spare_nodes
    per_rack: dict[str, int] = {}
    for n in nodes:
        per_rack[n.rack] = per_rack.get(n.rack, 0) + 1
    assert max(per_rack.values()) == d.layout.nodes_per_rack
    assert max(n.su for n in nodes) == d.scalable_units
    assert max(r.row for r in inv.racks) == d.floor.rows


def test_node_ports_land_where_the_design_port_map_puts_them():
    _, d, inv, links = example("default")
    pm = d.fabric.port_map()
    first = [lk for lk in links if lk.kind == "node-leaf"][: len(pm)]
    leaves = inv.role("leaf")
    for lk, (leaf, port) in zip(first, pm[:200], strict=False):
        assert lk.b_device == leaves[leaf].name and lk.b_port == str(port + 1)


def test_naming_options_apply_and_bad_ones_are_usage_errors():
    scen = scenario(64)
    d = design_of(scen)
    inv = build_inventory(scen, catalog(), d, parse_naming(["node=dgx", "pad=5", "rack=rk"]))
    assert inv.nodes[0].name == "dgx00001" and inv.racks[0].name.startswith("rk01-")
    with pytest.raises(UsageError) as exc:
        parse_naming(["nodes=x", "pad=abc", "node=-bad", "node"])
    assert len(exc.value.problems) == 4
    assert Naming().numbered("x", 1000) == [f"x{i:04d}" for i in range(1, 1001)]


NODES = ["dgx-h100", "dgx-a100", "dgx-b200", "gb200-nvl72", "hgx-h800", "hgx-h200"]
FABRICS = ["ib-ndr", "ib-hdr", "ib-xdr", "roce-400g", "ib-ndr200", "roce-800g"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(systems=st.integers(1, 1000), spares=st.integers(0, 12), node=st.sampled_from(NODES),
       fabric=st.sampled_from(FABRICS),
       topology=st.sampled_from(["rail-optimized-fat-tree", "fat-tree"]),
       ratio=st.sampled_from([1.0, 1.0, 2.0, 3.0]))
def test_inventory_and_cabling_match_random_designs(systems, spares, node, fabric, topology,
                                                    ratio):
    entry = catalog().node(node)
    gpu, gpus = entry.gpu, systems * entry.gpus
    try:
        scen = scenario(gpus, spares, node=node, gpu=gpu,
                        fabric={"technology": fabric, "topology": topology,
                                "oversubscription": ratio})
        d = design_of(scen)
    except (ScenarioError, InfeasibleError):
        assume(False)
        return
    inv = build_inventory(scen, catalog(), d)
    assert count_check(d, inv) == []


POD_CASES = [
    ("meta-like pods", 24576, "dgx-h100", {"technology": "roce-400g", "topology": "fat-tree",
     "pod_gpus": 3072, "pod_oversubscription": 7, "leaf_switch": "minipack2",
     "spine_switch": "arista-7808r3"}),
    ("hpn dual-tor", 15360 * 2, "hgx-h800", {"technology": "roce-200g", "pod_gpus": 15360,
     "pod_oversubscription": 15, "oversubscription": 1.067, "dual_tor": True,
     "spine_switch": "hpn-51t"}),
]


@pytest.mark.parametrize(("label", "gpus", "node", "fabric"), POD_CASES,
                         ids=[c[0] for c in POD_CASES])
def test_pod_builds_match_the_design(label, gpus, node, fabric):
    from clustertwin.design import design, load_rules

    rules = load_rules().with_values(rack_power_limit_air_kw=30)
    scen = scenario(gpus, node=node, gpu=catalog().node(node).gpu, fabric=fabric)
    d = design(scen, catalog(), None, rules=rules)
    inv = build_inventory(scen, catalog(), d)
    assert count_check(d, inv, build_cabling(inv, d)) == []


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(systems=st.integers(1, 120), spares=st.integers(0, 4), node=st.sampled_from(NODES),
       fabric=st.sampled_from(FABRICS[:4]))
def test_every_export_agrees_with_random_designs(systems, spares, node, fabric):
    """Slurm nodes / leaves / GRES, Kueue quota and labels, Ansible hosts and the CSV rows all
    count what the design counts."""
    import csv
    import io

    import yaml

    from clustertwin.cli.export import build_files
    from clustertwin.export.hostlist import expand
    from clustertwin.export.slurm import lint_topology
    from clustertwin.export.stage import make_context

    entry = catalog().node(node)
    try:
        scen = scenario(systems * entry.gpus, spares, node=node, gpu=entry.gpu,
                        fabric={"technology": fabric})
        d = design_of(scen)
    except (ScenarioError, InfeasibleError):
        assume(False)
        return
    ctx = make_context(scen, catalog(), d)
    files = {}
    for kind in ("inventory", "cabling", "slurm", "kueue", "ansible"):
        files |= build_files(kind, ctx)[0]
    nodes = sorted(n.name for n in ctx.inventory.nodes)
    slurm_nodes = [x for m in re.finditer(r"^NodeName=(\S+)", files["slurm.conf"], re.M)
                   for x in expand(m.group(1))]
    assert sorted(slurm_nodes) == nodes and lint_topology(ctx) == []
    tree = files.get("topology-tree.conf", files["topology.conf"])
    assert len(re.findall(r"SwitchName=\S+ Nodes=", tree)) == d.scalable_units
    assert f"File=/dev/nvidia[0-{ctx.inventory.gpus_per_node - 1}]" in files["gres.conf"] \
        or ctx.inventory.gpus_per_node == 1
    load = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs = list(yaml.load_all(files["kueue.yaml"], Loader=load))
    quota = docs[2]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"]
    assert int(quota) == d.job_nodes * entry.gpus
    assert len(yaml.load(files["node-labels.yaml"], Loader=load)) == len(nodes)
    inv = yaml.load(files["ansible-inventory.yml"], Loader=load)["all"]["children"]
    assert len(inv["gpu_nodes"]["hosts"]) == len(nodes)
    rows = list(csv.reader(io.StringIO(files["inventory.csv"])))
    assert len(rows) - 1 == len(ctx.inventory.devices)
    f = d.fabric
    cab = files["cabling.csv"].count("\n") - 1
    assert cab >= f.node_leaf_links + f.leaf_spine_links + f.spine_core_links


@pytest.mark.parametrize(("gpus", "fabric", "topology"), [
    (64, "ib-ndr200", "rail-optimized-fat-tree"),    # BasePOD leaf pair, storage on in-band
    (2048, "roce-400g", "fat-tree"),                 # ToR per rack on copper
    (16, "ib-ndr", "rail-optimized-fat-tree"),       # two nodes
])
def test_small_and_tor_builds_match_the_design_and_its_cable_lines(gpus, fabric, topology):
    scen = scenario(gpus, fabric={"technology": fabric, "topology": topology})
    d = design_of(scen)
    inv = build_inventory(scen, catalog(), d)
    links = build_cabling(inv, d)
    assert count_check(d, inv, links) == []
    if d.fabric.tor:   # ToR leaves sit in their compute racks: node links never leave the rack
        assert {lk.reach for lk in links if lk.kind == "node-leaf"} == {"in-rack"}
        assert {lk.media for lk in links if lk.kind == "node-leaf"} == {"copper"}


@pytest.mark.parametrize("gpus", [256, 2048])
def test_rail_separated_planes_and_a_fourth_tier_match_the_design(gpus):
    """8-port fixture switches (data/tiny-switch-catalog.yaml): 256 GPUs need 2 rail-separated
    planes of 3 tiers, 2,048 GPUs 8 planes of 4 tiers; every port within the radix."""
    import copy
    from pathlib import Path

    from clustertwin.catalog import load_catalog
    from clustertwin.design import design
    from clustertwin.scenario import scenario_from_dict

    from .helpers import _BASE

    cat = load_catalog([Path(__file__).parent / "data"])
    doc = copy.deepcopy(_BASE)
    doc["cluster"].update({"gpus": gpus, "spare_nodes": 0})
    doc["cluster"]["fabric"]["technology"] = "fixture-ib-tiny"
    scen = scenario_from_dict(doc, "<test>", cat)
    d = design(scen, cat, None)
    assert d.fabric.planes > 1 and d.fabric.tiers == (4 if gpus == 2048 else 3)
    inv = build_inventory(scen, cat, d)
    links = build_cabling(inv, d)
    assert count_check(d, inv, links) == []
    if d.fabric.tiers == 4:
        assert any(lk.kind == "core-core" for lk in links)
