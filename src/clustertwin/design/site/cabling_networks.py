"""The storage, in-band and out-of-band links of the cabling map (see
:mod:`clustertwin.design.site.cabling` for the columns and wiring rules)."""

from __future__ import annotations

import numpy as np

from clustertwin.design.site.inventory import Inventory
from clustertwin.design.site.link_groups import LinkGroup, rank_within, spread_over
from clustertwin.design.site.placement import OOB_ROLES, oob_assignment


def _node_port_devices(inv: Inventory, nics: int) -> tuple[np.ndarray, np.ndarray]:
    """(node device, NIC number) of every storage/in-band port, in node order."""
    systems = inv.count("node") // max(1, inv.trays_per_system)
    t = inv.trays_per_system
    sys_i = np.repeat(np.arange(systems), nics)
    nic = np.tile(np.arange(nics), systems)
    tray = (nic * t) // max(1, nics)
    per = max(1, nics // t)
    return inv.span("node")[0] + sys_i * t + tray, nic % per + 1


def storage_links(inv: Inventory, design) -> list[LinkGroup]:
    sf = design.networks.storage
    gbps = inv.storage_nic_gbps
    sys0, n_sys = inv.span("storage")[0], inv.count("storage")
    out = []
    if sf.converged or sf.leaf == 0:
        sw0, n_sw = inv.span("inband")[0], inv.count("inband")
        if sf.storage_links and n_sys and n_sw:
            j = np.arange(sf.storage_links)
            out.append(LinkGroup("storage-system", "storage", sys0 + j % n_sys, j // n_sys + 1,
                              "p ", sw0 + spread_over(sf.storage_links, n_sw), None, 0, "optical",
                              None, gbps))
        return out
    leaf0 = inv.span("storage-leaf")[0]
    node_leaves = sf.leaf - sf.storage_leaves
    a, nic = _node_port_devices(inv, inv.storage_nics)
    a = a[: sf.node_links]
    nl = leaf0 + spread_over(a.size, max(1, node_leaves))
    out.append(LinkGroup("storage-node", "storage", a, nic[: a.size], "stor ", nl, None, 0,
                      "optical", None, gbps))
    if sf.storage_links and n_sys:
        j = np.arange(sf.storage_links)
        s_leaves = sf.storage_leaves or 1
        first = node_leaves if sf.storage_leaves else 0
        out.append(LinkGroup("storage-system", "storage", sys0 + j % n_sys, j // n_sys + 1, "p ",
                          leaf0 + first + spread_over(sf.storage_links, s_leaves), None, 0,
                          "optical", None, gbps))
    if sf.spine:
        used = np.bincount(np.concatenate([g.b - leaf0 for g in out]), minlength=sf.leaf)
        up = np.zeros(sf.leaf, dtype=np.int64)
        per_node_leaf = (sf.leaf_spine_links - sf.storage_links) // max(1, node_leaves)
        up[:node_leaves] = per_node_leaf
        up[node_leaves:] = used[node_leaves:]
        up[-1] += sf.leaf_spine_links - int(up.sum())     # rounding lands on the last leaf
        lf = np.repeat(np.arange(sf.leaf), up)
        i = np.arange(lf.size)
        sp = inv.span("storage-spine")[0] + i % sf.spine
        out.append(LinkGroup("storage-leaf-spine", "storage", leaf0 + lf,
                          used[lf] + rank_within(leaf0 + lf) + 1, "", sp, None, 0, "optical", None,
                          gbps))
        if sf.core and sf.spine_core_links:
            per = sf.spine_core_links // sf.spine
            s = np.repeat(np.arange(sf.spine), per)
            k = np.arange(s.size)
            sp_dev = inv.span("storage-spine")[0] + s
            down = np.bincount(i % sf.spine, minlength=sf.spine)
            out.append(LinkGroup("storage-spine-core", "storage", sp_dev,
                              down[s] + rank_within(sp_dev) + 1,
                              "", inv.span("storage-core")[0] + k % sf.core, None, 0,
                              "optical", None, gbps))
    return out


def inband_links(inv: Inventory, design) -> list[LinkGroup]:
    net = design.networks
    n_sw = inv.count("inband")
    if not net.inband_links or not n_sw:
        return []
    a, nic = _node_port_devices(inv, inv.storage_nics)
    a, nic = a[: net.inband_links], nic[: net.inband_links]
    # a node's bonded ports land on different switches (the bond survives a switch): nodes
    # are spread evenly over the switches, and port j goes j switches further along
    first = inv.span("node")[0]
    system = (a - first) // max(1, inv.trays_per_system)
    systems = int(system.max()) + 1 if system.size else 0
    b = inv.span("inband")[0] + (spread_over(systems, n_sw)[system] + nic - 1) % n_sw
    gbps = inv.storage_nic_gbps
    if inv.inband_gbps:
        gbps = min(gbps, inv.inband_gbps) if gbps else inv.inband_gbps
    return [LinkGroup("inband", "inband", a, nic, "inb ", b, None, 0, "optical", None, gbps)]


def oob_links(inv: Inventory, design) -> list[LinkGroup]:
    devs = [np.arange(*inv.span(r)) for r in OOB_ROLES]
    ufm0, n_ufm = inv.span("ufm")[0], inv.count("ufm")
    devs.append(ufm0 + 2 * np.arange(n_ufm // 2))      # second port of each UFM HA pair
    a = np.concatenate(devs)
    n_sw = inv.count("oob")
    if not a.size or not n_sw:
        return []
    # OOB switches stand spread over the floor (a management ToR in the racks' reserved U);
    # devices in floor order fill them in floor order, so every Cat6 run stays short
    sw = oob_assignment(inv.rack_index[a], np.array([r.hall for r in inv.racks] + [1]), n_sw)
    return [LinkGroup("oob", "oob", a, rank_within(a) + 1, "bmc ", inv.span("oob")[0] + sw, None, 0,
                   "copper", None, 1.0)]
