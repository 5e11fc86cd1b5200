"""The cabling map by link class, in closed form: what the design's bill of materials prices
without placing the site (issue 36).

A link class is one ``kind`` of the cabling map (node-leaf, manager-leaf, leaf-leaf,
leaf-spine, spine-core, core-core, storage-node, storage-system, storage-leaf-spine,
storage-spine-core, inband, oob; :mod:`clustertwin.design.site.cabling`). For each class this
module counts, from the design's own figures and the wiring rules of the map:

* ``links`` and ``cables`` (links sharing a physical cable count once), equal to the placed
  map's by construction (tested against it across sizes, node types and fabrics);
* ``bound_m``, the longest run any link of the class can have on this floor
  (:mod:`clustertwin.design.site.class_reach`), and from it
* ``medium``: the cheapest medium whose speed range holds the class's speed and whose reach
  covers ``bound_m`` (copper only where the design cables the class in copper). The big
  classes (:mod:`clustertwin.design.site.class_racks`) are split into bands by the rack of
  their lower ends: the links one rack sends to one tier take the medium that rack's longest
  run needs, one part per rack and tier. That makes the bill of materials and ``cabling.csv``
  count the same parts without routing every cable. A class no medium reaches takes the
  longest-reach medium of its speed (the design warns; the placed map refuses the links past
  its reach, as before).

Counting is O(racks + nodes + switches), never O(links); the site is placed (inventory, routed lengths) only
when an export, a drawing or ``plan --cabling`` asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clustertwin.design.site.placement import OOB_ROLES

#: link classes in the cabling map's order
KINDS = ("node-leaf", "manager-leaf", "leaf-leaf", "leaf-spine", "spine-core", "core-core",
         "storage-node", "storage-system", "storage-leaf-spine", "storage-spine-core",
         "inband", "oob")


@dataclass(frozen=True)
class CableClass:
    """The links of one class and the cables and medium they take."""

    kind: str
    fabric: str        #: compute | storage | inband | oob
    links: int
    cables: int
    gbps: float
    copper: bool       #: the design cables it in copper (copper media allowed)
    bound_m: float     #: longest run a link of the class (band) can have on this floor (m)
    medium: str        #: the cable medium (design/data/cable_media.yaml id)
    #: the racks of the lower ends this band covers (floor order, as the inventory numbers
    #: them); () = every link of the kind
    racks: tuple[int, ...] = ()


@dataclass(frozen=True)
class _Count:
    """Links and cables of one class, before the medium is chosen."""

    kind: str
    fabric: str
    links: int
    cables: int
    gbps: float
    copper: bool


def cable_classes(design, catalog) -> tuple[CableClass, ...]:
    """Every link class of ``design`` with its links, cables, longest run and medium; a big
    class (:func:`~clustertwin.design.site.class_racks.rack_items`) comes as one band per
    medium its racks need, each rack's links taking the medium of the rack's longest run."""
    from clustertwin.design.media import load_media
    from clustertwin.design.site.class_reach import Floor

    counts = [c for c in class_counts(design, catalog) if c.links > 0]
    floor = Floor.of(design, catalog)
    media = load_media()
    out: list[CableClass] = []
    for c in counts:
        bands = _bands(floor, c, media, catalog)
        if bands is None:
            bound = floor.bound_m(c.kind)
            bands = [CableClass(c.kind, c.fabric, c.links, c.cables, c.gbps, c.copper, bound,
                                pick_medium(media, c.gbps, bound, c.copper).id)]
        out += bands
    return tuple(out)


def _bands(floor, c: _Count, media, catalog) -> list[CableClass] | None:
    """Class ``c`` as one band per medium of its racks; None when it is bounded as a whole."""
    from clustertwin.design.site.class_racks import pick_media, rack_items

    items = rack_items(floor, c.kind, catalog)
    if items is None:
        return None
    rack, links, cables, runs = items
    if int(links.sum()) != c.links or int(cables.sum()) != c.cables:
        return None                     # the racks do not hold the class: bound it as a whole
    pick = pick_media(media, c.gbps, runs, c.copper)
    out = []
    for i in np.unique(pick).tolist():
        sel = pick == i
        out.append(CableClass(c.kind, c.fabric, int(links[sel].sum()), int(cables[sel].sum()),
                              c.gbps, c.copper, round(float(runs[sel].max()), 1), media[i].id,
                              tuple(rack[sel].tolist())))
    return out


def pick_medium(media, gbps: float, bound_m: float, copper: bool):
    """The cheapest medium (``media`` is cheapest first) for ``gbps`` that reaches ``bound_m``;
    none reaching, the longest-reach medium of that speed."""
    from clustertwin.design.site.class_racks import pick_media

    return media[int(pick_media(media, gbps, np.array([bound_m]), copper)[0])]


def class_counts(design, catalog) -> list[_Count]:
    """Links and cables of every class, as the cabling map wires them."""
    return _compute_counts(design) + _network_counts(design, catalog)


def _distinct(ids_per: int, stride: int, blocks: int) -> int:
    """Distinct ids ``b * stride + o`` for blocks b < ``blocks`` and offsets o < ``ids_per``."""
    if blocks <= 0 or ids_per <= 0:
        return 0
    return (blocks - 1) * stride + ids_per if ids_per >= stride else blocks * ids_per


def _compute_counts(design) -> list[_Count]:
    cf = design.fabric
    p, q = cf.plane, cf.planes
    out = []
    if cf.leaf:
        links = cf.nodes * q * cf.rails
        cables = links
        if cf.node_cables_per_node and q == 1:
            per_cable = max(1, cf.rails // cf.node_cables_per_node)
            cables = _distinct((cf.rails - 1) // per_cable + 1, cf.node_cables_per_node, cf.nodes)
        out.append(_Count("node-leaf", "compute", links, cables, cf.endpoint_gbps,
                          not cf.node_links_optical))
        if cf.manager_links and design.networks.ufm_appliances:
            out.append(_Count("manager-leaf", "compute", cf.manager_links, cf.manager_links,
                              cf.endpoint_gbps, False))
    if p.leaf_spine_links == 0:
        return out
    if cf.leaf_pair or p.spine == 0:
        isl = p.leaf_spine_links
        cables = (q * -(-isl // max(1, cf.ports_per_cage)) if cf.leaf_pair else isl * q)
        return out + [_Count("leaf-leaf", "compute", isl * q, cables, cf.endpoint_gbps, True)]
    ls = p.leaf_spine_links // p.leaf * p.leaf * q
    up_gbps = cf.pod.uplink_gbps if cf.pod is not None else cf.endpoint_gbps
    out.append(_Count("leaf-spine", "compute", ls, ls, up_gbps, False))
    if p.core:
        from clustertwin.design.site.inventory import spine_pods

        pods = spine_pods(cf)
        if cf.pod is not None:
            ups = [cf.pod.spine_up] * (len(pods) - 1) + [cf.pod.last_spine_up]
            gbps = cf.pod.spine_gbps
        else:
            ups, gbps = [cf.radix // 2] * len(pods), cf.endpoint_gbps
        sc = sum(ns * u for (ns, _), u in zip(pods, ups, strict=True)) * q
        out.append(_Count("spine-core", "compute", sc, sc, gbps, False))
        if cf.pod is None and p.tiers >= 4:
            cc = p.upper_tiers[0] * (p.radix // 2) * q
            out.append(_Count("core-core", "compute", cc, cc, gbps, False))
    return out


def _network_counts(design, catalog) -> list[_Count]:
    """Storage-fabric, in-band and OOB classes (:mod:`clustertwin.design.site.cabling_networks`)."""
    node = catalog.node(design.node_id)
    net = design.networks
    sf = net.storage
    gbps = float(node.storage_nic_gbps or 0.0)
    systems = sum(t.blocks for t in design.storage.tiers if t.system_id is not None and t.blocks > 0)
    ports = design.nodes * int(node.storage_nics)
    out = []
    if sf.converged or sf.leaf == 0:
        if sf.storage_links and systems and net.inband_switches:
            out.append(_Count("storage-system", "storage", sf.storage_links, sf.storage_links,
                              gbps, False))
    else:
        n = min(sf.node_links, ports)
        out.append(_Count("storage-node", "storage", n, n, gbps, False))
        if sf.storage_links and systems:
            out.append(_Count("storage-system", "storage", sf.storage_links, sf.storage_links,
                              gbps, False))
        if sf.spine:
            out.append(_Count("storage-leaf-spine", "storage", sf.leaf_spine_links,
                              sf.leaf_spine_links, gbps, False))
            if sf.core and sf.spine_core_links:
                n = sf.spine_core_links // sf.spine * sf.spine
                out.append(_Count("storage-spine-core", "storage", n, n, gbps, False))
    if net.inband_links and net.inband_switches:
        n = min(net.inband_links, ports)
        port = _inband_port_gbps(catalog, net.inband_switch_id)
        speed = (min(gbps, port) if gbps else port) if port else gbps
        out.append(_Count("inband", "inband", n, n, speed, False))
    if net.oob_switches:
        n = sum(oob_device_counts(design, catalog).values()) + net.ufm_appliances // 2
        if n:
            out.append(_Count("oob", "oob", n, n, 1.0, True))
    return out


def _inband_port_gbps(catalog, switch_id: str) -> float:
    if not switch_id or not catalog.has("switch", switch_id):
        return 0.0
    return float(catalog.get("switch", switch_id).port_gbps)


def oob_device_counts(design, catalog) -> dict[str, int]:
    """Devices with an OOB port, by role (as the inventory holds them)."""
    from clustertwin.design.rules import load_rules
    from clustertwin.design.site.inventory import trays_per_system

    node = catalog.node(design.node_id)
    trays = trays_per_system(node, load_rules())
    cf, net, rc = design.fabric, design.networks, design.rack_counts
    sf = net.storage
    q = cf.planes
    racks = {"compute": rc.compute, "network": rc.network, "management": rc.management,
             "storage": rc.storage}
    pdus = sum(n for kind, n in design.power.pdus_by_kind if n > 0 and racks.get(kind, 0) > 0)
    counts = {"node": design.nodes * trays,
              "nvswitch": design.nodes * (trays // 2) if node.rack_scale and trays > 1 else 0,
              "leaf": cf.plane.leaf * q, "spine": cf.plane.spine * q, "core": cf.plane.core * q,
              "storage-leaf": sf.leaf, "storage-spine": sf.spine, "storage-core": sf.core,
              "inband": net.inband_switches, "management": net.management_servers,
              "ufm": net.ufm_appliances, "pdu": pdus}
    assert set(counts) == set(OOB_ROLES)
    return counts
