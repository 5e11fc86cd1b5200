"""The fabric diagram: every tier of every plane as blocks with link counts and speeds on the
edges, one scalable unit drawn link by link, and the storage / in-band / OOB networks."""

from __future__ import annotations

from clustertwin.drawings.svgkit import line, rect, svg_open, text

_BW, _BH, _GAP, _TIER = 190.0, 46.0, 30.0, 110.0
_MAX_PLANES = 4          #: planes drawn one by one; more are drawn as one column "x N"
_MAX_SU_NODES = 32       #: nodes of the scalable unit drawn link by link
_TIER_COLOURS = {"nodes": "#4c78a8", "leaf": "#f58518", "spine": "#e45756",
                 "core": "#9d755d", "tier 4": "#7f3c8d"}


def _tiers(design) -> list[tuple[str, int, str]]:
    """(tier, switches per plane, model) from the bottom up, nodes first."""
    cf = design.fabric
    p = cf.plane
    out = [("nodes", cf.nodes, design.node_id), ("leaf", p.leaf, cf.switch_id)]
    if p.spine:
        out.append(("spine", p.spine, cf.upper_switch_id))
    uppers = list(p.upper_tiers) or ([p.core] if p.core else [])
    for i, n in enumerate(uppers):
        out.append(("core" if i == 0 else "tier 4", n, cf.upper_switch_id))
    return out


def _edges(design) -> list[tuple[int, float]]:
    """(links per plane, Gb/s) between consecutive tiers of :func:`_tiers`."""
    cf = design.fabric
    p = cf.plane
    up = cf.pod.uplink_gbps if cf.pod is not None else cf.endpoint_gbps
    top = cf.pod.spine_gbps if cf.pod is not None else cf.endpoint_gbps
    out = [(cf.nodes * cf.rails + (cf.manager_links // max(1, cf.planes)), cf.endpoint_gbps)]
    if p.spine:
        out.append((p.leaf_spine_links, up))
    uppers = list(p.upper_tiers) or ([p.core] if p.core else [])
    if len(uppers) == 2:
        t3_links = uppers[0] * (cf.radix // 2)
        out += [(p.spine_core_links - t3_links, top), (t3_links, top)]
    elif uppers:
        out.append((p.spine_core_links, top))
    return out


def topology_svg(design, name: str = "") -> str:
    """The compute fabric and the other networks of ``design`` (module docstring)."""
    cf = design.fabric
    tiers, edges = _tiers(design), _edges(design)
    cols = min(cf.planes, _MAX_PLANES)
    w = max(cols * (_BW + _GAP) + 40, 760)
    fabric_h = len(tiers) * _TIER + 60
    su_h = 240 if cf.leaf else 0
    h = fabric_h + su_h + 160
    out = svg_open(w, h, f"fabric diagram: {name or design.node_id}, {cf.tiers}-tier "
                   f"{cf.technology}, {cf.planes} plane(s)")
    out.append(text(20, 20, f"compute fabric: {cf.technology}, {cf.topology}, "
                    f"{cf.planes} plane(s), {cf.tiers} tier(s); "
                    f"{cf.leaf} leaf / {cf.spine} spine / {cf.core} core switches, "
                    f"{cf.cables:,} cables", size=12))
    for c in range(cols):
        label = (f"plane {c + 1}" if cf.planes <= _MAX_PLANES or c < cols - 1
                 else f"planes {c + 1}-{cf.planes} (each alike)")
        out += _plane_column(20 + c * (_BW + _GAP), fabric_h, tiers, edges, label)
    if cf.leaf:
        out += _one_su(design, fabric_h + 10, w)
    out += _networks(design, fabric_h + su_h + 20)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _plane_column(x: float, bottom: float, tiers, edges, label: str) -> list[str]:
    out = [text(x + _BW / 2, 40, label, anchor="middle", size=11)]
    ys = [bottom - 20 - (i + 1) * _TIER + (_TIER - _BH) for i in range(len(tiers))]
    for i, (tier, n, model) in enumerate(tiers):
        out.append(rect(x, ys[i], _BW, _BH, _TIER_COLOURS.get(tier, "#999"), cls="tier",
                        title=f"{tier}: {n:,} x {model}"))
        out.append(text(x + _BW / 2, ys[i] + 19, f"{tier}: {n:,}", anchor="middle",
                        fill="#fff", size=12))
        out.append(text(x + _BW / 2, ys[i] + 36, model, anchor="middle", fill="#fff", size=10))
    for i, (links, gbps) in enumerate(edges):
        if i + 1 >= len(tiers):
            break
        y1, y2 = ys[i], ys[i + 1] + _BH
        out.append(line(x + _BW / 2, y1, x + _BW / 2, y2, width=3))
        out.append(text(x + _BW / 2 + 6, (y1 + y2) / 2 + 4,
                        f"{links:,} links x {gbps:g} Gb/s", cls="edge", size=10))
    return out


def _one_su(design, y0: float, w: float) -> list[str]:
    """Scalable unit 1 of plane 1: each node's rails to its leaves, link by link."""
    cf = design.fabric
    nodes = min(cf.su_nodes, cf.nodes, _MAX_SU_NODES)
    leaves = max(1, cf.leaves_per_su)
    g = max(1, cf.ports_per_node_per_leaf)
    out = [text(20, y0 + 12, f"scalable unit 1, plane 1, link by link: {nodes} node(s)"
                f"{' (first 32 of ' + str(cf.su_nodes) + ')' if cf.su_nodes > nodes else ''}"
                f" x {cf.rails} rail(s) to {leaves} leaf switch(es), {cf.endpoint_gbps:g} Gb/s",
                size=11)]
    ly, ny = y0 + 40, y0 + 190
    lx = [40 + (i + 0.5) * (w - 80) / leaves for i in range(leaves)]
    nx = [40 + (i + 0.5) * (w - 80) / nodes for i in range(nodes)]
    for k in range(nodes):
        for rail in range(cf.rails):
            j = min(leaves - 1, rail // g)
            out.append(line(nx[k], ny, lx[j], ly + 24, stroke="#888", width=0.6))
    for j in range(leaves):
        out.append(rect(lx[j] - 30, ly, 60, 24, _TIER_COLOURS["leaf"], cls="su-leaf",
                        title=f"leaf {j + 1} of SU 1"))
        out.append(text(lx[j], ly + 16, f"leaf {j + 1}", anchor="middle", fill="#fff", size=9))
    for k in range(nodes):
        out.append(rect(nx[k] - 5, ny, 10, 16, _TIER_COLOURS["nodes"], cls="su-node",
                        title=f"node {k + 1} of SU 1"))
    return out


def _networks(design, y: float) -> list[str]:
    net = design.networks
    sf = net.storage
    boxes = [("storage fabric", f"{sf.leaf} leaf / {sf.spine} spine / {sf.core} core "
              f"{sf.switch_id}", f"{sf.cables:,} cables"),
             ("in-band", f"{net.inband_switches} x {net.inband_switch_id}",
              f"{net.inband_links:,} node links, bonded over 2 switches"),
             ("out-of-band", f"{net.oob_switches} x {net.oob_switch_id}",
              f"{net.oob_devices:,} BMC / management ports, 1 Gb/s")]
    out = [text(20, y, "other networks", size=12)]
    for i, (title, what, links) in enumerate(boxes):
        x = 20 + i * 250
        out.append(rect(x, y + 10, 235, 70, "#f0f0f0", cls="network", stroke="#333",
                        title=f"{title}: {what}, {links}"))
        out += [text(x + 8, y + 28, title, size=11), text(x + 8, y + 48, what, size=9),
                text(x + 8, y + 66, links, size=9)]
    return out
