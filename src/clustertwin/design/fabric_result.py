"""The compute fabric of a design (all planes together) and the pod/aggregation layer of a
pod build. Plain data: the counting lives in :mod:`clustertwin.design.fattree`, the plans in
:mod:`clustertwin.design.fabric` and :mod:`clustertwin.design.pods`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from clustertwin.design.fattree import FabricSize


@dataclass(frozen=True)
class PodLayer:
    """The pod and aggregation layers of one plane (counts per plane unless named total)."""

    leaf_switch_id: str
    spine_switch_id: str
    pods: int
    segments_per_pod: int
    pod_nodes: int              #: node slots of a full pod (segments x nodes per segment)
    leaf_up: int                #: uplinks per leaf, at uplink_gbps
    uplink_gbps: float          #: leaf-spine link speed
    spine_gbps: float           #: spine-aggregation link speed
    spines_per_pod: int
    spine_down_max: int         #: leaf links a spine takes at the pod ratio
    spine_down: int             #: leaf links per spine of a full pod (the only pod when pods == 1)
    spine_up: int               #: uplink ports per spine of a full pod (reserved if pods == 1)
    last_spine_down: int        #: of the last pod
    last_spine_up: int
    aggregation_per_group: int  #: c (0 with one pod)
    aggregation_ports: int      #: ports used on one aggregation switch
    endpoint_gbps: float
    rails: int

    @property
    def spines(self) -> int:
        return self.spines_per_pod * self.pods

    @property
    def aggregation(self) -> int:
        return self.spines_per_pod * self.aggregation_per_group if self.pods > 1 else 0

    @property
    def spine_aggregation_links(self) -> int:
        if self.pods == 1:
            return 0
        return self.spines_per_pod * ((self.pods - 1) * self.spine_up + self.last_spine_up)

    @property
    def pod_gpu_ports(self) -> int:
        """Node ports (one per rail) of a full pod, this plane."""
        return self.pod_nodes * self.rails

    @property
    def pod_oversubscription(self) -> float:
        """Actual down:up bandwidth of a full pod's spines (inf when they keep no uplinks)."""
        up = self.spine_up * self.spine_gbps
        return self.spine_down * self.uplink_gbps / up if up else math.inf

    @property
    def cross_pod_ratio(self) -> float | None:
        """Injection : cross-pod bandwidth of a full pod (its GPUs' ports vs its spines'
        uplinks); None when the spines keep no uplinks."""
        up = self.spines_per_pod * self.spine_up * self.spine_gbps
        return self.pod_gpu_ports * self.endpoint_gbps / up if up else None

    def tier_table(self, cf, planes: int) -> list[dict]:
        tm = cf.tier_modules
        rows = [{"tier": "leaf", "switch": self.leaf_switch_id, "switches": cf.leaf,
                 "per_plane": cf.plane.leaf, "links_below": cf.node_leaf_links,
                 "cables_below": cf.node_cables + cf.manager_links,
                 "link_gbps": self.endpoint_gbps,
                 "down_ports": cf.su_nodes * cf.ports_per_node_per_leaf,
                 "up_ports": self.leaf_up, "transceivers": tm[0]},
                {"tier": "spine", "switch": self.spine_switch_id, "switches": cf.spine,
                 "per_plane": self.spines, "per_pod": self.spines_per_pod,
                 "links_below": cf.leaf_spine_links, "cables_below": cf.leaf_spine_links,
                 "link_gbps": self.uplink_gbps,
                 "down_ports": self.spine_down, "up_ports": self.spine_up,
                 "transceivers": tm[1]}]
        if self.pods > 1:
            rows.append({"tier": "aggregation", "switch": self.spine_switch_id,
                         "switches": self.aggregation * planes, "per_plane": self.aggregation,
                         "links_below": self.spine_aggregation_links * planes,
                         "cables_below": self.spine_aggregation_links * planes,
                         "link_gbps": self.spine_gbps, "down_ports": self.aggregation_ports,
                         "up_ports": 0, "transceivers": tm[2]})
        return rows



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
    rail_groups: int = 1         #: rails split into separate planes (rail-separated fabric)
    notes: tuple[str, ...] = ()  #: why the fabric has the shape it has (scale choices)

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
        if len(p.upper_tiers) == 2:     # a fourth tier: third and fourth rows apart
            t3, t4 = p.upper_tiers
            (_, used3), (_, used4) = p.core_groups
            for name, n, n_plane, used, up in (("core", t3 * q, t3, used3, self.radix // 2),
                                               ("super-core", t4 * q, t4, used4, 0)):
                rows.append({"tier": name, "switch": self.switch_id, "switches": n,
                             "per_plane": n_plane, "link_gbps": self.endpoint_gbps,
                             "down_ports": used - up, "up_ports": up})
            return rows
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
