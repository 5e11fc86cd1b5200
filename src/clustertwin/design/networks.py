"""Networks beside the compute fabric: storage fabric, in-band and out-of-band management,
fabric-manager appliances and head nodes, following the DGX SuperPOD H100 RA (R1, see
shared/research/datacenter-anchors.md 1.1 and 8.2).

* Storage fabric: node side at ~4:3 (``storage_fabric_node_oversubscription``), storage side
  1:1, on the compute fabric's switch model; spines = leaf uplinks / radix (2 tiers).
* In-band: ``inband_node_ports_per_switch`` node links per switch, at least 2 switches.
* OOB: one RJ45 per BMC, switch, host, PDU and UFM back-to-back pair;
  ``oob_devices_per_switch`` devices per switch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clustertwin.design.fabric import leaf_split


@dataclass(frozen=True)
class StorageFabric:
    switch_id: str
    node_links: int
    storage_links: int
    leaf: int
    spine: int
    leaf_spine_links: int

    @property
    def switches(self) -> int:
        return self.leaf + self.spine

    @property
    def cables(self) -> int:
        return self.node_links + self.storage_links + self.leaf_spine_links


@dataclass(frozen=True)
class ManagementNetworks:
    storage: StorageFabric
    inband_switch_id: str
    inband_switches: int
    inband_links: int
    oob_switch_id: str
    oob_switches: int
    oob_devices: int
    ufm_appliances: int
    management_servers: int


def plan_storage_fabric(node_links: int, storage_links: int, switch, rules) -> StorageFabric:
    k = int(switch.ports)
    d, u = leaf_split(k, rules.num("storage_fabric_node_oversubscription"))
    if node_links + storage_links <= k:
        return StorageFabric(switch.id, node_links, storage_links, 1, 0, 0)
    n_leaf = math.ceil(node_links / d)
    s_leaf = math.ceil(storage_links / (k // 2))
    up = n_leaf * u + s_leaf * (k // 2)
    return StorageFabric(switch.id, node_links, storage_links, n_leaf + s_leaf,
                         math.ceil(up / k), up)


def oob_devices_per_node(node, rules) -> int:
    """BMC ports per node; a rack-scale system has one per compute and NVLink-switch tray
    (GB200 NVL72: 18 compute + 9 switch trays, datacenter-anchors 1.4)."""
    if not node.rack_scale:
        return 1
    trays = max(1, node.compute_nics // int(rules.num("rack_scale_ports_per_tray")))
    return trays + trays // 2


def plan_management(*, node, nodes: int, scalable_units: int, compute_switches: int,
                    manager_links: int, storage_links: int, storage_switch, inband_switch,
                    oob_switch, pdus: int, rules) -> ManagementNetworks:
    sf = plan_storage_fabric(nodes * int(node.storage_nics), storage_links, storage_switch, rules)
    inband_links = nodes * int(node.storage_nics)
    inband = max(2, math.ceil(inband_links / rules.num("inband_node_ports_per_switch")))
    pods = math.ceil(scalable_units / rules.num("management_server_sus"))
    servers = int(rules.num("management_servers_per_pod")) * pods
    ufm = manager_links if manager_links else 0
    devices = (nodes * oob_devices_per_node(node, rules) + compute_switches + sf.switches
               + inband + servers + ufm + ufm // 2 + pdus)
    oob = max(1, math.ceil(devices / rules.num("oob_devices_per_switch")))
    return ManagementNetworks(storage=sf, inband_switch_id=inband_switch.id,
                              inband_switches=inband, inband_links=inband_links,
                              oob_switch_id=oob_switch.id, oob_switches=oob, oob_devices=devices,
                              ufm_appliances=ufm, management_servers=servers)
