"""Where hot spares go: inside the scalable units the job already fills, or outside them.

``inside`` (the default, ``cluster.spare_placement``): a spare takes a free node slot of a unit
the job's nodes already open, after the fabric manager's reserved slot (the DGX SuperPOD RA's
4-SU pod runs 127 DGX and one UFM on 128 slots, RA-11333-001 Table 4). A spare never opens a unit
of its own: a unit opened for one spare would add a whole SU of leaves and their spine links (at
1,024 H100: 40 leaves / 32 spines / 1,280 leaf-spine links instead of 32 / 16 / 1,024) and leave
the spare alone on switches a one-SU job cannot use. Spares that find no free slot are not
installed, and a note says how many and how to get them.

``outside``: every advised spare is installed; the units and switches they open are counted and
named in a note, and priced in the bill of materials like every other switch.
"""

from __future__ import annotations

from collections.abc import Callable


def place_spares(fabric_for: Callable[[int], object], job_nodes: int, wanted: int,
                 placement: str, reserved: int, leaf_sw, upper=None):
    """(compute fabric, spares installed, notes) for ``wanted`` spares beside ``job_nodes``.

    ``fabric_for(nodes)`` plans the compute fabric for that many nodes; ``reserved`` is the
    fabric's reserved (fabric-manager) slots per unit; ``leaf_sw`` / ``upper`` the switch
    entries of the leaves and the tiers above (for the price of switches spares add)."""
    base = fabric_for(job_nodes)
    if wanted <= 0:
        return base, 0, []
    if placement == "outside":
        return _outside(fabric_for, base, job_nodes, wanted, leaf_sw, upper or leaf_sw)
    slots = int(base.scalable_units) * int(base.su_nodes)
    held = reserved if base.managers_attached else 0
    fit = max(0, min(wanted, slots - job_nodes - held))
    cf = fabric_for(job_nodes + fit) if fit else base
    while fit and (cf.scalable_units != base.scalable_units or cf.switches != base.switches
                   or cf.cables != base.cables + _node_links_added(base, fit)):
        fit -= 1
        cf = fabric_for(job_nodes + fit) if fit else base
    notes = []
    if fit < wanted:
        notes.append(
            f"{wanted - fit} of the {wanted} advised hot spares find no free slot in the "
            f"{base.scalable_units} scalable unit(s) the job fills ({slots} slots, "
            f"{job_nodes} job nodes{f', {held} fabric-manager slot(s)' if held else ''}); a "
            "spare never opens a unit of its own, so "
            + (f"only {fit} spare(s) are installed" if fit else "none is installed")
            + "; set cluster.spare_placement: outside to add them on switches of their own, or "
            "run the job on fewer nodes (training.gpus)")
    elif fit:
        notes.append(f"{fit} hot spare(s) take free slots of the job's {base.scalable_units} "
                     "scalable unit(s): no switch is added for them")
    return cf, fit, notes


def _node_links_added(base, spares: int) -> int:
    """Node-to-leaf links ``spares`` more nodes add to the fabric (every rail of every plane)."""
    return spares * int(base.rails) * int(base.planes)


def _outside(fabric_for, base, job_nodes: int, wanted: int, leaf_sw, upper_sw):
    cf = fabric_for(job_nodes + wanted)
    added = [(cf.leaf - base.leaf, "leaf", leaf_sw), (cf.spine - base.spine, "spine", upper_sw),
             (cf.core - base.core, "core", upper_sw)]
    added = [(n, tier, sw) for n, tier, sw in added if n > 0]
    if not added:
        return cf, wanted, [f"{wanted} hot spare(s) outside the job's units fit free slots: "
                            "no switch is added for them"]
    usd = sum(n * float(getattr(sw, "price_usd", 0.0) or 0.0) for n, _, sw in added)
    what = ", ".join(f"{n} {tier}" for n, tier, _ in added)
    return cf, wanted, [
        f"{wanted} hot spare(s) placed outside the job's {base.scalable_units} scalable unit(s) "
        f"(cluster.spare_placement: outside) open {cf.scalable_units - base.scalable_units} "
        f"more unit(s): {what} switch(es) and {cf.cables - base.cables:,} more compute-fabric "
        f"cables, about ${usd:,.0f} of switches before optics, for spares a job confined to "
        "its own units' switches cannot use"]
