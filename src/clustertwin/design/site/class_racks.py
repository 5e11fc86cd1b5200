"""The big link classes rack by rack (issue 36): for every rack a class's lower ends stand in,
its links, cables and longest run, so each rack's links of a class take the medium that rack's
longest run needs rather than the whole site's.

Node-leaf, storage-node and in-band links start at the nodes (a compute rack), leaf-spine at
the leaves (a leaf rack or, top-of-rack, a compute rack) and spine-core at the spines. Lengths
follow :mod:`clustertwin.design.site.class_reach` (each end at the lowest slot its role uses,
the farthest rack the other end can stand in); the cabling map finds each link's band by its
lower end's rack. The other classes are small or bounded as a whole (:func:`rack_items` gives
None for them).
"""

from __future__ import annotations

import numpy as np

from clustertwin.design.site.class_reach import End, Floor
from clustertwin.design.site.placement import switches_per_hall


def _routed(floor: Floor, run: np.ndarray) -> np.ndarray:
    g = floor.geo
    return run * (1.0 + g.slack_frac) + 2 * g.loop_m


def pair_runs(floor: Floor, a_racks: np.ndarray, b_racks: np.ndarray, a: End, b: End) -> np.ndarray:
    """Longest run of each (rack of a, rack of b) pair."""
    g = floor.geo
    top = g.rack_height_m + g.tray_m
    across = np.abs(floor.x[a_racks] - floor.x[b_racks]) + np.abs(floor.y[a_racks] - floor.y[b_racks])
    between = (top - a.z_lo) + across + (top - b.z_lo)
    inside = max(a.z_hi - b.z_lo, b.z_hi - a.z_lo, 0.0)
    return _routed(floor, np.where(a_racks == b_racks, inside, between))


def set_runs(floor: Floor, a_racks: np.ndarray, a: End, b: End) -> np.ndarray:
    """Longest run from each rack of ``a_racks`` to any rack of ``b`` (the tray route between
    racks is never shorter than the run inside one, so it bounds both)."""
    g = floor.geo
    top = g.rack_height_m + g.tray_m
    best = np.full(a_racks.size, -np.inf)
    xa, ya, xb, yb = floor.x[a_racks], floor.y[a_racks], floor.x[b.racks], floor.y[b.racks]
    for sx, sy in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        best = np.maximum(best, sx * xa + sy * ya + float((-(sx * xb + sy * yb)).max()))
    return _routed(floor, (top - a.z_lo) + best + (top - b.z_lo))


def rack_items(floor: Floor, kind: str, catalog) -> tuple[np.ndarray, ...] | None:
    """(rack, links, cables, longest run) per lower-end rack of class ``kind``; None for a class
    bounded as a whole."""
    d, e = floor.design, floor.ends
    cf = d.fabric
    p, q = cf.plane, cf.planes
    if kind == "node-leaf" and not floor.leaf_fallback and cf.leaf:
        n = cf.nodes
        rack = floor.node_rack[np.minimum(np.arange(n), floor.node_rack.size - 1)]
        first = np.minimum(np.arange(n) // max(1, cf.su_nodes) * cf.leaves_per_su, p.leaf - 1)
        links = np.full(n, q * cf.rails)
        cables = links
        if cf.node_cables_per_node and q == 1:
            per = (cf.rails - 1) // max(1, cf.rails // cf.node_cables_per_node) + 1
            if per > cf.node_cables_per_node:
                return None             # cables shared across nodes: bounded as a whole
            cables = np.full(n, per)
        return _by_rack(rack, links, cables,
                        pair_runs(floor, rack, floor.leaf_rack[first], e["node"], e["leaf"]))
    if kind == "leaf-spine" and not floor.leaf_fallback and p.spine and not cf.leaf_pair:
        u = np.full(p.leaf * q, p.leaf_spine_links // p.leaf)
        rack = floor.leaf_rack
        runs = (pair_runs(floor, rack, np.tile(floor.pod_rack, q), e["leaf"], e["spine"])
                if floor.pod_rack is not None else set_runs(floor, rack, e["leaf"], e["spine"]))
        return _by_rack(rack, u, u, runs)
    if kind == "spine-core":
        per = floor.spine_core_runs()
        if per is None:
            return None
        idx, runs, up = per
        return _by_rack(floor.spine_rack[idx], up, up, runs)
    if kind in ("storage-node", "inband"):
        return _node_ports(floor, kind, catalog)
    if kind == "oob":
        return _oob(floor)
    return None


def _node_ports(floor: Floor, kind: str, catalog) -> tuple[np.ndarray, ...]:
    """Storage-node / in-band: the first ``links`` storage NIC ports in node order, each to the
    switch :mod:`clustertwin.design.site.cabling_networks` wires it to (storage: node leaves
    filled evenly in port order; in-band: nodes spread evenly over the switches, a node's port
    j one switch further along)."""
    from clustertwin.design.site.link_groups import spread_over

    d = floor.design
    nics = max(1, int(catalog.node(d.node_id).storage_nics))
    net = d.networks
    sf = net.storage
    total = min(sf.node_links if kind == "storage-node" else net.inband_links, d.nodes * nics)
    systems = -(-total // nics)
    s = np.arange(systems)
    links = np.minimum(nics, total - s * nics)
    # the switches of a node's ports, one candidate array per offset (a node's ports reach a
    # few neighbouring switches): storage ports fill the node leaves in port order; in-band
    # port j of a node goes j % (ports per tray) switches past the node's own
    if kind == "storage-node":
        leaves = max(1, sf.leaf - sf.storage_leaves)
        first = s * nics * leaves // max(1, total)
        last = (s * nics + links - 1) * leaves // max(1, total)
        cands = [floor.storage_leaf_rack[np.minimum(first + k, last)]
                 for k in range(int((last - first).max()) + 1 if systems else 0)]
        far = floor.ends["storage-switch"]
    else:
        n_sw = max(1, net.inband_switches)
        per = max(1, nics // floor.trays)
        own = spread_over(systems, n_sw)
        cands = [floor.inband_rack[(own + np.minimum(k, links - 1)) % n_sw]
                 for k in range(min(per, nics))]
        far = floor.ends["inband"]
    rack = floor.node_rack[s]
    runs = np.full(systems, -np.inf)
    for b in cands:
        runs = np.maximum(runs, pair_runs(floor, rack, b, floor.ends["node"], far))
    return _by_rack(rack, links, links, runs)


def _oob(floor: Floor) -> tuple[np.ndarray, ...] | None:
    """OOB: every device's BMC port to the switch that serves it. Within a hall the devices in
    floor order fill the hall's switches in order, and each switch stands in the rack of its
    middle device (:func:`~clustertwin.design.site.placement.oob_assignment`,
    ``oob_near_devices``); counted per rack, never per device."""
    d, q = floor.design, floor.design.fabric.planes
    n_sw = d.networks.oob_switches
    racks = floor.x.size
    count = np.bincount(floor.node_rack, minlength=racks) * floor.trays
    node = floor.catalog_node
    if node.rack_scale and floor.trays > 1:
        count += np.bincount(floor.node_rack, minlength=racks) * (floor.trays // 2)
    count += np.bincount(floor.leaf_rack[:d.fabric.plane.leaf * q], minlength=racks)
    for r in (floor.spine_rack, floor.core_rack, *floor.oob_devices):
        count += np.bincount(r, minlength=racks)
    if not n_sw or not count.sum():
        return None
    sw = _oob_switches(floor.hall, count, n_sw)
    if sw is None:
        return None
    first, last, at = sw
    end = End(np.arange(racks), 0.0, floor.geo.rack_height_m + floor.geo.ru_m)
    runs = np.full(racks, -np.inf)
    for k in range(int((last - first).max()) + 1):
        runs = np.maximum(runs, pair_runs(floor, np.arange(racks), at[np.minimum(first + k, last)],
                                          end, end))
    has = count > 0
    return _by_rack(np.flatnonzero(has), count[has], count[has], runs[has])


def _oob_switches(hall: np.ndarray, count: np.ndarray, n_sw: int):
    """(first switch, last switch) of each rack's devices and the rack of every switch, from
    the devices per rack (racks of a hall are consecutive in floor order)."""
    halls = np.unique(hall[count > 0])
    per_hall = np.array([int(count[hall == h].sum()) for h in halls])
    per = switches_per_hall(per_hall, n_sw)
    first_sw = np.r_[0, np.cumsum(per)[:-1]]
    lo = np.zeros(count.size, dtype=np.int64)
    hi = np.zeros(count.size, dtype=np.int64)
    at = np.zeros(n_sw, dtype=np.int64)
    for h, k0, m, total in zip(halls.tolist(), first_sw.tolist(), per.tolist(), per_hall.tolist(),
                               strict=True):
        if not m:
            return None                 # a hall without its own switch: bounded site-wide
        idx = np.flatnonzero(hall == h)
        end = np.cumsum(count[idx])
        start = end - count[idx]
        lo[idx] = k0 + (start * m) // total
        hi[idx] = k0 + (np.maximum(start, end - 1) * m) // total
        # switch j's devices: positions i with i * m // total == j; it stands at the middle one
        j = np.arange(m)
        p0 = -(-(j * total) // m)
        p1 = -(-((j + 1) * total) // m) - 1
        middle = p0 + (p1 - p0) // 2
        at[k0:k0 + m] = idx[np.searchsorted(end, middle, side="right")]
    return lo, hi, at


def _by_rack(rack: np.ndarray, links: np.ndarray, cables: np.ndarray,
             runs: np.ndarray) -> tuple[np.ndarray, ...]:
    """Items summed per rack (longest run: the rack's largest)."""
    if rack.size and bool((rack[1:] >= rack[:-1]).all()):      # racks in order: no sort
        start = np.r_[0, np.flatnonzero(rack[1:] != rack[:-1]) + 1]
        n = np.add.reduceat(links, start)
        keep = n > 0
        return (rack[start][keep], n[keep], np.add.reduceat(cables, start)[keep],
                np.maximum.reduceat(runs, start)[keep])
    u, inv = np.unique(rack, return_inverse=True)
    n = np.bincount(inv, weights=links, minlength=u.size).astype(np.int64)
    c = np.bincount(inv, weights=cables, minlength=u.size).astype(np.int64)
    longest = np.full(u.size, -np.inf)
    np.maximum.at(longest, inv, runs)
    keep = n > 0
    return u[keep], n[keep], c[keep], longest[keep]


def pick_media(media, gbps: float, runs: np.ndarray, copper: bool) -> np.ndarray:
    """Index into ``media`` (cheapest first) of the cheapest medium for ``gbps`` reaching each
    run; none reaching, the longest-reach medium of that speed."""
    fits = [i for i, m in enumerate(media) if m.min_gbps <= gbps <= m.max_gbps
            and (copper or not m.copper)]
    if not fits:
        fits = [i for i, m in enumerate(media) if m.min_gbps <= gbps <= m.max_gbps] or \
            list(range(len(media)))
    longest = max(fits, key=lambda i: media[i].max_length_m)
    pick = np.full(runs.shape, longest, dtype=np.int64)
    for i in reversed(fits):                     # cheapest last, so it wins
        pick[runs <= media[i].max_length_m] = i
    return pick
