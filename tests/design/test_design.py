"""The design stage end to end: contract, properties, bad input, CLI."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from clustertwin.design import design, load_rules
from clustertwin.design.bom import CATEGORIES
from clustertwin.errors import InfeasibleError, ScenarioError

from .helpers import scenario

CONTRACT = ["nodes", "racks", "scalable_units"]


@pytest.fixture(scope="module")
def default_design(catalog):
    from clustertwin.cli.common import load_inputs
    from clustertwin.perf import estimate

    s, c = load_inputs(None)
    return design(s, c, estimate(s, c))


def test_contract_block(default_design):
    c = default_design.to_contract()
    for k in CONTRACT:
        assert isinstance(c[k], int) and c[k] > 0
    for k in ("tiers", "leaf", "spine", "core", "cables"):
        assert isinstance(c["fabric"][k], int)
    for k in ("it_kw", "facility_kw", "rack_kw"):
        assert c["power"][k] > 0
    assert c["cooling"]["mode"] in ("air", "air-containment", "liquid")
    for k in ("capacity_pb", "write_gbps", "read_gbps"):
        assert c["storage"][k] > 0
    json.dumps(c)  # JSON-safe


def test_extra_attributes_other_stages_read(default_design):
    d = default_design
    # spare_nodes: auto advises 8 hot spares for the llama3-h100 profile; 2,048 DGX fill their
    # 64 SUs and a spare never opens a unit (issue 22): 8 of the installed nodes are the spares
    assert d.spare_nodes == 8 and d.nodes == 2048 and d.job_nodes == 2040
    assert d.scalable_units == 64 and d.fabric.leaf == 512
    assert any("the training job runs on the other 2040 nodes" in n for n in d.notes)
    assert 1.0 < d.cooling.pue < 2.0
    assert d.storage.nvme_write_gbps_per_node > 0
    assert d.power.facility_kw == pytest.approx(d.power.it_kw * d.cooling.pue)


def test_frozen(default_design):
    with pytest.raises(dataclasses.FrozenInstanceError):
        default_design.fabric.planes = 3  # type: ignore[misc]


def test_bom_lines(default_design):
    assert default_design.bom
    for ln in default_design.bom:
        assert ln.category in CATEGORIES
        assert ln.quantity >= 0 and ln.source
        if ln.priced:
            assert ln.total_usd == pytest.approx(ln.unit_usd * ln.quantity)
        else:
            assert ln.unit_usd is None and ln.source.startswith("unpriced")
    priced = {ln.catalog_id for ln in default_design.bom if ln.priced}
    assert {"dgx-h100", "qm9700"} <= priced


def test_views(default_design):
    from clustertwin.report import views
    from clustertwin.report.views import design as design_view

    rows = views.rows(default_design)
    assert rows and all(isinstance(a, str) and isinstance(b, str) for a, b in rows)
    figs = design_view.figures(default_design)
    assert [n for n, _ in figs] == ["power flow", "fabric"]
    assert "<h3>Bill of materials</h3>" in views.html(default_design)


def test_spares_and_explicit_pue(catalog):
    d = design(scenario(catalog, 1024, spare_nodes=4, spare_placement="outside"), catalog, None)
    assert d.spare_nodes == 4 and d.nodes == 132 and d.job_nodes == 128
    s = scenario(catalog, 1024)
    s = s.model_copy(update={"economics": s.economics.model_copy(update={"pue": 1.1})})
    d2 = design(s, catalog, None)
    assert d2.power.facility_kw == pytest.approx(d2.power.it_kw * 1.1)


def test_deadline_uses_estimate_gpus(catalog):
    from clustertwin.perf import estimate

    s = scenario(catalog, 1024)
    est = estimate(s, catalog).model_copy(update={"gpus": 2048})
    assert design(s, catalog, est).gpus == 2048


def test_design_holds_the_installed_gpus_not_only_the_jobs(catalog):
    """A job on part of the cluster: the design counts every installed GPU (issue 11)."""
    from clustertwin.perf import estimate

    s = scenario(catalog, 1024)
    est = estimate(s, catalog).model_copy(update={"gpus": 512, "installed_gpus": 1024})
    d = design(s, catalog, est)
    assert d.gpus == 1024 and d.job_nodes == 128


def test_twin_plane_nic_becomes_two_planes(xcatalog):
    d = design(scenario(xcatalog, 512, gpu="b200", node="fixture-dgx-b300",
                        fabric={"technology": "roce-400g"}), xcatalog, None)
    assert d.fabric.planes == 2 and d.fabric.radix == 128
    assert d.fabric.node_leaf_links == 64 * 8 * 2


def test_oversubscribed_fabric_has_fewer_spines(catalog):
    a = design(scenario(catalog, 16384), catalog, None)
    b = design(scenario(catalog, 16384, fabric={"oversubscription": 3.0}), catalog, None)
    assert b.fabric.oversubscription <= 3.0
    assert b.fabric.spine + b.fabric.core < a.fabric.spine + a.fabric.core


# ---- bad input ---------------------------------------------------------------------------

def test_node_too_hot_for_its_rack(xcatalog):
    with pytest.raises(InfeasibleError) as exc:
        design(scenario(xcatalog, 64, node="fixture-hot-node", source="x.yaml"), xcatalog, None)
    msg = str(exc.value)
    assert "x.yaml: cluster.node" in msg and "80 kW" in msg and "60 kW" in msg
    assert "liquid" in msg


def test_rack_limit_rule_override(catalog):
    rules = load_rules().with_values(rack_power_limit_air_kw=8)
    with pytest.raises(InfeasibleError, match="10.2 kW"):
        design(scenario(catalog, 64), catalog, None, rules=rules)


def test_radix_cannot_reach_gpu_count():
    """Past a fourth tier (40-port HDR: 320,000 ports per plane; cluster.gpus stops at 2^20, so
    the design never gets there with 8 rails - the counting rule's message is checked)."""
    from clustertwin.design import size_fabric

    with pytest.raises(InfeasibleError) as exc:
        size_fabric(375_000, 40, max_tiers=4, source="big.yaml")
    msg = str(exc.value)
    assert "big.yaml: cluster.fabric.technology" in msg and "320,000" in msg
    assert "4 tiers" in msg and "raise cluster.fabric.oversubscription" in msg


def test_oversubscription_below_one_is_refused_by_scenario(catalog):
    with pytest.raises(ScenarioError, match="oversubscription"):
        scenario(catalog, 64, fabric={"oversubscription": 0.5})


# ---- properties --------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4000), st.integers(1, 600),
       st.sampled_from(["ib-ndr", "roce-400g", "ib-xdr", "ib-ndr200"]))
def test_more_gpus_never_less_hardware(catalog, nodes, extra, tech):
    a = design(scenario(catalog, 8 * nodes, fabric={"technology": tech}), catalog, None)
    b = design(scenario(catalog, 8 * (nodes + extra), fabric={"technology": tech}), catalog, None)
    assert b.fabric.switches >= a.fabric.switches
    assert b.fabric.cables >= a.fabric.cables
    assert b.racks >= a.racks
    assert b.power.it_kw >= a.power.it_kw
    assert b.power.facility_kw >= a.power.facility_kw


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 700), st.sampled_from(["ib-ndr", "ib-hdr", "roce-400g", "ib-ndr200"]),
       st.sampled_from(["rail-optimized-fat-tree", "fat-tree"]))
def test_every_node_port_lands_on_one_leaf_port(catalog, nodes, tech, topo):
    d = design(scenario(catalog, 8 * nodes, fabric={"technology": tech, "topology": topo}),
               catalog, None)
    f = d.fabric
    pm = f.port_map()
    assert len(pm) == d.nodes * f.rails * f.planes
    if d.nodes == 1:     # one node: NVLink only, no compute-fabric switch (issue 11)
        assert f.switches == 0 and f.cables == 0 and len(pm) == 0
        return
    assert len(np.unique(pm, axis=0)) == len(pm)  # no two node ports share a leaf port
    assert pm[:, 0].max() < f.leaf and pm[:, 1].max() < f.plane.leaf_down
    used = f.leaf_ports_used()
    assert used.max() <= f.radix  # no leaf exceeds the radix, managers included


@pytest.mark.parametrize("tech", ["ib-ndr", "ib-ndr200", "roce-400g"])
@pytest.mark.parametrize("topo", ["rail-optimized-fat-tree", "fat-tree"])
def test_small_clusters_grow_monotonically(catalog, tech, topo):
    """Across the leaf-pair / ToR / SU boundaries (1-40 nodes) switches, cables, racks and kW
    never shrink (transceivers may: a UFM link needs a free slot, which a full SU lacks)."""
    prev = None
    for n in range(1, 41):
        d = design(scenario(catalog, 8 * n, fabric={"technology": tech, "topology": topo}),
                   catalog, None)
        f = d.fabric
        cur = (f.switches + d.networks.storage.switches, f.cables, d.racks, d.power.it_kw)
        if prev is not None:
            assert all(c >= p for c, p in zip(cur, prev, strict=True)), (n, prev, cur)
        prev = cur


def test_leaf_pair_basepod_shape(catalog):
    """<= one SU of rail pairs: two leaves, ISLs = node ports per leaf, storage in-band."""
    d = design(scenario(catalog, 48, fabric={"technology": "ib-ndr200"}), catalog, None)
    f = d.fabric
    assert f.leaf_pair and (f.leaf, f.spine, f.core, f.tiers) == (2, 0, 0, 1)
    assert f.leaf_spine_links == 24 and f.isl_cables == 12
    assert f.leaf_ports_used().tolist() == [48, 48]
    assert d.networks.storage.converged and d.networks.storage.switches == 0


def test_slower_fabric_runs_nic_at_fabric_speed(catalog, xcatalog):
    """CX-7 (400G) on NDR200 is one 200G plane; CX-8 (800G) on 400G Ethernet is two planes."""
    a = design(scenario(catalog, 64, fabric={"technology": "ib-ndr200"}), catalog, None)
    assert (a.fabric.planes, a.fabric.endpoint_gbps) == (1, 200)
    b = design(scenario(xcatalog, 512, gpu="b200", node="fixture-dgx-b300",
                        fabric={"technology": "roce-400g"}), xcatalog, None)
    assert b.fabric.planes == 2


def test_fat_tree_puts_one_tor_in_each_rack(catalog):
    rules = load_rules().with_values(rack_power_limit_air_kw=30)
    d = design(scenario(catalog, 8 * 40, fabric={"technology": "roce-400g",
                                                  "topology": "fat-tree"}), catalog, None,
               rules=rules)
    f = d.fabric
    assert f.tor and f.su_nodes == d.layout.nodes_per_rack == 2
    assert f.leaf == d.rack_counts.compute == 20
    assert f.copper_cables > 0 and f.node_modules == 0
    # ToRs live in the compute racks: only spines/cores fill network racks
    assert d.power.rack_kw == pytest.approx(2 * 10.2 + 2.09)


# ---- CLI -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def app():
    from clustertwin.cli.design import register

    a = typer.Typer()
    register(a)

    @a.command("noop")
    def _noop() -> None:  # a second command keeps typer in multi-command mode
        pass

    return a


def test_cli_json(app):
    r = CliRunner().invoke(app, ["design", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    # 2,048 job nodes + 8 advised spares fill 65 scalable units of 32 nodes x 8 rails
    assert doc["fabric"]["leaf"] == 64 * 8 and doc["cooling"]["mode"] == "air-containment"


def test_cli_table(app):
    r = CliRunner().invoke(app, ["design"])
    assert r.exit_code == 0 and "compute fabric" in r.stdout


def test_cli_bad_input_exit_2(app, tmp_path):
    import yaml

    from clustertwin.scenario import DEFAULT_SCENARIO

    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    doc["cluster"]["fabric"]["pod_gpus"] = 100
    p = tmp_path / "big.yaml"
    p.write_text(yaml.safe_dump(doc))
    r = CliRunner().invoke(app, ["design", str(p)])
    assert r.exit_code == 2
    assert "cluster.fabric.pod_gpus" in r.output and "Traceback" not in r.output
