"""The cabling map: every link of the design, port to port.

``build_cabling(inventory, design) -> list[Link]``; ``cabling_columns`` is the same map as
NumPy columns (what the CSV writer and the benchmarks use).

``Link`` fields (a NamedTuple, so it is immutable and cheap at 10^5-10^6 links):

============  =================================================================================
a_device      the lower end: node, UFM appliance, storage system, PDU ... or the lower switch
a_port        its port: ``mlx5_N`` compute NIC (N = plane x NICs-per-plane + NIC, 0-based,
              counted per tray on rack-scale systems; the N-th of the node model's
              ``compute_adapters`` where the catalog lists them, e.g. DGX H100 mlx5_0,3,4,...), ``storN`` / ``inbN`` storage and
              in-band NIC ports (1-based), ``bmcN`` OOB ports, ``ibN`` on a UFM appliance,
              ``pN`` on a storage system, a 1-based number on a switch
b_device      the upper end (always a switch)
b_port        its 1-based port number (leaf downlinks first, then uplinks)
kind          node-leaf, manager-leaf, leaf-leaf (BasePOD ISL), leaf-spine, spine-core,
              core-core (third to fourth tier of a 4-tier tree),
              storage-node, storage-system, storage-leaf-spine, storage-spine-core, inband, oob
fabric        compute, storage, inband, oob
plane         1-based compute-fabric plane (0 off the compute fabric)
media         copper | optical, from the design (``node_links_optical``, leaf-pair DACs)
cable         catalog cable id from the design: the compute fabric's ``copper_cable`` /
              ``fiber_cable`` (the storage fabric uses the same, as the BOM counts it),
              ``cat6-rj45`` for OOB, empty for in-band (the design names no in-band cable)
reach         in-rack | in-row | cross-row | inter-hall, from the two ends' racks (and halls)
cable_id      links sharing one physical cable share the id (twin-port node cages, leaf-pair
              DACs); distinct ids per fabric equal the design's cable counts; ids are unique
              across the site (fabrics are numbered one after the other)
gbps          link speed (in-band: the slower of the node's NIC and the in-band switch port)
length_m      routed length in metres (:mod:`clustertwin.design.site.cable_runs`: tray route,
              vertical runs, slack and service loops, from the devices' hall/row/rack/slot)
medium        the cheapest medium that reaches (``design/data/cable_media.yaml``): copper
              where the design cables in copper, optical elsewhere
part_number   the medium's orderable part(s)
max_length_m  the medium's reach; every ``length_m`` is at most this
============  =================================================================================

Counts equal the design's: node-leaf + manager links = ``fabric.node_leaf_links``,
leaf-spine (or ISL) = ``fabric.leaf_spine_links``, spine-core = ``fabric.spine_core_links``,
compute cable ids = ``fabric.cables``; storage fabric links = ``networks.storage.cables``;
in-band = ``networks.inband_links``; OOB = ``networks.oob_devices``.

Wiring rules: node ports land where ``ComputeFabric.port_map`` puts them; every leaf sends its
uplinks round-robin over the spines of its pod (each leaf meets every spine of the pod, the
SuperPOD rule); spine j of a pod feeds core (aggregation) group j, round-robin over the group's
switches starting at the pod's number (so a group whose size does not divide the uplinks still
loads its switches evenly; a partial pod with fewer spines spreads each spine over several
groups). In a 4-tier tree the "core" devices are the third tier (one per spine position and
pod, in super-pods of k/2 pods) followed by the fourth (a group per third-tier position),
joined by ``core-core`` links. Storage
and in-band node ports fill switches evenly in node order; OOB ports likewise in device order.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from clustertwin.design.site.cabling_networks import inband_links, oob_links, storage_links
from clustertwin.design.site.inventory import Inventory, pod_of_leaf, spine_pods
from clustertwin.design.site.link_groups import LinkGroup, as_index, rank_within


class Link(NamedTuple):
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    kind: str
    fabric: str
    plane: int
    media: str
    cable: str
    reach: str
    cable_id: int
    gbps: float
    length_m: float
    medium: str
    part_number: str
    max_length_m: float


FIELDS = Link._fields


def _node_links(inv: Inventory, cf) -> list[LinkGroup]:
    trays, q, rails = inv.trays_per_system, cf.planes, cf.rails
    pm = cf.port_map()
    n = cf.nodes
    node = np.repeat(np.arange(n), q * rails)
    plane = np.tile(np.repeat(np.arange(q), rails), n)
    rail = np.tile(np.arange(rails), n * q)
    # a node's ports (plane-major) are split evenly over its trays (rack-scale systems)
    port = plane * rails + rail
    per_tray = max(1, q * rails // trays)
    tray = np.minimum(port // per_tray, trays - 1)
    a = inv.span("node")[0] + node * trays + tray
    nic = port - tray * per_tray
    leaf0 = inv.span("leaf")[0]
    cable = None
    if cf.node_cables_per_node and q == 1:
        per_cable = max(1, rails // cf.node_cables_per_node)
        cable = node * cf.node_cables_per_node + rail // per_cable
    groups = [LinkGroup("node-leaf", "compute", a, nic, "mlx5_", leaf0 + pm[:, 0], pm[:, 1] + 1,
                     plane + 1, "optical" if cf.node_links_optical else "copper", cable,
                     cf.endpoint_gbps)]
    m = cf.manager_links
    ufm0, n_ufm = inv.span("ufm")[0], inv.count("ufm")
    if m and n_ufm:
        i = np.arange(m)
        l_su = cf.leaves_per_su
        last_nodes = cf.nodes - (cf.scalable_units - 1) * cf.su_nodes
        leaf = leaf0 + (cf.scalable_units - 1) * l_su + i % l_su
        port = last_nodes * cf.ports_per_node_per_leaf + i // l_su + 1
        groups.append(LinkGroup("manager-leaf", "compute", ufm0 + i % n_ufm, i // n_ufm + 1, "ib ",
                             leaf, port, 1, "optical", None, cf.endpoint_gbps))
    return groups


def _upper_links(inv: Inventory, cf) -> list[LinkGroup]:
    p, q = cf.plane, cf.planes
    leaf0, spine0, core0 = (inv.span(r)[0] for r in ("leaf", "spine", "core"))
    if p.leaf_spine_links == 0:
        return []
    if cf.leaf_pair or p.spine == 0:
        isl = p.leaf_spine_links
        i = np.tile(np.arange(isl), q)
        pl = np.repeat(np.arange(q), isl)
        port = p.leaf_down + i + 1
        return [LinkGroup("leaf-leaf", "compute", leaf0 + pl * p.leaf, port, "",
                       leaf0 + pl * p.leaf + 1, port, pl + 1, "copper",
                       pl * isl + i // max(1, cf.ports_per_cage) if cf.leaf_pair else None,
                       cf.endpoint_gbps)]
    u = p.leaf_spine_links // p.leaf
    pods = spine_pods(cf)
    ns = as_index([c for c, _ in pods])
    first = as_index([s for _, s in pods])
    local = np.arange(p.leaf)
    pod = np.minimum(pod_of_leaf(cf, local), len(pods) - 1)
    i = np.tile(np.arange(u), p.leaf)
    lf = np.repeat(local, u)
    spine_local = first[pod[lf]] + i % ns[pod[lf]]
    up_gbps = cf.pod.uplink_gbps if cf.pod is not None else cf.endpoint_gbps
    groups = []
    for pl in range(q):
        b = spine0 + pl * p.spine + spine_local
        groups.append(LinkGroup("leaf-spine", "compute", leaf0 + pl * p.leaf + lf,
                             p.leaf_down + i + 1, "", b, rank_within(b) + 1, pl + 1, "optical", None,
                             up_gbps))
    if p.core:
        down = np.bincount(spine_local, minlength=p.spine)
        groups += _core_links(inv, cf, pods, down, spine0, core0)
    return groups


def _core_links(inv, cf, pods, down, spine0, core0) -> list[LinkGroup]:
    p, q = cf.plane, cf.planes
    if cf.pod is not None:
        n_groups, c = cf.pod.spines_per_pod, cf.pod.aggregation_per_group
        ups = [cf.pod.spine_up] * (len(pods) - 1) + [cf.pod.last_spine_up]
        gbps = cf.pod.spine_gbps
    else:
        t3 = p.upper_tiers[0] if p.tiers >= 4 and p.upper_tiers else p.core
        n_groups, c = p.leaf_up, t3 // max(1, p.leaf_up)
        ups = [cf.radix // 2] * len(pods)
        gbps = cf.endpoint_gbps
    spine_l, link_i, span_l = [], [], []
    for (ns, start), up in zip(pods, ups, strict=True):
        spine_l.append(np.repeat(np.arange(start, start + ns), up))
        link_i.append(np.tile(np.arange(up), ns))
        span_l.append(np.full(ns * up, max(1, n_groups // ns)))
    s, i, span = np.concatenate(spine_l), np.concatenate(link_i), np.concatenate(span_l)
    j = s - np.repeat(as_index([st for _, st in pods]), [n * u for (n, _), u in zip(pods, ups,
                                                                              strict=True)])
    group = (j * span + i % span) % n_groups
    pod_of_spine = np.repeat(np.arange(len(pods)), [n for n, _ in pods])[s]
    if cf.pod is None and p.tiers >= 4:
        core_local = _third_tier(p, group, pod_of_spine, i // span, len(pods))
    else:
        # rotated by pod, so a group whose size does not divide the uplinks stays even
        core_local = group * c + (i // span + pod_of_spine) % c
    out = []
    for pl in range(q):
        b = core0 + pl * p.core + core_local
        out.append(LinkGroup("spine-core", "compute", spine0 + pl * p.spine + s,
                          down[s] + i + 1, "", b, rank_within(b) + 1, pl + 1, "optical", None, gbps))
    if cf.pod is None and p.tiers >= 4:
        out += _fourth_tier(cf, core0, gbps)
    return out


def _third_tier(p, position: np.ndarray, pod: np.ndarray, k: np.ndarray,
                pods: int) -> np.ndarray:
    """Plane-local index of the third-tier switch each spine uplink reaches (4-tier trees):
    per spine position one third-tier switch per pod, grouped in super-pods of k/2 pods; a
    spine spreads its uplinks over the switches of its position in its super-pod."""
    half = p.radix // 2
    sp = pod // half
    in_sp = np.minimum(half, pods - sp * half)
    # rotated by the pod's place in its super-pod: every third-tier switch takes k/2 links
    return position * pods + sp * half + (k + pod % half) % in_sp


def _fourth_tier(cf, core0: int, gbps: float) -> list[LinkGroup]:
    """Third-tier switch (position j, pod m of its super-pod) -> its group of fourth-tier
    switches (j, m), k/2 uplinks round-robin over the group."""
    p, q = cf.plane, cf.planes
    t3, t4 = p.upper_tiers[0], p.upper_tiers[1]
    half, pods = p.radix // 2, t3 // max(1, p.leaf_up)
    c4 = max(1, t4 // max(1, p.leaf_up * half))
    sw = np.repeat(np.arange(t3), half)
    i = np.tile(np.arange(half), t3)
    position, pod = np.divmod(sw, pods)
    target = t3 + (position * half + pod % half) * c4 + i % c4
    out = []
    for pl in range(q):
        a = core0 + pl * p.core + sw
        b = core0 + pl * p.core + target
        out.append(LinkGroup("core-core", "compute", a, half + i + 1, "", b, rank_within(b) + 1, pl + 1,
                          "optical", None, gbps))
    return out


def cabling_groups(inv: Inventory, design) -> list[LinkGroup]:
    cf = design.fabric
    return (_node_links(inv, cf) + _upper_links(inv, cf) + storage_links(inv, design)
            + inband_links(inv, design) + oob_links(inv, design))


def _cable(inv: Inventory, g: LinkGroup) -> str:
    """Catalog cable id: the fabric's copper / optical cable for compute and storage links
    (as the design's bill of materials counts them), RJ45 Cat6 for OOB, none for in-band."""
    if g.fabric == "oob":
        return "cat6-rj45"
    if g.fabric == "inband":
        return ""
    return inv.copper_cable if g.media == "copper" else inv.fiber_cable


def cabling_columns(inv: Inventory, design) -> dict[str, np.ndarray]:
    """The cabling map as columns named like :class:`Link`'s fields (object arrays for
    strings)."""
    from clustertwin.design.site.cable_runs import media_columns

    groups = cabling_groups(inv, design)
    a, b, copper, gbps, cable_id = _ends(groups)
    cols = _name_columns(inv, groups)
    cols["gbps"], cols["cable_id"] = gbps, cable_id
    length, pick = _runs(inv, groups, design, a, b, gbps, copper)
    cols["length_m"] = length
    cols.update(media_columns(pick))
    cols["cable"] = np.where(cols["cable"] == "", cols["medium"], cols["cable"])
    return {f: cols[f] for f in FIELDS}


def cable_runs(inv: Inventory, design) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(medium index into load_media(), cable_id, length_m)`` of every link, in the map's
    order: the numeric part of :func:`cabling_columns` (no names), which the design's cables
    by medium need."""

    groups = cabling_groups(inv, design)
    a, b, copper, gbps, cable_id = _ends(groups)
    length, pick = _runs(inv, groups, design, a, b, gbps, copper)
    return pick, cable_id, length


def _runs(inv: Inventory, groups: list[LinkGroup], design, a, b, gbps, copper):
    """(routed length, medium index) of every link: its class band's medium
    (:func:`class_media`), or for a design without classes the cheapest that reaches."""
    from clustertwin.design.rules import load_rules
    from clustertwin.design.site.cable_runs import lengths, runs

    if not design.cable_classes:
        return runs(inv, load_rules(), a, b, gbps, copper)
    length = lengths(inv, load_rules(), a, b)
    return length, class_media(inv, groups, design, length)


def class_media(inv: Inventory, groups: list[LinkGroup], design, length: np.ndarray) -> np.ndarray:
    """Each link's medium (index into load_media()): its class band's (``design.cable_classes``,
    the medium the bill of materials prices; :mod:`clustertwin.design.site.classes`), checked
    against the routed length."""
    from clustertwin.design.media import load_media
    from clustertwin.errors import InfeasibleError, Problem

    media = load_media()
    index = {m.id: i for i, m in enumerate(media)}
    # per kind: one medium, or (band by the lower end's rack) a table rack -> medium
    table: dict[str, np.ndarray | int] = {}
    n_racks = len(inv.racks)
    for c in design.cable_classes:
        if not c.racks:
            table[c.kind] = index[c.medium]
            continue
        lut = table.get(c.kind)
        if not isinstance(lut, np.ndarray):
            lut = table[c.kind] = np.full(n_racks + 1, -1, dtype=np.int64)
        lut[np.asarray(c.racks, dtype=np.int64)] = index[c.medium]
    parts = []
    for g in groups:
        if not g.a.size:
            continue
        t = table[g.kind]
        parts.append(t[inv.rack_index[g.a]] if isinstance(t, np.ndarray)
                     else np.full(g.a.size, t, dtype=np.int64))
    per_link = np.concatenate(parts) if parts else np.array([], dtype=np.int64)
    if (per_link < 0).any():
        raise InfeasibleError([Problem("<design>", "cabling", "a link starts in a rack its "
                                       "class's bands do not cover (a placement bug)")])
    reach = np.array([m.max_length_m for m in media])[per_link]
    over = np.flatnonzero(length > reach)
    if over.size:
        j = over[np.argmax(length[over] - reach[over])]
        raise InfeasibleError([Problem("<design>", "cabling",
            f"{over.size:,} link(s) run past their class's medium: the longest runs "
            f"{length[j]:,.1f} m on {media[per_link[j]].id} (reach {reach[j]:,.0f} m); nearest "
            "changes: smaller halls (design rule hall_max_racks / hall_max_it_kw) or a "
            "longer-reach medium in design/data/cable_media.yaml")])
    return per_link


def _ends(groups: list[LinkGroup]) -> tuple[np.ndarray, ...]:
    """``(a, b, copper, gbps, cable_id)`` of every link of ``groups``: the end devices'
    indices, copper flags, speeds and cable ids (numbered group after group)."""
    parts: list[tuple[np.ndarray, ...]] = []
    next_cable = 0
    for g in groups:
        n = g.a.size
        if not n:
            continue
        local = g.cable if g.cable is not None else np.arange(n)
        cid = next_cable + local
        next_cable = int(cid.max()) + 1
        parts.append((as_index(g.a), as_index(g.b), np.full(n, g.media == "copper"), np.full(n, float(g.gbps)),
                      as_index(cid)))
    if not parts:
        e = np.array([], dtype=np.int64)
        return e, e, np.array([], dtype=bool), np.array([], dtype=float), e
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(5))


def _name_columns(inv: Inventory, groups: list[LinkGroup]) -> dict[str, np.ndarray]:
    """The map's name and label columns (devices, ports, kind, fabric, plane, media, cable,
    reach) of ``groups``."""
    names = np.array([d.name for d in inv.devices], dtype=object)
    rack = inv.rack_index
    racks_row = np.array([r.row for r in inv.racks] + [0], dtype=np.int64)
    racks_hall = np.array([r.hall for r in inv.racks] + [0], dtype=np.int64)
    cols: dict[str, list] = {f: [] for f in FIELDS[:10]}
    # upper ends without fixed ports are numbered together: two groups may share a switch
    free = [g.b for g in groups if g.b_port is None]
    ranks = np.split(rank_within(np.concatenate(free)) + 1 if free else np.array([], np.int64),
                     np.cumsum([x.size for x in free])[:-1]) if free else []
    free_ports = iter(ranks)
    for g in groups:
        n = g.a.size
        b_port = g.b_port if g.b_port is not None else next(free_ports)
        if not n:
            continue
        ra, rb = rack[g.a], rack[g.b]
        same_row = (racks_row[ra] == racks_row[rb]) & (ra >= 0) & (rb >= 0)
        other_hall = (racks_hall[ra] != racks_hall[rb]) & (ra >= 0) & (rb >= 0)
        reach = np.where((ra == rb) & (ra >= 0), "in-rack",
                         np.where(same_row, "in-row",
                                  np.where(other_hall, "inter-hall", "cross-row"))).astype(object)
        a_port = np.char.add(g.a_prefix.replace(" ", ""), np.asarray(g.a_port).astype(str)) \
            if g.a_prefix else np.asarray(g.a_port).astype(str)
        ports = np.asarray(g.a_port)
        # the node model's device names, where they cover every port the design wires
        if g.kind == "node-leaf" and inv.compute_adapters and \
                (not ports.size or int(ports.max()) < len(inv.compute_adapters)):
            a_port = np.asarray(inv.compute_adapters, dtype=object)[ports]
        cols["a_device"].append(names[g.a])
        cols["a_port"].append(a_port.astype(object))
        cols["b_device"].append(names[g.b])
        cols["b_port"].append(np.asarray(b_port).astype(str).astype(object))
        cols["kind"].append(np.full(n, g.kind, dtype=object))
        cols["fabric"].append(np.full(n, g.fabric, dtype=object))
        cols["plane"].append(np.broadcast_to(np.asarray(g.plane, dtype=np.int64), (n,)))
        cols["media"].append(np.full(n, g.media, dtype=object))
        cols["cable"].append(np.full(n, _cable(inv, g), dtype=object))
        cols["reach"].append(reach)
    return {k: (np.concatenate(v) if v else np.array([], dtype=object)) for k, v in cols.items()}


def build_cabling(inventory: Inventory, design) -> list[Link]:
    """Every link of ``design`` between the devices of ``inventory`` (see module docstring)."""
    cols = cabling_columns(inventory, design)
    return list(map(Link._make, zip(*(cols[f].tolist() for f in FIELDS), strict=True)))
