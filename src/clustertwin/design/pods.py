"""Pod builds: leaves and spines in pods, pods joined by an aggregation layer.

Large Ethernet AI clusters are not one fat tree of identical switches. They are built from
*pods* (Meta "AI Zones", Alibaba HPN "Pods"): segments of leaves (ToRs) under a spine layer
inside the pod, and an aggregation layer above the pods that is usually oversubscribed.
shared/research/datacenter-anchors.md (DC) 3.1 and 3.5; cases 23 and 25 of section 8.4.

One rule covers both published designs (per plane; planes are independent trees):

* **Segment** (SU): the most nodes one leaf group takes, from the leaf's capacity at the leaf
  ratio r (``cluster.fabric.oversubscription``), one rack at most for ``fat-tree`` ToRs. With
  ``pod_gpus`` a pod's nodes are spread evenly over the fewest segments that hold them
  (HPN: 1,920 hosts over ceil(1920 / 132) = 15 segments of 128).
* **Leaf uplinks** are sized for the downlinks a segment uses: u = ceil(down x e / r / s1)
  links at the leaf-spine speed s1 = the spine's port speed when a leaf cage carries it
  (otherwise the slower port speed). HPN: 128 x 200G down at
  1.067:1 -> 60 x 400G up; Meta: 16 x 400G down at 1:1 -> 16 up. (Without pods the
  SuperPOD rule - every free port an uplink - stays, see :mod:`clustertwin.design.fabric`.)
* **Pod spines** ("cluster switches", HPN aggregation switches): the spine switch's ports at
  s1 split at the pod ratio p (``pod_oversubscription``): ds down, the rest up.
  Spines per pod S = the smallest divisor of u with S x ds >= leaves x u (each leaf sends u / S
  links to every spine - the SuperPOD spine rule). HPN: 120 leaves x 60 / 120 -> 60 per plane;
  each keeps ceil(120 / 15) = 8 uplinks toward the next tier (15:1).
* **Aggregation**: with more than one pod, spine j of every pod meets aggregation group j of
  c switches, c = the smallest divisor of the spine's uplinks that takes every pod's links.
  With pods joined, every pod carries the full pod's spines; a single pod's spines are sized
  for its leaves. A pod's spines keep their uplink ports even when no aggregation layer is
  built (HPN's 8 per switch), so adding a pod needs no recabling inside the pod.

``pod_gpus`` unset but a spine switch other than the leaf switch: the pod is the largest
non-blocking pod the spine layer takes (ds leaves at 1:1), and a cluster within the spine
switch's radix is one pod whose spines use every port downward.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from clustertwin.design.fabric_result import ComputeFabric, PodLayer
from clustertwin.design.fattree import FabricSize
from clustertwin.design.fattree import modules as _modules
from clustertwin.design.fattree import smallest_divisor_at_least as _smallest_divisor_at_least
from clustertwin.errors import InfeasibleError, Problem, ScenarioError

#: ratios are honoured to 0.1 %: 128 x 200G at "1.0667:1" is 60 x 400G, not 61
RATIO_TOL = 1e-3


def _ceil_tol(x: float) -> int:
    return max(0, math.ceil(x * (1.0 - RATIO_TOL) - 1e-9))


def _spine_down_max(cap_gbps: float, s1: float, s2: float, p: float) -> int:
    """Most leaf links (at s1) a spine takes while keeping down:up <= p toward s2 uplinks."""
    ds = int(cap_gbps * p / (p + 1.0) // s1 + 1e-9)
    while ds > 0 and ds * s1 + _ceil_tol(ds * s1 / p / s2) * s2 > cap_gbps + 1e-6:
        ds -= 1
    return ds


@dataclass(frozen=True)
class FabricRequest:
    """What a compute fabric (a plain tree or a pod build) is asked for: the catalog entries,
    the node count, the node's ports (``rails`` of one rail group, ``g`` of them on one leaf)
    and the fabric keys."""

    node: Any                   #: catalog Node
    fabric: Any                 #: catalog Fabric family
    leaf_switch: Any            #: catalog Switch of the leaves
    spine_switch: Any           #: catalog Switch of the spines and the aggregation layer
    nodes: int
    planes: int
    endpoint: float             #: a node port's speed, Gb/s
    rails: int
    g: int                      #: ports of one node on one leaf
    g_rail: int                 #: ports of one node that go to one leaf together (a tray's)
    oversubscription: float     #: leaf ratio r
    topology: str
    nodes_per_rack: int
    pod_nodes: int | None
    pod_oversubscription: float  #: pod spine ratio p
    dual_tor: bool
    rules: Any
    source: str


@dataclass(frozen=True)
class SwitchSet:
    """The leaf and spine switch models and the speeds between them (Gb/s): each switch's
    capacity, a leaf cage's, the leaf-spine link s1 and the spine's port s2. Leaf-spine links
    run at the spine's port speed when one leaf cage carries it (a 51.2T ToR with 200G host
    ports has 400G uplinks, HPN), else at the slower of the two."""

    leaf: Any
    spine: Any
    cap_l: float
    cap_s: float
    cage_l: float
    s1: float
    s2: float

    @classmethod
    def of(cls, leaf: Any, spine: Any) -> SwitchSet:
        cap_l = float(leaf.ports * leaf.port_gbps)
        cage_l = cap_l / int(leaf.cages)
        s1 = float(spine.port_gbps if cage_l >= spine.port_gbps - 1e-9
                   else min(leaf.port_gbps, spine.port_gbps))
        return cls(leaf, spine, cap_l, float(spine.ports * spine.port_gbps), cage_l, s1,
                   float(spine.port_gbps))


@dataclass(frozen=True)
class PodShape:
    """How one plane's nodes fall into segments and pods."""

    su_nodes: int   #: nodes per segment (SU)
    segs: int       #: segments
    n_seg: int      #: segments per pod
    pods: int
    ds: int         #: leaf links one spine takes
    l_su: int       #: leaves per segment
    u: int          #: uplinks per leaf
    n_leaf: int     #: leaves


@dataclass(frozen=True)
class SpineLayer:
    """The pods' spines and the aggregation layer: spines per pod, links down and up per
    full-pod and last-pod spine, and ports per aggregation switch."""

    pod: PodLayer
    n_s: int
    d_full: int
    d_last: int
    us_full: int
    us_last: int
    agg_ports: int

    def sets(self, pods: int) -> list[tuple[int, int, int]]:
        """(spines, links down, links up) of the full pods' spines and the last pod's."""
        if pods > 1:
            return [(self.n_s * (pods - 1), self.d_full, self.us_full), (self.n_s, self.d_last, self.us_last)]
        return [(self.n_s, self.d_full, self.us_full)]


def _segments(req: FabricRequest, seg_cap: int, l_su: int, ds: int, k_s1: int) -> tuple[int, int, int, int, int]:
    """(nodes per segment, segments, segments per pod, pods, leaf links per spine)."""
    nodes, pod_nodes, node, spine_switch = req.nodes, req.pod_nodes, req.node, req.spine_switch
    p, source = float(req.pod_oversubscription), req.source
    if pod_nodes is not None:
        n_seg = math.ceil(pod_nodes / seg_cap)
        su_nodes = math.ceil(pod_nodes / n_seg)
        if n_seg * l_su > ds:
            most = (ds // l_su) * seg_cap * node.gpus
            raise InfeasibleError([Problem(source, "cluster.fabric.pod_gpus",
                f"a pod of {pod_nodes * node.gpus:,} GPUs needs {n_seg * l_su} leaves per plane, "
                f"more than the {ds} leaf links one {spine_switch.id} spine takes at "
                f"{p:g}:1; nearest changes: pod_gpus <= {most:,}, a larger spine_switch, "
                "or a higher pod_oversubscription (more leaf links per spine)")])
        segs = math.ceil(nodes / su_nodes)
        pods = math.ceil(segs / n_seg)
    else:
        su_nodes = seg_cap
        segs = math.ceil(nodes / su_nodes)
        if segs * l_su <= k_s1:                   # one pod: spines use every port downward
            n_seg, pods, ds = segs, 1, k_s1
        else:
            n_seg = ds // l_su
            if n_seg < 1:
                raise InfeasibleError([Problem(source, "cluster.fabric.spine_switch",
                    f"a {spine_switch.id} spine takes {ds} leaf links at 1:1, fewer than the "
                    f"{l_su} leaves of one segment; pick a larger spine_switch")])
            pods = math.ceil(segs / n_seg)
    return su_nodes, segs, n_seg, pods, ds


def _pod_layer(req: FabricRequest, sw: SwitchSet, shape: PodShape, reserve: bool) -> SpineLayer:
    """The pods' spines and the aggregation layer (see the module docstring)."""
    u, n_leaf, n_seg, l_su, segs = shape.u, shape.n_leaf, shape.n_seg, shape.l_su, shape.segs
    pods, ds, su_nodes = shape.pods, shape.ds, shape.su_nodes
    s1, s2, cap_s, spine_switch = sw.s1, sw.s2, sw.cap_s, sw.spine
    p, e, source = float(req.pod_oversubscription), float(req.endpoint), req.source

    def spine_up(down_links: int) -> int:
        return _ceil_tol(down_links * s1 / p / s2) if (reserve or pods > 1) else 0

    if pods == 1:
        n_s = _smallest_divisor_at_least(u, n_leaf * u / ds)
        d_full = d_last = n_leaf * u // n_s
    else:
        n_s = _smallest_divisor_at_least(u, n_seg * l_su * u / ds)
        d_full = n_seg * l_su * u // n_s
        d_last = (segs - (pods - 1) * n_seg) * l_su * u // n_s
    us_full, us_last = spine_up(d_full), spine_up(d_last)
    c = agg_ports = 0
    if pods > 1:
        k_a = int(cap_s // s2)
        group = (pods - 1) * us_full + us_last
        if group > us_full * k_a:
            raise InfeasibleError([Problem(source, "cluster.fabric.pod_gpus",
                f"{pods} pods send {group} links per spine position, more than one aggregation "
                f"layer of {k_a}-port {spine_switch.id} switches takes ({us_full * k_a}); "
                "nearest changes: larger pods (pod_gpus), a higher pod_oversubscription, "
                "or a larger spine_switch")])
        c = _smallest_divisor_at_least(us_full, group / k_a)
        agg_ports = math.ceil(group / c)
    pod = PodLayer(
        leaf_switch_id=sw.leaf.id, spine_switch_id=spine_switch.id, pods=pods,
        segments_per_pod=n_seg, pod_nodes=n_seg * su_nodes, leaf_up=u, uplink_gbps=s1,
        spine_gbps=s2, spines_per_pod=n_s, spine_down_max=ds, spine_down=d_full,
        spine_up=us_full, last_spine_down=d_last, last_spine_up=us_last,
        aggregation_per_group=c, aggregation_ports=agg_ports, endpoint_gbps=e, rails=req.rails)
    return SpineLayer(pod, n_s, d_full, d_last, us_full, us_last, agg_ports)


def plan_pod_fabric(req: FabricRequest) -> ComputeFabric:
    """A pod build of the compute fabric (see the module docstring)."""
    node, fabric, leaf_switch, spine_switch = req.node, req.fabric, req.leaf_switch, req.spine_switch
    nodes, planes, rails, g, g_rail = req.nodes, req.planes, req.rails, req.g, req.g_rail
    topology, nodes_per_rack, pod_nodes, source = req.topology, req.nodes_per_rack, req.pod_nodes, req.source
    e, r, p = float(req.endpoint), float(req.oversubscription), float(req.pod_oversubscription)
    if spine_switch.technology != fabric.technology:
        raise ScenarioError([Problem(source, "cluster.fabric.spine_switch",
            f"{spine_switch.id} is an {spine_switch.technology} switch but the {fabric.id} "
            f"fabric is {fabric.technology}; pick an {fabric.technology} switch")])
    sw = SwitchSet.of(leaf_switch, spine_switch)
    cap_l, cap_s, s1, s2 = sw.cap_l, sw.cap_s, sw.s1, sw.s2
    k = int(cap_l // e)
    rail_topo = topology == "rail-optimized-fat-tree"

    def up_links(down_ports: int) -> int:
        return _ceil_tol(down_ports * e / r / s1)

    # nodes per segment: the most a leaf takes at ratio r (one rack for ToRs)
    seg_cap = int(cap_l // (g * e))
    if not rail_topo:
        seg_cap = min(seg_cap, int(nodes_per_rack))
    while seg_cap > 0 and seg_cap * g * e + up_links(seg_cap * g) * s1 > cap_l + 1e-6:
        seg_cap -= 1
    if seg_cap < 1:
        raise InfeasibleError([Problem(source, "cluster.fabric.oversubscription",
            f"a {leaf_switch.id} leaf at {r:g}:1 cannot take the {g} ports a {node.id} puts "
            "on one leaf plus their uplinks; raise the ratio or pick a larger leaf_switch")])
    l_su = math.ceil(rails / g)

    k_s1 = int(cap_s // s1)                      # spine ports at the leaf-link speed
    reserve = pod_nodes is not None
    su_nodes, segs, n_seg, pods, ds = _segments(req, seg_cap, l_su, _spine_down_max(cap_s, s1, s2, p), k_s1)

    u = up_links(su_nodes * g)
    n_leaf = segs * l_su
    shape = PodShape(su_nodes, segs, n_seg, pods, ds, l_su, u, n_leaf)
    spines = _pod_layer(req, sw, shape, reserve)
    pod = spines.pod

    # fabric managers take a free node slot of the last segment, as in the plain build
    reserved = int(fabric.reserved_ports_per_su)
    attached = reserved > 0 and segs * su_nodes - nodes >= reserved
    mgr_links = int(reserved * req.rules.num("fabric_manager_links_per_slot")) if attached else 0
    up_eq = math.ceil(u * s1 / e - 1e-9)          # leaf uplinks in endpoint-speed ports
    groups = tuple((n, down + up) for n, down, up in spines.sets(pods))
    plane = FabricSize(
        endpoints=nodes * rails + mgr_links, radix=k,
        oversubscription=su_nodes * g * e / (u * s1) if u else math.inf,
        tiers=3 if pods > 1 else 2, leaf=n_leaf, spine=pod.spines, core=pod.aggregation,
        leaf_down=k - up_eq, leaf_up=up_eq, pods=pods, leaf_spine_links=n_leaf * u,
        spine_core_links=pod.spine_aggregation_links, spine_groups=groups,
        core_groups=((pod.aggregation, spines.agg_ports),) if pods > 1 else ())
    optical_nodes = rail_topo or su_nodes > nodes_per_rack
    node_ppc = (rails * planes) // int(node.compute_cages) if node.compute_cages else 1
    per_node = (int(node.compute_cages) if planes == 1 and node_ppc > 1 and g % node_ppc == 0
                and rails % node_ppc == 0 else 0)
    ppc_l = max(1, k // int(leaf_switch.cages))
    cf = ComputeFabric(
        technology=fabric.id, switch_id=leaf_switch.id, topology=topology, radix=k,
        endpoint_gbps=e, planes=planes, rails=rails, ports_per_node_per_leaf=g,
        su_nodes=su_nodes, leaves_per_su=l_su, scalable_units=segs, nodes=nodes,
        reserved_slots=reserved if attached else 0, manager_links=mgr_links,
        managers_attached=attached, plane=plane, node_links_optical=optical_nodes,
        switch_modules=0, node_modules=0, manager_modules=0, ports_per_cage=ppc_l,
        leaf_pair=False, node_cables_per_node=per_node, rail_su_nodes=(k - up_eq) // g_rail,
        pod=pod, spine_switch_id=spine_switch.id, dual_tor=req.dual_tor)
    return _pod_modules(cf, req, sw, shape, spines)


def _pod_modules(cf: ComputeFabric, req: FabricRequest, sw: SwitchSet, shape: PodShape,
                 spines: SpineLayer) -> ComputeFabric:
    """Transceivers of a pod build: one module per used cage, ports of one speed per cage."""
    e, s1, s2 = float(req.endpoint), sw.s1, sw.s2
    up_eq = cf.plane.leaf_up
    cage_s = sw.cap_s / int(sw.spine.cages)
    ppc_le, ppc_l1 = max(1, int(sw.cage_l // e)), max(1, int(sw.cage_l // s1))
    ppc_s1, ppc_s2 = max(1, int(cage_s // s1)), max(1, int(cage_s // s2))
    down = cf.leaf_ports_used() - up_eq
    leaf_mods = shape.n_leaf * math.ceil(shape.u / ppc_l1)
    leaf_mods += (_modules(down, ppc_le) if cf.node_links_optical
                  else math.ceil(cf.manager_links / ppc_le))
    spine_mods = 0
    for n, dn, up in spines.sets(shape.pods):  # spine uplinks take modules once they are cabled
        spine_mods += n * (math.ceil(dn / ppc_s1) + (math.ceil(up / ppc_s2) if shape.pods > 1 else 0))
    agg_mods = spines.pod.aggregation * math.ceil(spines.agg_ports / ppc_s2)
    mods = leaf_mods + spine_mods + agg_mods
    node_mod = req.nodes * int(req.node.compute_cages) if cf.node_links_optical else 0
    planes = req.planes
    return replace(cf, switch_modules=mods * planes, node_modules=node_mod,
                   manager_modules=cf.manager_links,
                   tier_modules=(leaf_mods * planes, spine_mods * planes, agg_mods * planes))
