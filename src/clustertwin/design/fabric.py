"""Compute-fabric sizing: a (rail-optimized) fat tree of identical k-port switches.

:func:`size_fabric` is the pure counting rule, usable by any stage::

    leaves  = ceil(endpoints / d)                 d = leaf downlinks, u = k - d uplinks
    2 tiers : spines = smallest divisor S of u with S * k >= leaves * u
              (every leaf sends u / S parallel links to every spine)
    3 tiers : pods of k/2 leaves and u spines (spines k/2 down, k/2 up); a partial last pod
              gets the smallest divisor of u that carries its uplinks; per spine position,
              cores = smallest divisor c of k/2 with c * k >= pods * k/2.

With u = k/2 this reproduces the NVIDIA DGX SuperPOD tables (1-64 SU of DGX H100/B200 on
64-port NDR, 1-18 SU of DGX B300 on 144-port XDR, the twin-plane Spectrum-X rows) and the
fat-tree limits k^2/2 (2 tiers) and k^3/4 (3 tiers) - shared/research/datacenter-anchors.md 2.2.
Leaf oversubscription r:1 sets u = ceil(k / (r + 1)), d = k - u (so the real ratio is <= r).

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
from typing import TYPE_CHECKING

import numpy as np

from clustertwin.errors import InfeasibleError, Problem, ScenarioError

if TYPE_CHECKING:
    from clustertwin.design.pods import PodLayer

MAX_TIERS = 3


def _smallest_divisor_at_least(n: int, need: float) -> int:
    """Smallest divisor of ``n`` that is >= ``need`` (``n`` itself at worst)."""
    for s in range(max(1, math.ceil(need - 1e-9)), n + 1):
        if n % s == 0:
            return s
    return n


def leaf_split(switch_ports: int, oversubscription: float) -> tuple[int, int]:
    """(downlinks, uplinks) of a leaf for a requested down:up ratio (actual ratio <= requested)."""
    up = math.ceil(switch_ports / (oversubscription + 1.0) - 1e-9)
    return switch_ports - up, up


def max_endpoints(switch_ports: int, tiers: int, oversubscription: float = 1.0) -> int:
    """Most endpoint ports a fat tree of ``tiers`` levels reaches: k, k*d, k*(k/2)*d."""
    k = switch_ports
    d, _ = leaf_split(k, oversubscription)
    if tiers <= 1:
        return k
    if tiers == 2:
        return k * d
    return k * (k // 2) * d


@dataclass(frozen=True)
class FabricSize:
    """Switch and link counts of one fat tree (one plane). Ports at the endpoint speed."""

    endpoints: int              #: endpoint ports the tree is sized for
    radix: int                  #: switch ports k
    oversubscription: float     #: actual leaf down:up ratio
    tiers: int
    leaf: int
    spine: int
    core: int
    leaf_down: int              #: ports per leaf facing endpoints
    leaf_up: int                #: ports per leaf facing spines (0 in 1 tier)
    pods: int                   #: 3-tier pods (1 otherwise)
    leaf_spine_links: int
    spine_core_links: int
    spine_groups: tuple[tuple[int, int], ...]  #: (spines, ports used on each)
    core_groups: tuple[tuple[int, int], ...]   #: (cores, ports used on each)

    @property
    def switches(self) -> int:
        return self.leaf + self.spine + self.core

    @property
    def node_leaf_links(self) -> int:
        return self.endpoints

    @property
    def links(self) -> int:
        return self.endpoints + self.leaf_spine_links + self.spine_core_links


def _infeasible(endpoints: int, k: int, r: float, source: str, path: str) -> InfeasibleError:
    limit = max_endpoints(k, MAX_TIERS, r)
    hints = []
    need_d = math.ceil(endpoints / (k * (k // 2)))
    if need_d <= k - 1:
        hints.append(f"leaf oversubscription >= {need_d / (k - need_d):.2f}")
    k2 = k + 2
    while k2 * k2 * k2 / 4 * (1 if r <= 1 else 2 * r / (r + 1)) < endpoints:
        k2 += 2
    hints.append(f"a switch with >= {k2} ports at this speed")
    hints.append(f"at most {limit:,} endpoint ports")
    return InfeasibleError([Problem(source, path,
        f"{endpoints:,} endpoint ports need more than {MAX_TIERS} tiers of {k}-port switches "
        f"(limit {limit:,} at {r:g}:1); nearest changes: {', or '.join(hints)}")])


def size_fabric(endpoints: int, switch_ports: int, oversubscription: float = 1.0, *,
                leaves: int | None = None, max_tiers: int = MAX_TIERS,
                source: str = "<memory>",
                path: str = "cluster.fabric.technology") -> FabricSize:
    """Size one fat-tree plane for ``endpoints`` ports on ``switch_ports``-port switches.

    ``leaves`` forces the leaf count (rail-optimized callers size whole SUs); otherwise it is
    ``ceil(endpoints / downlinks)`` and a build that fits one switch is a single tier.
    Raises ScenarioError for oversubscription < 1 and InfeasibleError past ``max_tiers``.
    """
    k, r = int(switch_ports), float(oversubscription)
    if r < 1.0:
        raise ScenarioError([Problem(source, "cluster.fabric.oversubscription",
            f"oversubscription {r:g} is below 1 (more uplinks than downlinks buys nothing); "
            "use 1.0 for non-blocking")])
    if k < 2:
        raise ScenarioError([Problem(source, path, f"a switch needs at least 2 ports, got {k}")])
    endpoints = int(endpoints)
    if endpoints < 1:
        raise ValueError("endpoints must be >= 1")
    if leaves is None and endpoints <= k:
        return FabricSize(endpoints, k, float(endpoints), 1, 1, 0, 0, k, 0, 1, 0, 0, (), ())
    d, u = leaf_split(k, r)
    if d < 1:
        raise ScenarioError([Problem(source, "cluster.fabric.oversubscription",
                                     f"{r:g}:1 leaves no downlinks on a {k}-port switch")])
    n_leaf = math.ceil(endpoints / d) if leaves is None else int(leaves)
    if n_leaf * d < endpoints:
        raise ValueError(f"{n_leaf} leaves of {d} downlinks cannot hold {endpoints} ports")
    actual = d / u
    if n_leaf <= k and max_tiers >= 2:
        s = _smallest_divisor_at_least(u, n_leaf * u / k)
        return FabricSize(endpoints, k, actual, 2, n_leaf, s, 0, d, u, 1, n_leaf * u, 0,
                          ((s, n_leaf * u // s),), ())
    half = k // 2
    pods = math.ceil(n_leaf / half)
    if max_tiers < 3 or pods > k:
        raise _infeasible(endpoints, k, r, source, path)
    full, last = divmod(n_leaf, half)
    groups = [(full * u, 2 * half)] if full else []
    n_spine = full * u
    if last:
        s_last = _smallest_divisor_at_least(u, last * u / half)
        groups.append((s_last, last * u // s_last + half))
        n_spine += s_last
    c = _smallest_divisor_at_least(half, pods * half / k)
    n_core = u * c
    return FabricSize(endpoints, k, actual, 3, n_leaf, n_spine, n_core, d, u, pods,
                      n_leaf * u, n_spine * half, tuple(groups), ((n_core, pods * half // c),))


# --------------------------------------------------------------------------------------------
# the compute fabric of a design


@dataclass(frozen=True)
class ComputeFabric:
    """The compute (east-west) fabric of a design: all planes together.

    ``leaf``/``spine``/``core`` and link counts are totals over planes; ``plane`` is one plane.
    Cable and transceiver counts follow the DGX SuperPOD RA: one cable per link, one module per
    switch cage with a used optical port, ``compute_cages`` modules per node (multi-plane NICs
    share their cages), one module per fabric-manager link.
    """

    technology: str
    switch_id: str
    topology: str
    radix: int
    endpoint_gbps: float
    planes: int
    rails: int                   #: node ports per plane
    ports_per_node_per_leaf: int
    su_nodes: int                #: node slots per scalable unit
    leaves_per_su: int           #: per plane
    scalable_units: int
    nodes: int
    reserved_slots: int
    manager_links: int           #: fabric-manager (UFM) links on the leaves
    managers_attached: bool
    plane: FabricSize
    node_links_optical: bool
    switch_modules: int
    node_modules: int
    manager_modules: int
    ports_per_cage: int
    leaf_pair: bool = False      #: two leaves joined by ISLs, no spine (BasePOD)
    node_cables_per_node: int = 0  #: 0 = one cable per node link
    rail_su_nodes: int = 0       #: nodes of a rail-optimized SU on this switch (0 = su_nodes)
    pod: PodLayer | None = None  #: pod / aggregation build (``design.pods``); None = one tree
    spine_switch_id: str = ""    #: switch above the leaves ("" = switch_id)
    dual_tor: bool = False       #: each NIC's two ports on two ToRs, one per plane
    tier_modules: tuple[int, int, int] = (0, 0, 0)  #: switch-side modules: leaf, spine, core

    @property
    def tor(self) -> bool:
        """Leaves are top-of-rack switches inside the compute racks (copper node links)."""
        return self.topology != "rail-optimized-fat-tree" and not self.node_links_optical

    @property
    def equivalent_sus(self) -> int:
        """Rail-optimized SUs this many nodes would fill: the unit management servers and the
        storage fabric are sized in, whatever the compute topology."""
        return max(1, math.ceil(self.nodes / (self.rail_su_nodes or self.su_nodes)))

    @property
    def tiers(self) -> int:
        return self.plane.tiers

    @property
    def leaf(self) -> int:
        return self.plane.leaf * self.planes

    @property
    def spine(self) -> int:
        return self.plane.spine * self.planes

    @property
    def core(self) -> int:
        return self.plane.core * self.planes

    @property
    def switches(self) -> int:
        return self.leaf + self.spine + self.core

    @property
    def node_leaf_links(self) -> int:
        """Node and fabric-manager links to leaves (the RA's 'node+UFM to leaf')."""
        return self.nodes * self.rails * self.planes + self.manager_links

    @property
    def leaf_spine_links(self) -> int:
        return self.plane.leaf_spine_links * self.planes

    @property
    def spine_core_links(self) -> int:
        return self.plane.spine_core_links * self.planes

    @property
    def node_cables(self) -> int:
        """Node cables: one per link, or one per node cage when both ports of a twin-port cage
        land on the same leaf (BasePOD: 32 fibres for 64 NDR200 links, datacenter-anchors 1.6)."""
        per = self.node_cables_per_node or self.rails * self.planes
        return self.nodes * per

    @property
    def isl_cables(self) -> int:
        """Leaf-pair ISL cables: twin-port DACs carry ``ports_per_cage`` links each."""
        return math.ceil(self.leaf_spine_links / self.ports_per_cage) if self.leaf_pair else 0

    @property
    def cables(self) -> int:
        """Contract ``design.fabric.cables``: node-leaf + leaf-spine + spine-core cables (one
        per link, except node cages and leaf-pair ISLs that carry two links on one cable)."""
        upper = self.isl_cables if self.leaf_pair else self.leaf_spine_links
        return self.node_cables + self.manager_links + upper + self.spine_core_links

    @property
    def copper_cables(self) -> int:
        node = 0 if self.node_links_optical else self.node_cables
        return node + self.isl_cables

    @property
    def fiber_cables(self) -> int:
        return self.cables - self.copper_cables

    @property
    def transceivers(self) -> int:
        return self.switch_modules + self.node_modules + self.manager_modules

    @property
    def oversubscription(self) -> float:
        return self.plane.oversubscription

    @property
    def pods(self) -> int:
        """Pods joined by the aggregation layer (1 without a pod build)."""
        return self.pod.pods if self.pod is not None else 1

    @property
    def upper_switch_id(self) -> str:
        """Catalog id of the spine / aggregation (core) switches."""
        return self.spine_switch_id or self.switch_id

    @property
    def cross_pod_ratio(self) -> float | None:
        """Injection : cross-pod bandwidth of one full pod (7.0 = cross-pod is 1/7 of what the
        pod's GPUs inject); None without a pod build."""
        return None if self.pod is None else self.pod.cross_pod_ratio

    def tier_table(self) -> list[dict]:
        """Per-tier counts (all planes): switch, switches, links below the tier and their speed,
        ports used down / up per switch."""
        p, q = self.plane, self.planes
        if self.pod is not None:
            return self.pod.tier_table(self, q)
        tm = self.tier_modules
        rows = [{"tier": "leaf", "switch": self.switch_id, "switches": self.leaf,
                 "per_plane": p.leaf, "links_below": self.node_leaf_links,
                 "cables_below": self.node_cables + self.manager_links,
                 "link_gbps": self.endpoint_gbps, "down_ports": p.leaf_down, "up_ports": p.leaf_up,
                 "transceivers": tm[0]}]
        if p.spine:
            rows.append({"tier": "spine", "switch": self.switch_id, "switches": self.spine,
                         "per_plane": p.spine, "links_below": self.leaf_spine_links,
                         "cables_below": (self.isl_cables if self.leaf_pair
                                          else self.leaf_spine_links),
                         "link_gbps": self.endpoint_gbps, "transceivers": tm[1],
                         "down_ports": max((u for _, u in p.spine_groups), default=0)
                         - (self.radix // 2 if p.core else 0),
                         "up_ports": self.radix // 2 if p.core else 0})
        if p.core:
            rows.append({"tier": "core", "switch": self.switch_id, "switches": self.core,
                         "per_plane": p.core, "links_below": self.spine_core_links,
                         "cables_below": self.spine_core_links,
                         "link_gbps": self.endpoint_gbps, "transceivers": tm[2],
                         "down_ports": max((u for _, u in p.core_groups), default=0),
                         "up_ports": 0})
        return rows

    def leaf_ports_used(self) -> np.ndarray:
        """Used leaf ports (down + up) of every leaf of one plane, manager links included."""
        p = self.plane
        su_count, l_su, g = self.scalable_units, self.leaves_per_su, self.ports_per_node_per_leaf
        down = np.full((su_count, l_su), self.su_nodes * g, dtype=np.int64)
        last_nodes = self.nodes - (su_count - 1) * self.su_nodes
        down[-1, :] = last_nodes * g
        if self.manager_links:
            extra = np.full(l_su, self.manager_links // l_su, dtype=np.int64)
            extra[: self.manager_links % l_su] += 1
            down[-1, :] += extra
        return down.ravel() + p.leaf_up

    def port_map(self) -> np.ndarray:
        """(leaf, leaf port) of every node port, rows ordered node, plane, rail.

        Leaf indices are global over planes. Used by tests to check that every node port
        lands on exactly one leaf port."""
        n, r, q = self.nodes, self.rails, self.planes
        node = np.repeat(np.arange(n), q * r)
        plane = np.tile(np.repeat(np.arange(q), r), n)
        rail = np.tile(np.arange(r), n * q)
        g = self.ports_per_node_per_leaf
        su, slot = np.divmod(node, self.su_nodes)
        leaf = plane * self.plane.leaf + su * self.leaves_per_su + rail // g
        port = slot * g + rail % g
        return np.stack([leaf, port], axis=1)


def _modules(used: np.ndarray | int, ppc: int) -> int:
    return int(np.sum(-(-np.asarray(used) // ppc)))


def plan_compute_fabric(*, node, fabric, switch, nodes: int, oversubscription: float,
                        topology: str, nodes_per_rack: int, rules, source: str,
                        pod_nodes: int | None = None, pod_oversubscription: float = 1.0,
                        spine_switch=None, dual_tor: bool = False) -> ComputeFabric:
    """Rail-optimized (or plain) fat tree for ``nodes`` nodes of catalog type ``node``.

    ``fabric`` is the catalog Fabric family, ``switch`` the leaf Switch entry. Ports are sized in
    whole scalable units (SU = one leaf's worth of node slots per rail group), as the NVIDIA RAs
    do; the fabric's reserved slots go to fabric managers when the last SU has room.

    With ``pod_nodes`` (nodes under one pod) or a ``spine_switch`` other than ``switch`` the
    fabric is a pod build (:mod:`clustertwin.design.pods`); ``dual_tor`` splits every NIC into
    two ports on two ToRs, one per plane. Without them the result is the plain fat tree.
    """
    nic, link = float(node.compute_nic_gbps), float(fabric.link_gbps)
    endpoint = min(nic, link)
    planes = 1
    if dual_tor:
        if abs(nic - 2 * link) > 1e-6:
            raise ScenarioError([Problem(source, "cluster.fabric.dual_tor",
                f"dual-ToR puts each NIC's two ports on two ToRs, but a {node.id} NIC runs at "
                f"{nic:g} Gb/s and {fabric.id} links at {link:g} Gb/s (not 2 x {link:g}); "
                f"pick a fabric at {nic / 2:g} Gb/s or set dual_tor: false")])
        planes = 2
    elif nic > link and nic >= rules.num("multiplane_min_nic_gbps"):
        planes = int(round(nic / link))
        if abs(planes * link - nic) > 1e-6:
            raise ScenarioError([Problem(source, "cluster.fabric.technology",
                f"{node.id} NICs run at {nic:g} Gb/s, not a whole number of {fabric.id} "
                f"{link:g} Gb/s planes; pick a fabric whose link speed divides {nic:g}")])
    k = int(switch.ports * switch.port_gbps // endpoint)
    d, _ = leaf_split(k, oversubscription) if oversubscription >= 1 else (0, 0)
    if oversubscription < 1:
        size_fabric(1, k, oversubscription, source=source)  # raises the user-facing error
    rails = int(node.compute_nics)
    pair = False
    g_rail = int(rules.num("rack_scale_ports_per_tray")) if node.rack_scale else 1
    if rails % g_rail:
        g_rail = 1
    if topology == "rail-optimized-fat-tree":
        g = g_rail
        half = rails // 2
        # leaf pair: the whole cluster fits one SU whose two leaves take half the rails each
        if (not node.rack_scale and planes == 1 and rails >= 2 and rails % 2 == 0
                and 0 < half <= d and nodes <= d // half):
            g, pair = half, True
        su_nodes = d // g
    else:
        g = min(rails, d)
        # ToR per rack: a leaf holds at most one rack's nodes (copper in-rack)
        su_nodes = max(1, min(d // g, int(nodes_per_rack))) if g else 0
    if su_nodes < 1:
        raise InfeasibleError([Problem(source, "cluster.fabric.technology",
            f"a {k}-port leaf at {oversubscription:g}:1 has {d} downlinks, fewer than the "
            f"{g} ports a {node.id} puts on one leaf; lower cluster.fabric.oversubscription")])
    if pod_nodes is not None or (spine_switch is not None and spine_switch.id != switch.id):
        from clustertwin.design.pods import plan_pod_fabric

        return plan_pod_fabric(
            node=node, fabric=fabric, leaf_switch=switch, spine_switch=spine_switch or switch,
            nodes=nodes, planes=planes, endpoint=endpoint, rails=rails,
            g=g_rail if topology == "rail-optimized-fat-tree" else g, g_rail=g_rail,
            oversubscription=oversubscription, topology=topology,
            nodes_per_rack=nodes_per_rack, pod_nodes=pod_nodes,
            pod_oversubscription=pod_oversubscription, dual_tor=dual_tor, rules=rules,
            source=source)
    l_su = math.ceil(rails / g)
    sus = max(1, math.ceil(nodes / su_nodes))
    reserved = int(fabric.reserved_ports_per_su)
    free = sus * su_nodes - nodes
    attached = reserved > 0 and free >= reserved
    mgr_links = int(reserved * rules.num("fabric_manager_links_per_slot")) if attached else 0
    ports = nodes * rails + mgr_links
    if pair:
        plane = _leaf_pair(nodes * g, mgr_links, k, oversubscription)
    else:
        plane = size_fabric(ports, k, oversubscription, leaves=sus * l_su, source=source)
    optical_nodes = topology == "rail-optimized-fat-tree" or su_nodes > nodes_per_rack
    ppc = max(1, k // int(switch.cages))
    node_ppc = (rails * planes) // int(node.compute_cages) if node.compute_cages else 1
    per_node = (int(node.compute_cages) if planes == 1 and node_ppc > 1 and g % node_ppc == 0
                and rails % node_ppc == 0 else 0)
    cf = ComputeFabric(
        technology=fabric.id, switch_id=switch.id, topology=topology, radix=k,
        endpoint_gbps=endpoint, planes=planes, rails=rails, ports_per_node_per_leaf=g,
        su_nodes=su_nodes, leaves_per_su=l_su, scalable_units=sus, nodes=nodes,
        reserved_slots=reserved if attached else 0, manager_links=mgr_links,
        managers_attached=attached, plane=plane, node_links_optical=optical_nodes,
        switch_modules=0, node_modules=0, manager_modules=0, ports_per_cage=ppc,
        leaf_pair=pair, node_cables_per_node=per_node, rail_su_nodes=d // g_rail)
    down = cf.leaf_ports_used() - plane.leaf_up
    leaf_mod = 0 if pair else _modules(plane.leaf_up, ppc) * plane.leaf  # ISLs are copper
    if optical_nodes:
        leaf_mod += _modules(down, ppc)
    else:  # managers are the only optical leaf downlinks then
        leaf_mod += math.ceil(mgr_links / ppc)
    spine_mod = sum(n * _modules(used, ppc) for n, used in plane.spine_groups)
    core_mod = sum(n * _modules(used, ppc) for n, used in plane.core_groups)
    per_plane = leaf_mod + spine_mod + core_mod
    node_mod = nodes * int(node.compute_cages) if optical_nodes else 0
    return _replace(cf, switch_modules=per_plane * planes, node_modules=node_mod,
                    tier_modules=(leaf_mod * planes, spine_mod * planes, core_mod * planes),
                     manager_modules=mgr_links)


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
