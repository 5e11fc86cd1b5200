"""Networks beside the compute fabric: storage fabric, in-band and out-of-band management,
fabric-manager appliances and head nodes, following the DGX SuperPOD H100 RA (R1, see
shared/research/datacenter-anchors.md 1.1 and 8.2).

* Storage fabric (:func:`plan_storage_fabric`): a leaf/spine tree on the compute fabric's switch
  model, sized for whole SUs like the compute fabric. Node leaves hold k/2 node ports each and
  send d / r uplinks (r = ``storage_fabric_node_oversubscription``, 4:3 -> 32 down : 24 up);
  storage leaves run 1:1, one per SU (R1 Table 6 sizes storage per SU) or more when the storage
  ports need them; spines follow the divisor rule of the compute fabric. R1's 4-SU pod: 8 node
  leaves + 4 storage leaves + 4 spines = 16 QM9700, 254 node + 240 leaf-spine cables = 494 with
  48 storage ports (Table 7/8). A cluster whose compute fabric is a BasePOD-style leaf pair
  carries storage on the in-band Ethernet instead (no storage switches; R6).
* In-band: ``inband_node_ports_per_switch`` node links per switch, at least 2 switches.
* OOB: one RJ45 per BMC, switch, host, PDU and UFM back-to-back pair;
  ``oob_devices_per_switch`` devices per switch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clustertwin.design.fattree import smallest_divisor_at_least as _smallest_divisor_at_least

if TYPE_CHECKING:
    from clustertwin.design.parts import Parts


@dataclass(frozen=True)
class StorageFabric:
    """The storage network: its switches and links."""

    switch_id: str
    node_links: int
    storage_links: int
    leaf: int                   #: node leaves + storage leaves
    spine: int
    leaf_spine_links: int
    storage_leaves: int = 0
    core: int = 0
    spine_core_links: int = 0
    converged: bool = False     #: storage rides the in-band Ethernet (no storage switches)

    @property
    def switches(self) -> int:
        return self.leaf + self.spine + self.core

    @property
    def cables(self) -> int:
        return (self.node_links + self.storage_links + self.leaf_spine_links
                + self.spine_core_links)


@dataclass(frozen=True)
class ManagementNetworks:
    """The storage, in-band and out-of-band networks."""

    storage: StorageFabric
    inband_switch_id: str
    inband_switches: int
    inband_links: int
    oob_switch_id: str
    oob_switches: int
    oob_devices: int
    ufm_appliances: int
    management_servers: int


def plan_storage_fabric(node_links: int, storage_links: int, switch, rules, *,
                        scalable_units: int = 1, su_node_links: int | None = None,
                        converged: bool = False) -> StorageFabric:
    """Storage fabric for ``node_links`` node ports and ``storage_links`` storage ports.

    ``su_node_links`` is the node ports of one full SU (the leaves are sized for whole SUs);
    ``converged`` puts storage on the in-band network (no switches, BasePOD)."""
    if converged:
        return StorageFabric(switch.id, node_links, storage_links, 0, 0, 0, converged=True)
    k = int(switch.ports)
    if node_links + storage_links <= k:
        return StorageFabric(switch.id, node_links, storage_links, 1, 0, 0)
    half = k // 2
    r = rules.num("storage_fabric_node_oversubscription")
    up = max(1, math.ceil(half / r - 1e-9))                       # 32 / (4/3) = 24
    sus = max(1, int(scalable_units))
    sized = max(node_links, sus * int(su_node_links or 0))
    n_leaf = math.ceil(sized / half)
    s_leaf = max(sus, math.ceil(storage_links / half)) if storage_links else 0
    uplinks = n_leaf * up + storage_links
    if uplinks <= up * k:                                         # 2 tiers: divisor rule
        spines = _smallest_divisor_at_least(up, uplinks / k)
        return StorageFabric(switch.id, node_links, storage_links, n_leaf + s_leaf, spines,
                             uplinks, storage_leaves=s_leaf)
    spines = math.ceil(uplinks / half)                            # 3 tiers, spines k/2 : k/2
    cores = math.ceil(spines * half / k)
    return StorageFabric(switch.id, node_links, storage_links, n_leaf + s_leaf, spines,
                         uplinks, storage_leaves=s_leaf, core=cores,
                         spine_core_links=spines * half)


def oob_devices_per_node(node, rules) -> int:
    """BMC ports per node; a rack-scale system has one per compute and NVLink-switch tray
    (GB200 NVL72: 18 compute + 9 switch trays, datacenter-anchors 1.4)."""
    if not node.rack_scale:
        return 1
    trays = max(1, node.compute_nics // int(rules.num("rack_scale_ports_per_tray")))
    return trays + trays // 2


def plan_management(parts: Parts, *, manager_links: int, storage_links: int, pdus: int,
                    rules) -> ManagementNetworks:
    """The storage fabric, in-band and out-of-band management networks and head nodes of the
    design's ``parts`` (the storage fabric on the fabric family's switch model)."""
    node, nodes, cf = parts.node, parts.nodes, parts.cf
    scalable_units, compute_switches = cf.equivalent_sus, cf.switches
    su_nodes, converged_storage = cf.rail_su_nodes, cf.leaf_pair
    storage_switch, inband_switch, oob_switch = parts.sw.fabric, parts.sw.inband, parts.sw.oob
    sf = plan_storage_fabric(nodes * int(node.storage_nics), storage_links, storage_switch, rules,
                             scalable_units=scalable_units,
                             su_node_links=su_nodes * int(node.storage_nics),
                             converged=converged_storage)
    inband_links = nodes * int(node.storage_nics)
    inband = max(2, math.ceil(inband_links / rules.num("inband_node_ports_per_switch")))
    pods = math.ceil(scalable_units / rules.num("management_server_sus"))
    # one node runs its own scheduler and provisioning: a head-node set starts at two nodes
    servers = int(rules.num("management_servers_per_pod")) * pods if nodes > 1 else 0
    ufm = manager_links if manager_links else 0
    devices = (nodes * oob_devices_per_node(node, rules) + compute_switches + sf.switches
               + inband + servers + ufm + ufm // 2 + pdus)
    oob = max(1, math.ceil(devices / rules.num("oob_devices_per_switch")))
    return ManagementNetworks(storage=sf, inband_switch_id=inband_switch.id,
                              inband_switches=inband, inband_links=inband_links,
                              oob_switch_id=oob_switch.id, oob_switches=oob, oob_devices=devices,
                              ufm_appliances=ufm, management_servers=servers)
