"""Designs past one fabric's reach (issue 11): rail-separated planes, a fourth tier, spares in
free SU slots, single nodes, and the fabric modules free of import cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from clustertwin.design import design, max_endpoints, size_fabric

from .helpers import scenario

DESIGN_DIR = Path(__file__).parents[2] / "src" / "clustertwin" / "design"


def _capacity_holds(f) -> None:
    """Every switch tier has the ports its links need (one plane x planes)."""
    p = f.plane
    assert p.leaf * p.radix >= p.endpoints + p.leaf_spine_links
    assert sum(n * used for n, used in p.spine_groups) <= p.spine * p.radix
    assert all(used <= p.radix for _, used in p.spine_groups + p.core_groups)
    assert sum(p.upper_tiers) == p.core


def test_100k_h100_on_ndr_separates_rails_and_stays_three_tiers(catalog):
    """100,000 H100 in DGX H100 on NDR: one 3-tier tree of 64-port switches stops at 65,536
    ports (k^3/4); two rail-separated planes of 4 rails each hold 50,000 ports apiece."""
    d = design(scenario(catalog, 100_000), catalog, None)
    f = d.fabric
    assert f.tiers == 3 and f.rail_groups == 2 and f.planes == 2 and f.rails == 4
    assert f.node_leaf_links == 12_500 * 8 + f.manager_links
    assert f.plane.endpoints <= max_endpoints(64, 3)
    _capacity_holds(f)
    assert any("rail-separated" in n for n in d.notes)


def test_million_gpus_on_ndr_take_a_fourth_tier_and_on_xdr_three(catalog):
    """1,000,000 B200: on NDR even one rail per plane (125,000 ports) exceeds 65,536, so each
    of the 8 planes takes a 4th tier (k^4/8 = 2,097,152 ports); 144-port XDR switches run the
    400G NICs as 288 ports and one 3-tier tree reaches 5.97 M."""
    ndr = design(scenario(catalog, 1_000_000, node="dgx-b200", gpu="b200"), catalog, None)
    assert ndr.fabric.tiers == 4 and ndr.fabric.planes == 8
    _capacity_holds(ndr.fabric)
    assert len(ndr.fabric.plane.upper_tiers) == 2
    rows = {r["tier"] for r in ndr.fabric.tier_table()}
    assert rows == {"leaf", "spine", "core", "super-core"}
    xdr = design(scenario(catalog, 1_000_000, node="dgx-b200", gpu="b200",
                          fabric={"technology": "ib-xdr"}), catalog, None)
    assert xdr.fabric.tiers == 3 and xdr.fabric.planes == 1
    _capacity_holds(xdr.fabric)


@pytest.mark.parametrize("k", [40, 64, 128])
def test_four_tier_reach_is_k4_over_8(k):
    """A further tier reaches k^4/8 ports non-blocking (fat-tree limit, datacenter-anchors 2.2)."""
    top = max_endpoints(k, 4)
    assert top == k**4 // 8
    f = size_fabric(top, k, max_tiers=4)
    assert f.tiers == 4 and f.leaf == top // (k // 2)
    with pytest.raises(Exception, match="4 tiers"):
        size_fabric(top + 1, k, max_tiers=4)


def test_eight_spares_do_not_double_the_core(catalog):
    """2,048 DGX fill 64 SUs; 8 spares open a 65th SU. The core grows with the links it
    carries (17 pods x 32 links per position over 64-port cores: 9 per position, 288), not to
    the next divisor of 32 (16 per position, 512 - the old count)."""
    base = design(scenario(catalog, 16_384), catalog, None)
    spared = design(scenario(catalog, 16_384, spare_nodes=8, spare_placement="outside"), catalog,
                    None)
    assert base.fabric.core == 256
    assert spared.scalable_units == 65 and spared.fabric.core == 288
    _capacity_holds(spared.fabric)


def test_spares_fill_free_slots_before_opening_a_unit(catalog):
    """2,040 job nodes leave 8 free slots in the 64th SU: 8 spares take them, no 65th SU."""
    d = design(scenario(catalog, 16_320, spare_nodes=7), catalog, None)
    assert d.nodes == 2_047 and d.scalable_units == 64


def test_one_node_needs_no_fabric_switch(catalog):
    d = design(scenario(catalog, 8), catalog, None)
    assert d.fabric.switches == 0 and d.fabric.cables == 0 and d.fabric.transceivers == 0
    assert not [b for b in d.bom if "compute-fabric" in b.item and b.quantity]
    assert d.networks.ufm_appliances == 0
    assert d.facility == "existing-facility"
    assert not [b for b in d.bom if b.item.startswith(("UPS", "diesel"))]
    assert d.power.ups_modules == 0 and d.power.generators == 0
    # a 405B checkpoint history and 15.6T tokens do not fit 30 TB of NVMe; an 8B model on 1T
    # tokens (8 TB of data, 0.11 TB checkpoints) does: no 1.4 PB of shared storage for it
    assert not d.storage.on_nodes
    small = _one_dgx_8b(catalog)
    assert small.storage.on_nodes and small.storage.capacity_pb == 0
    assert small.rack_counts.storage == 0 and small.racks == 2
    two = design(scenario(catalog, 16), catalog, None)
    assert not two.storage.on_nodes and two.fabric.switches > 0    # two nodes share storage


def _one_dgx_8b(catalog):
    import yaml

    from clustertwin.scenario import DEFAULT_SCENARIO, scenario_from_dict

    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    doc["model"] = {"preset": "llama3-8b"}
    doc["training"].update(tokens=1e12, global_batch_tokens=2**20)
    doc["cluster"].update(gpus=8, spare_nodes=0)
    return design(scenario_from_dict(doc, "<one dgx>", catalog), catalog, None)


def test_fabric_modules_have_no_import_cycle():
    """fabric -> pods -> (fattree, fabric_result); nothing below imports fabric back."""
    def imports(name: str) -> set[str]:
        tree = ast.parse((DESIGN_DIR / f"{name}.py").read_text())
        out = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                out.add(node.module.rsplit(".", 1)[-1])
        return out

    assert "fabric" not in imports("pods") | imports("fattree") | imports("fabric_result")
    assert "pods" not in imports("fattree") | imports("fabric_result")


@pytest.mark.parametrize("pod_gpus", [2048, 8192])
def test_pod_builds_at_100k_on_ndr_separate_rails(catalog, pod_gpus):
    """Pods of 64-port NDR spines hold 32 leaves at 1:1; 100,000 GPUs in pods of 2,048 or
    8,192 GPUs fit once the rails are split into planes (each its own pod build)."""
    d = design(scenario(catalog, 100_000, fabric={"technology": "ib-ndr",
                                                   "pod_gpus": pod_gpus}), catalog, None)
    f = d.fabric
    assert f.pod is not None and f.rail_groups > 1 and f.planes == f.rail_groups
    assert f.pod.pod_nodes * 8 >= pod_gpus
    assert any("rail-separated" in n for n in d.notes)


def test_pod_too_big_names_the_largest_that_works(catalog):
    """The error of a pod no plane can hold gives the bound of the most separated build and
    says to raise (not lower) pod_oversubscription."""
    from clustertwin.errors import InfeasibleError

    with pytest.raises(InfeasibleError) as exc:
        design(scenario(catalog, 100_000, fabric={"technology": "ib-ndr", "pod_gpus": 16_384}),
               catalog, None)
    msg = str(exc.value)
    assert "pod_gpus <= 8,192" in msg and "higher pod_oversubscription" in msg

