"""Design stage against published designs beyond the SuperPOD compute tables.

DC = shared/research/datacenter-anchors.md; case numbers refer to its section 8. Counts that a
source states are matched exactly; "~" figures from press reports within the tolerance given in
the test id. Where the model cannot yet reach a published figure the test is an ``xfail`` that
names the gap (strict, so closing the gap shows up).
"""

from __future__ import annotations

import math

import pytest

from clustertwin.design import design, load_rules
from clustertwin.design.cooling import cdu_count
from clustertwin.design.networks import plan_storage_fabric
from design.helpers import scenario


def _design(cat, gpus, rules=None, **cluster):
    return design(scenario(cat, gpus, **cluster), cat, None, rules=rules)


# ---- case 13/14: the 4-SU pod's storage fabric (R1 Tables 7-8, DC 1.1) ---------------------

def test_case13_pod_storage_fabric_16_qm9700_exact(catalog):
    """R1 Table 7: 16 storage-fabric QM9700 for 127 DGX H100 (8 node leaves at 32:24 = 4:3,
    one 1:1 storage leaf per SU, 4 spines)."""
    sf = _design(catalog, 1016).networks.storage
    assert sf.switches == 16
    assert (sf.leaf, sf.storage_leaves, sf.spine, sf.core) == (12, 4, 4, 0)
    assert sf.node_links == 254                                    # 2 storage ports per DGX


def test_case13_pod_storage_cables_with_published_storage_ports_exact(catalog):
    """R1 Table 8 with its 48 storage ports ('2 x 200G cables to storage: 48'): 494 NDR cables
    DGX-leaf + leaf-spine = 254 + 240, where 240 = 8 node leaves x 24 + 48 storage uplinks."""
    sw = catalog.get("switch", "qm9700")
    sf = plan_storage_fabric(254, 48, sw, load_rules(), scalable_units=4, su_node_links=64)
    assert sf.switches == 16
    assert sf.node_links + sf.leaf_spine_links == 494
    assert sf.storage_links == 48 and sf.cables == 494 + 48
    assert sf.node_links / (sf.leaf_spine_links - 48) == pytest.approx(4 / 3, rel=0.01)


def test_case14_storage_side_one_to_one(catalog):
    """R1: storage ports at 1:1 to uplinks; node side near 4:3 (DC case 14)."""
    sw = catalog.get("switch", "qm9700")
    a = plan_storage_fabric(254, 10, sw, load_rules(), scalable_units=4, su_node_links=64)
    b = plan_storage_fabric(254, 40, sw, load_rules(), scalable_units=4, su_node_links=64)
    assert b.leaf_spine_links - a.leaf_spine_links == 30           # one uplink per storage port


# ---- case 16: DGX BasePOD at NDR200 (R6 via R12, DC 1.6) -----------------------------------

# (nodes, QM9700, SN4600C, SN2201, DGX-side modules, switch-side modules, ISL DACs, fibres)
BASEPOD = [(4, 2, 2, 1, 16, 16, 8, 16), (8, 2, 2, 2, 32, 32, 16, 32)]


@pytest.fixture(scope="module", params=BASEPOD, ids=[f"R6-basepod-{r[0]}-nodes-exact"
                                                     for r in BASEPOD])
def basepod(request, catalog):
    row = request.param
    return row, _design(catalog, 8 * row[0], fabric={"technology": "ib-ndr200"})


def test_case16_basepod_compute_fabric(basepod):
    (nodes, qm, _, _, dgx_mod, sw_mod, dacs, fibres), d = basepod
    f, n = d.fabric, d.networks
    assert f.leaf_pair and (f.planes, f.endpoint_gbps) == (1, 200)  # CX-7 runs at NDR200
    assert f.switches + n.storage.switches == qm                   # storage rides in-band
    assert f.node_leaf_links == 8 * nodes                          # 64 x 200G for 8 DGX
    assert (f.node_modules, f.switch_modules) == (dgx_mod, sw_mod)
    assert f.isl_cables == dacs and f.copper_cables == dacs        # twin-port ISL DACs
    assert f.fiber_cables == fibres                                # fibres = modules (R12)


def test_case16_basepod_inband(basepod):
    (_, _, sn4600c, _, _, _, _, _), d = basepod
    assert d.networks.inband_switches == sn4600c


def test_case16_basepod_oob_four_nodes(catalog):
    d = _design(catalog, 32, fabric={"technology": "ib-ndr200"})
    assert d.networks.oob_switches == 1                            # R6: 1 SN2201 for 4 DGX


@pytest.mark.xfail(strict=True, reason="R6 counts 45 Cat6 for 8 DGX (4 per DGX + 13); the OOB "
                   "model counts 1 BMC per node and gets ~28 devices -> 1 SN2201, not 2")
def test_case16_basepod_oob_eight_nodes(catalog):
    d = _design(catalog, 64, fabric={"technology": "ib-ndr200"})
    assert d.networks.oob_switches == 2


@pytest.mark.xfail(strict=True, reason="R6: 5 management servers (2 BCM heads + 3 service "
                   "nodes); the SuperPOD rule gives 4 per started 4 SU")
def test_case16_basepod_management_servers(catalog):
    d = _design(catalog, 64, fabric={"technology": "ib-ndr200"})
    assert d.networks.management_servers == 5


# ---- case 22: Frontier CDU allocation (ExaDigiT config, DC 4.3) -----------------------------

FRONTIER = load_rules().with_values(cdu_racks_per_unit=3, cdu_spare=0)


def test_case22_frontier_cdus_exact():
    """R31 frontier.yaml: 25 CDUs for 74 cabinets, 3 per CDU (one slot unused), no spare."""
    assert cdu_count(74 * 300.0, 74, FRONTIER) == 25


def test_case22_cdu_rule_through_design(catalog):
    """The same rule through design(): 74 liquid racks (GB200 NVL72 stands in for the cabinets;
    only the rack count matters) -> 25 CDUs."""
    d = _design(catalog, 74 * 72, rules=FRONTIER, gpu="gb200", node="gb200-nvl72")
    assert d.rack_counts.compute == 74 and d.cooling.mode == "liquid"
    assert d.cooling.cdu_units == 25


# ---- case 26: xAI Colossus (DC 3.3, S R20) --------------------------------------------------

IN_RACK_CDU = load_rules().with_values(cdu_racks_per_unit=1, cdu_spare=0)


@pytest.fixture(scope="module")
def colossus(catalog):
    return _design(catalog, 100_000, rules=IN_RACK_CDU, node="hgx-h100-liquid-4u",
                   fabric={"technology": "roce-400g"})


def test_case26_colossus_racks_exact_vs_derived(colossus):
    """64 GPUs per rack (8 x 4U liquid HGX H100): 100,000 / 64 -> 1,563 racks (">1,500")."""
    assert colossus.layout.nodes_per_rack * colossus.layout.gpus_per_node == 64
    assert colossus.rack_counts.compute == 1563
    assert colossus.rack_counts.compute == pytest.approx(1500, rel=0.05)


def test_case26_colossus_arrays_and_cdus(colossus):
    """8 racks = a 512-GPU array = one SN5600 SU (64 nodes x 8 rails on 128-port leaves):
    196 arrays ('about 200', within 5 %); one CDU per rack."""
    assert colossus.fabric.su_nodes * 8 == 512 and colossus.fabric.radix == 128
    assert colossus.scalable_units == math.ceil(100_000 / 512) == 196
    assert colossus.scalable_units == pytest.approx(200, rel=0.05)
    assert colossus.cooling.mode == "liquid" and colossus.cooling.cdu_units == 1563
    assert colossus.fabric.node_leaf_links == 100_000               # 400 GbE per GPU


# ---- case 27: Azure Eagle (DC 3.4, S R18/R23) -----------------------------------------------

def test_case27_eagle_nodes_and_hcas_exact(catalog):
    """14,400 H100 in ND H100 v5 nodes (8 GPUs + 8 x 400G NDR HCAs; DGX H100 is the reference
    8-GPU NDR system) -> 1,800 nodes and 14,400 x 400G HCA links, beyond 2 tiers of k = 64."""
    d = _design(catalog, 14_400)
    f = d.fabric
    assert d.nodes == 1800
    assert f.nodes * f.rails * f.planes == 14_400 and f.endpoint_gbps == 400
    assert f.tiers == 3


# ---- case 23: Meta 24,576-GPU RoCE cluster (DC 3.1, P R15) -----------------------------------

META_RACK = load_rules().with_values(rack_power_limit_air_kw=30)


def test_case23_meta_racks_and_tors_exact(catalog):
    """2 eight-GPU servers per rack under one ToR: 3,072 nodes, 1,536 racks, 1,536 ToRs.
    The rack budget is an air rack of <= 30 kW (DC 4.2; Meta's ORv3 racks 18-36 kW, DC 4.4);
    DGX H100 stands in for Grand Teton (8 x H100 700 W, 8 x 400G backend). The 192-rack pods and
    the 1:7 aggregation tier are checked with the pod keys in the case-23 pod tests below."""
    d = _design(catalog, 24_576, rules=META_RACK,
                fabric={"technology": "roce-400g", "topology": "fat-tree"})
    f = d.fabric
    assert d.nodes == 3072 and d.layout.nodes_per_rack == 2
    assert d.rack_counts.compute == 1536
    assert f.tor and f.leaf == 1536
    assert f.node_leaf_links == 24_576 and not f.node_links_optical  # copper DAC server-ToR
    assert f.tiers == 3


# ---- case 23 with its pods: Meta 24,576-GPU RoCE cluster (DC 3.1, 8.4; P R15) ---------------
# Llama 3 paper 3.3.1: one Minipack2 ToR per 2-server rack, 192 racks = a 3,072-GPU pod at full
# bisection through cluster switches, 8 pods joined by aggregation switches at 1:7.
# Spine/aggregation = Arista 7808R3 (288 x 400G, DC 2.1 [S R51]); CTSW/ATSW counts are not
# published (DC 9), so only the published figures are asserted.

META_POD = {"technology": "roce-400g", "topology": "fat-tree", "pod_gpus": 3072,
            "pod_oversubscription": 7, "leaf_switch": "minipack2",
            "spine_switch": "arista-7808r3"}


@pytest.fixture(scope="module")
def meta_pods(catalog):
    return _design(catalog, 24_576, rules=META_RACK, fabric=META_POD)


META_FIGURES = [  # (what, published, relative tolerance)
    ("tors", 1536, 0.0), ("racks", 1536, 0.0), ("pod_gpus", 3072, 0.0), ("pods", 8, 0.0),
    ("racks_per_pod", 192, 0.0), ("leaf_oversubscription", 1.0, 0.0),
    ("cross_pod_fraction", 1 / 7, 0.03),
]


def _meta_figure(d, what):
    f = d.fabric
    return {"tors": f.leaf, "racks": d.rack_counts.compute, "pod_gpus": f.pod.pod_nodes * 8,
            "pods": f.pods, "racks_per_pod": f.pod.segments_per_pod,
            "leaf_oversubscription": f.oversubscription,
            "cross_pod_fraction": 1 / f.cross_pod_ratio}[what]


@pytest.mark.parametrize("what,published,tol", META_FIGURES,
                         ids=[f"P-R15-case23-{w}-{'exact' if t == 0 else f'within-{t:.0%}'}"
                              for w, _, t in META_FIGURES])
def test_case23_meta_pods(meta_pods, what, published, tol):
    """Cross-pod bandwidth: 16 cluster switches per pod each keep ceil(192 / 7) = 28 uplinks
    for 192 ToR links, so the pod sends 1/6.86 of its injection up - the ratio is honoured
    from below (<= 7:1), 2 % off 1/7."""
    got = _meta_figure(meta_pods, what)
    if tol:
        assert got == pytest.approx(published, rel=tol)
    else:
        assert got == published


def test_case23_meta_pod_is_non_blocking_and_three_tier(meta_pods):
    f = meta_pods.fabric
    assert f.tiers == 3 and (f.switch_id, f.upper_switch_id) == ("minipack2", "arista-7808r3")
    # inside a pod every ToR uplink has a cluster-switch port: ToR 16 down / 16 up
    assert (f.su_nodes * f.rails, f.pod.leaf_up) == (16, 16)
    assert f.pod.spines_per_pod * f.pod.spine_down == 192 * 16
    assert f.pod.spine_down <= f.pod.spine_down_max
    assert f.node_leaf_links == 24_576 and not f.node_links_optical   # copper DAC to the ToR
    assert f.core > 0 and f.spine_core_links > 0                         # aggregation layer


# ---- case 25: Alibaba HPN pod (DC 3.5, 8.4; SimAI AlibabaHPN defaults P R21b, paper P-ex R21) --

HPN_POD = {"technology": "roce-200g", "pod_gpus": 15_360, "pod_oversubscription": 15,
           "oversubscription": 1.067, "dual_tor": True, "spine_switch": "hpn-51t"}


@pytest.fixture(scope="module")
def hpn(catalog):
    """hgx-h800 stands in for the HPN host (8 GPUs, 8 x 400G NICs run as 2 x 200G); the ToRs
    face hosts at 200G (hpn-51t-200g) and the aggregation switches run 400G (hpn-51t)."""
    return _design(catalog, 15_360, node="hgx-h800", gpu="h800", fabric=HPN_POD)


HPN_FIGURES = [  # (what, published, relative tolerance)
    ("hosts", 1920, 0.0), ("segments", 15, 0.0), ("gpus_per_segment", 1024, 0.0),
    ("tors", 240, 0.0), ("tors_per_segment", 16, 0.0), ("aggregation", 120, 0.0),
    ("aggregation_per_plane", 60, 0.0), ("tor_host_ports", 128, 0.0),
    ("tor_uplinks_400g", 60, 0.0), ("tor_ratio", 1.067, 0.001),
    ("aggregation_down_400g", 120, 0.0), ("aggregation_up_400g", 8, 0.0),
    ("aggregation_to_core_ratio", 15.0, 0.0), ("nic_port_gbps", 200, 0.0),
]


def _hpn_figure(d, what):
    f, p = d.fabric, d.fabric.pod
    return {"hosts": d.nodes, "segments": f.scalable_units,
            "gpus_per_segment": f.su_nodes * 8, "tors": f.leaf,
            "tors_per_segment": f.leaves_per_su * f.planes, "aggregation": f.spine,
            "aggregation_per_plane": f.plane.spine, "tor_host_ports": f.su_nodes,
            "tor_uplinks_400g": p.leaf_up if p.uplink_gbps == 400 else None,
            "tor_ratio": f.oversubscription, "aggregation_down_400g": p.spine_down,
            "aggregation_up_400g": p.spine_up,
            "aggregation_to_core_ratio": p.pod_oversubscription,
            "nic_port_gbps": f.endpoint_gbps}[what]


@pytest.mark.parametrize("what,published,tol", HPN_FIGURES,
                         ids=[f"P-R21b-case25-{w}-{'exact' if t == 0 else f'within-{t:.1%}'}"
                              for w, _, t in HPN_FIGURES])
def test_case25_hpn_pod(hpn, what, published, tol):
    got = _hpn_figure(hpn, what)
    if tol:
        assert got == pytest.approx(published, rel=tol)
    else:
        assert got == published


def test_case25_hpn_dual_tor_dual_plane(hpn):
    """Each NIC's two 200G ports go to the two ToRs of a pair, one per plane: 2 planes of
    120 ToRs and 60 aggregation switches; one pod, so no tier above is built (its 8 uplinks
    per aggregation switch stay reserved)."""
    f = hpn.fabric
    assert f.dual_tor and f.planes == 2 and f.rails == 8
    assert f.node_leaf_links == 1920 * 16                   # 2 links per NIC (SimAI topology)
    assert f.leaf_spine_links == 240 * 60                   # every ToR to every plane agg
    assert (f.pods, f.tiers, f.core) == (1, 2, 0)
