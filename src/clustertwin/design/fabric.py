"""Compute-fabric sizing: a (rail-optimized) fat tree of identical k-port switches.

:func:`size_fabric` (in :mod:`clustertwin.design.fattree`, re-exported here) is the pure
counting rule, usable by any stage; its module docstring gives the rule per tier and the
published tables it reproduces.

:func:`plan_compute_fabric` applies the rule to a node type: multi-plane NICs become separate
planes, ports are grouped into scalable units (SUs) of whole leaves, fabric-manager (UFM) ports
take a free node slot, and links are split into copper and optical with their transceivers.

Two small-cluster and classic-DC shapes come out of the same SU arithmetic:

* Leaf pair (DGX BasePOD, RA-11127-001, datacenter-anchors 1.6 / case 16): when every node of
  the cluster fits one SU whose leaves each take half of a node's rails, the fabric is those two
  leaves joined by inter-switch links (ISLs) equal to their node ports (non-blocking), on
  twin-port copper DACs; no spine. 8 DGX at NDR200 -> 2 QM9700, 64 node links, 32 ISL ports =
  16 twin-port DACs, 32 + 32 modules.
* ToR per rack (``topology: fat-tree``): a leaf never spans racks when a rack holds fewer nodes
  than a leaf has room for, so the leaf is the rack's top-of-rack switch on copper (Meta's
  RoCE clusters: one ToR per 2-server rack, datacenter-anchors 3.1 / case 23).

Pod builds (``cluster.fabric.pod_gpus``, ``spine_switch``/``leaf_switch`` other than the
fabric's switch) are sized by :mod:`clustertwin.design.pods`: pods of leaves and spines joined
by an (oversubscribed) aggregation layer, with a different switch model above the leaves (Meta's
RoCE cluster, Alibaba HPN - datacenter-anchors 3.1, 3.5). ``dual_tor`` puts each NIC's two ports
on two ToRs in two planes. Without those keys nothing here changes.

A NIC faster than the fabric link is split into planes only from ``multiplane_min_nic_gbps``
(ConnectX-8 800G -> 2 x 400G planes, B300 twin-planar); a slower NIC runs at the fabric's
speed (ConnectX-7 at NDR200 in the BasePOD).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clustertwin.design.fabric_result import ComputeFabric, PodLayer
from clustertwin.design.fattree import (
    FURTHER_TIERS,
    MAX_TIERS,
    FabricSize,
    leaf_split,
    max_endpoints,
    size_fabric,
)
from clustertwin.design.fattree import modules as _modules
from clustertwin.design.pods import FabricRequest, plan_pod_fabric
from clustertwin.errors import InfeasibleError, Problem, ScenarioError

__all__ = ["FURTHER_TIERS", "MAX_TIERS", "ComputeFabric", "FabricSize", "PodLayer", "leaf_split",
           "max_endpoints", "plan_compute_fabric", "size_fabric"]


@dataclass(frozen=True)
class FabricAsk:
    """What the design asks of its compute fabric whatever the node count: the catalog node,
    fabric family and leaf ``switch``, the scenario's fabric keys, the racks' node slots, the
    design rules and the scenario file (for errors)."""

    node: object
    fabric: object
    switch: object
    oversubscription: float
    topology: str
    nodes_per_rack: int
    rules: object
    source: str
    pod_nodes: int | None = None
    pod_oversubscription: float = 1.0
    spine_switch: object = None
    dual_tor: bool = False


def plan_compute_fabric(ask: FabricAsk, nodes: int) -> ComputeFabric:
    """Rail-optimized (or plain) fat tree for ``nodes`` nodes of catalog type ``ask.node``.

    ``fabric`` is the catalog Fabric family, ``switch`` the leaf Switch entry. Ports are sized in
    whole scalable units (SU = one leaf's worth of node slots per rail group), as the NVIDIA RAs
    do; the fabric's reserved slots go to fabric managers when the last SU has room.

    With ``pod_nodes`` (nodes under one pod) or a ``spine_switch`` other than ``switch`` the
    fabric is a pod build (:mod:`clustertwin.design.pods`); ``dual_tor`` splits every NIC into
    two ports on two ToRs, one per plane. Without them the result is the plain fat tree.
    """
    node, fabric, switch, spine_switch = ask.node, ask.fabric, ask.switch, ask.spine_switch
    oversubscription, topology, nodes_per_rack = ask.oversubscription, ask.topology, ask.nodes_per_rack
    rules, source, pod_nodes, dual_tor = ask.rules, ask.source, ask.pod_nodes, ask.dual_tor
    nic, link = float(node.compute_nic_gbps), float(fabric.link_gbps)
    endpoint = min(nic, link)
    planes = _planes(node, fabric, nic, link, dual_tor, rules, source)
    k = int(switch.ports * switch.port_gbps // endpoint)
    d, _ = leaf_split(k, oversubscription) if oversubscription >= 1 else (0, 0)
    if oversubscription < 1:
        size_fabric(1, k, oversubscription, source=source)  # raises the user-facing error
    if nodes == 1 and pod_nodes is None and not dual_tor:
        return _single_node(node, fabric, switch, topology, k, endpoint)
    rails = int(node.compute_nics)
    g_rail = int(rules.num("rack_scale_ports_per_tray")) if node.rack_scale else 1
    if rails % g_rail:
        g_rail = 1
    groups, max_tiers, notes = 1, MAX_TIERS, ()
    pod_build = pod_nodes is not None or (spine_switch is not None and spine_switch.id != switch.id)
    if not pod_build and d:
        groups, max_tiers, notes = _scale_out(ask, nodes, rails, g_rail, k, d, planes)
        planes, rails = planes * groups, rails // groups
    g, su_nodes, pair = _su_shape(ask, rails, planes, d, g_rail, nodes)
    if su_nodes < 1:
        raise InfeasibleError([Problem(source, "cluster.fabric.technology",
            f"a {k}-port leaf at {oversubscription:g}:1 has {d} downlinks, fewer than the "
            f"{g} ports a {node.id} puts on one leaf; raise cluster.fabric.oversubscription "
            "(more downlinks per leaf) or pick a switch with more ports")])
    req = FabricRequest(
        node=node, fabric=fabric, leaf_switch=switch, spine_switch=spine_switch or switch,
        nodes=nodes, planes=planes, endpoint=endpoint, rails=rails, g=g, g_rail=g_rail,
        oversubscription=oversubscription, topology=topology, nodes_per_rack=nodes_per_rack,
        pod_nodes=pod_nodes, pod_oversubscription=ask.pod_oversubscription, dual_tor=dual_tor,
        rules=rules, source=source)
    if pod_build:
        return _pod_build(req, d)
    shape = TreeShape(su_nodes=su_nodes, pair=pair, k=k, d=d, groups=groups, max_tiers=max_tiers,
                      notes=notes)
    return _with_modules(_plain_tree(req, shape), req, pair)


def _planes(node, fabric, nic: float, link: float, dual_tor: bool, rules, source: str) -> int:
    """Planes from the NIC: two for dual-ToR, NIC / link for a multi-plane NIC, else one."""
    if dual_tor:
        if abs(nic - 2 * link) > 1e-6:
            raise ScenarioError([Problem(source, "cluster.fabric.dual_tor",
                f"dual-ToR puts each NIC's two ports on two ToRs, but a {node.id} NIC runs at "
                f"{nic:g} Gb/s and {fabric.id} links at {link:g} Gb/s (not 2 x {link:g}); "
                f"pick a fabric at {nic / 2:g} Gb/s or set dual_tor: false")])
        return 2
    if nic > link and nic >= rules.num("multiplane_min_nic_gbps"):
        planes = int(round(nic / link))
        if abs(planes * link - nic) > 1e-6:
            raise ScenarioError([Problem(source, "cluster.fabric.technology",
                f"{node.id} NICs run at {nic:g} Gb/s, not a whole number of {fabric.id} "
                f"{link:g} Gb/s planes; pick a fabric whose link speed divides {nic:g}")])
        return planes
    return 1


def _su_shape(ask: FabricAsk, rails: int, planes: int, d: int, g_rail: int,
              nodes: int) -> tuple[int, int, bool]:
    """(ports per node per leaf, nodes per SU, leaf pair?) of the topology."""
    node, topology, nodes_per_rack = ask.node, ask.topology, ask.nodes_per_rack
    if topology == "rail-optimized-fat-tree":
        half = rails // 2
        # leaf pair: the whole cluster fits one SU whose two leaves take half the rails each
        if (not node.rack_scale and planes == 1 and rails >= 2 and rails % 2 == 0
                and 0 < half <= d and nodes <= d // half):
            return half, d // half, True
        return g_rail, d // g_rail, False
    g = min(rails, d)
    # ToR per rack: a leaf holds at most one rack's nodes (copper in-rack)
    return g, (max(1, min(d // g, int(nodes_per_rack))) if g else 0), False


@dataclass(frozen=True)
class TreeShape:
    """A plain tree's shape: nodes per SU, a leaf pair or not, the leaf's radix k and
    downlinks d, the rail groups and the tiers allowed, and the notes of the scale-out."""

    su_nodes: int
    pair: bool
    k: int
    d: int
    groups: int
    max_tiers: int
    notes: tuple[str, ...]


def _plain_tree(req: FabricRequest, shape: TreeShape) -> ComputeFabric:
    """The plain (non-pod) tree's counts, before transceivers."""
    node, fabric, switch, nodes, rules, source = req.node, req.fabric, req.leaf_switch, req.nodes, req.rules, req.source
    rails, planes, g, g_rail, topology = req.rails, req.planes, req.g, req.g_rail, req.topology
    nodes_per_rack, oversubscription, endpoint = req.nodes_per_rack, req.oversubscription, req.endpoint
    su_nodes, pair, k, d = shape.su_nodes, shape.pair, shape.k, shape.d
    groups, max_tiers, notes = shape.groups, shape.max_tiers, shape.notes
    l_su = math.ceil(rails / g)
    sus = max(1, math.ceil(nodes / su_nodes))
    reserved = int(fabric.reserved_ports_per_su)
    attached = reserved > 0 and sus * su_nodes - nodes >= reserved
    mgr_links = int(reserved * rules.num("fabric_manager_links_per_slot")) if attached else 0
    if pair:
        plane = _leaf_pair(nodes * g, mgr_links, k, oversubscription)
    else:
        plane = size_fabric(nodes * rails + mgr_links, k, oversubscription, leaves=sus * l_su,
                            source=source, max_tiers=max_tiers)
    node_ppc = (rails * planes) // int(node.compute_cages) if node.compute_cages else 1
    per_node = (int(node.compute_cages) if planes == 1 and node_ppc > 1 and g % node_ppc == 0
                and rails % node_ppc == 0 else 0)
    return ComputeFabric(
        technology=fabric.id, switch_id=switch.id, topology=topology, radix=k,
        endpoint_gbps=endpoint, planes=planes, rails=rails, ports_per_node_per_leaf=g,
        su_nodes=su_nodes, leaves_per_su=l_su, scalable_units=sus, nodes=nodes,
        reserved_slots=reserved if attached else 0, manager_links=mgr_links,
        managers_attached=attached, plane=plane,
        node_links_optical=topology == "rail-optimized-fat-tree" or su_nodes > nodes_per_rack,
        switch_modules=0, node_modules=0, manager_modules=0,
        ports_per_cage=max(1, k // int(switch.cages)), leaf_pair=pair,
        node_cables_per_node=per_node, rail_su_nodes=d // g_rail, rail_groups=groups,
        notes=notes)


def _with_modules(cf: ComputeFabric, req: FabricRequest, pair: bool) -> ComputeFabric:
    """Transceivers of a plain tree: one module per used cage at every tier."""
    node, nodes, planes = req.node, req.nodes, req.planes
    plane, ppc = cf.plane, cf.ports_per_cage
    down = cf.leaf_ports_used() - plane.leaf_up
    leaf_mod = 0 if pair else _modules(plane.leaf_up, ppc) * plane.leaf  # ISLs are copper
    if cf.node_links_optical:
        leaf_mod += _modules(down, ppc)
    else:  # managers are the only optical leaf downlinks then
        leaf_mod += math.ceil(cf.manager_links / ppc)
    spine_mod = sum(n * _modules(used, ppc) for n, used in plane.spine_groups)
    core_mod = sum(n * _modules(used, ppc) for n, used in plane.core_groups)
    per_plane = leaf_mod + spine_mod + core_mod
    node_mod = nodes * int(node.compute_cages) if cf.node_links_optical else 0
    return _replace(cf, switch_modules=per_plane * planes, node_modules=node_mod,
                    tier_modules=(leaf_mod * planes, spine_mod * planes, core_mod * planes),
                    manager_modules=cf.manager_links)


def _pod_build(req: FabricRequest, d: int) -> ComputeFabric:
    """A pod build; when its pods or aggregation layer cannot hold the cluster, the rails are
    separated into planes (fewest groups that work), as in the plain build."""
    first = last = None
    rails, g_rail = req.rails, req.g_rail
    rail_topo = req.topology == "rail-optimized-fat-tree"
    for groups in range(1, rails // g_rail + 1):
        if rails % groups or (rails // groups) % g_rail:
            continue
        r = rails // groups
        try:
            cf = plan_pod_fabric(_replace(req, rails=r, planes=req.planes * groups,
                                          g=g_rail if rail_topo else min(r, d)))
        except InfeasibleError as exc:
            first, last = first or exc, exc
            continue
        if groups == 1:
            return cf
        note = (f"the pods cannot hold every rail of {req.nodes:,} nodes in one plane ("
                f"{first.problems[0].message if first and first.problems else 'pod limit'}); "
                f"the {rails} rails are split into {groups} rail-separated planes of {r} "
                f"rail(s), each its own pod build")
        return _replace(cf, rail_groups=groups, notes=cf.notes + (note,))
    assert last is not None
    raise last          # the most separated build's limits are the nearest that can work


def _single_node(node, fabric, switch, topology: str, k: int, endpoint: float) -> ComputeFabric:
    """One node: its GPUs talk over NVLink inside the node; no compute-fabric switch, link or
    transceiver is bought (a lone DGX needs no InfiniBand leaf)."""
    plane = FabricSize(endpoints=0, radix=k, oversubscription=1.0, tiers=0, leaf=0, spine=0,
                       core=0, leaf_down=0, leaf_up=0, pods=1, leaf_spine_links=0,
                       spine_core_links=0, spine_groups=(), core_groups=())
    return ComputeFabric(
        technology=fabric.id, switch_id=switch.id, topology=topology, radix=k,
        endpoint_gbps=endpoint, planes=1, rails=0, ports_per_node_per_leaf=1, su_nodes=1,
        leaves_per_su=0, scalable_units=1, nodes=1, reserved_slots=0, manager_links=0,
        managers_attached=False, plane=plane, node_links_optical=False, switch_modules=0,
        node_modules=0, manager_modules=0, ports_per_cage=1, rail_su_nodes=1,
        notes=(f"one {node.id}: its {node.gpus} GPUs talk over NVLink inside the node, so the "
               "compute fabric has no switch (its NICs stay unconnected until a second node "
               "comes)",))


def _plane_leaves(nodes: int, rails: int, g_rail: int, d: int, topology: str,
                  nodes_per_rack: int) -> int:
    """Leaves of one plane holding ``rails`` ports of every node (the SU arithmetic below)."""
    if topology == "rail-optimized-fat-tree":
        g, su = g_rail, d // g_rail
    else:
        g = min(rails, d)
        su = max(1, min(d // g, int(nodes_per_rack)))
    return math.ceil(nodes / max(1, su)) * math.ceil(rails / g)


def _scale_out(ask: FabricAsk, nodes: int, rails: int, g_rail: int, k: int, d: int,
               planes: int) -> tuple[int, int, tuple[str, ...]]:
    """(rail groups, tiers allowed, notes) for a cluster past one 3-tier tree's reach.

    Real clusters past one fabric's reach separate the rails: each rail (or group of rails)
    is its own fat tree, a plane, and traffic between rails crosses NVLink inside the node
    first (rail-only / multi-plane designs: Alibaba HPN, NVIDIA's multi-plane CX8 builds,
    datacenter-anchors 3.5). The fewest groups that bring every plane within 3 tiers are used;
    when even one rail per plane does not fit, each plane takes a fourth tier."""
    topology, nodes_per_rack, r = ask.topology, ask.nodes_per_rack, ask.oversubscription
    reach = k * (k // 2)                  # leaves of a 3-tier tree (k pods of k/2 leaves)
    if _plane_leaves(nodes, rails, g_rail, d, topology, nodes_per_rack) <= reach:
        return 1, MAX_TIERS, ()
    limit = max_endpoints(k, MAX_TIERS, r)
    ports = nodes * rails * planes
    for groups in range(2, rails // g_rail + 1):
        if rails % groups or (rails // groups) % g_rail:
            continue
        if _plane_leaves(nodes, rails // groups, g_rail, d, topology, nodes_per_rack) <= reach:
            return groups, MAX_TIERS, (
                f"{ports:,} node ports exceed one {MAX_TIERS}-tier fat tree of {k}-port switches "
                f"({limit:,} ports at {r:g}:1): the {rails} rails are split into {groups} "
                f"rail-separated planes of {rails // groups} rail(s) each, {groups * planes} "
                f"independent fat trees; traffic between rails crosses NVLink inside the node "
                f"first (rail-only / multi-plane designs, datacenter-anchors 3.5)",)
    groups = rails // g_rail
    return groups, FURTHER_TIERS, (
        f"{ports:,} node ports exceed one {MAX_TIERS}-tier fat tree of {k}-port switches even "
        f"with every rail its own plane ({nodes * g_rail:,} ports per plane, limit {limit:,} at "
        f"{r:g}:1): {groups * planes} rail-separated planes of {FURTHER_TIERS} tiers each "
        f"(super-pods of {k // 2} pods joined by a fourth switch tier)",)


def _leaf_pair(per_leaf_nodes: int, mgr_links: int, k: int, r: float) -> FabricSize:
    """Two leaves, each with half of every node's rails, joined by ISLs sized to carry their
    node ports at the requested ratio (BasePOD: 32 node ports + 32 ISL ports per QM9700)."""
    down = per_leaf_nodes + math.ceil(mgr_links / 2)
    isl = min(k - down, math.ceil(down / max(1.0, r) - 1e-9))
    return FabricSize(endpoints=2 * per_leaf_nodes + mgr_links, radix=k,
                      oversubscription=down / max(1, isl), tiers=1, leaf=2, spine=0, core=0,
                      leaf_down=k - isl, leaf_up=isl, pods=1, leaf_spine_links=isl,
                      spine_core_links=0, spine_groups=(), core_groups=())


def _replace(obj, **kw):
    from dataclasses import replace

    return replace(obj, **kw)
