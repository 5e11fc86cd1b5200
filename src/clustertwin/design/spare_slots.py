"""Where hot spares go: inside the scalable units the installed nodes open, or outside them.

``inside`` (the default, ``cluster.spare_placement``): a spare takes a free node slot of a unit
the installed nodes already open, after the fabric manager's reserved slot (the DGX SuperPOD
RA's 4-SU pod runs 127 DGX and one UFM on 128 slots, RA-11333-001 Table 4). A spare never opens
a unit of its own: a unit opened for one spare would add a whole SU of leaves and their spine
links (at 1,024 H100: 40 leaves / 32 spines / 1,280 leaf-spine links instead of 32 / 16 / 1,024)
and leave the spare alone on switches a one-SU job cannot use. When the units are full, the
spares take slots of installed nodes instead: those nodes become the spares and the training job
runs on the others (the plan re-estimates the job on the GPUs left, see
``ClusterDesign.job_gpus_limit``).

``outside``: every advised spare is added beside the installed nodes; the units and switches
they open are counted and named in a note, and priced in the bill of materials like every other
switch.
"""

from __future__ import annotations

from clustertwin.design.fabric import FabricAsk, plan_compute_fabric


def place_spares(ask: FabricAsk, job_nodes: int, wanted: int, placement: str, *,
                 displace: bool = True):
    """(compute fabric, spares, job nodes left, notes) for ``wanted`` spares beside
    ``job_nodes`` installed nodes.

    The compute fabric is planned as ``ask`` says (:func:`.fabric.plan_compute_fabric`); its
    fabric's reserved (fabric-manager) slots per unit and its leaf / upper switches (the price
    of switches spares add) come from it too.
    ``displace=False`` (a cluster sized by a deadline, which the solver may grow freely) puts
    spares that find no free slot outside the units instead of on installed nodes' slots."""
    def fabric_for(nodes: int):
        return plan_compute_fabric(ask, nodes)

    reserved, leaf_sw, upper = int(ask.fabric.reserved_ports_per_su), ask.switch, ask.spine_switch
    base = fabric_for(job_nodes)
    if wanted <= 0:
        return base, 0, job_nodes, []
    if placement == "outside":
        cf, n, notes = _outside(fabric_for, base, job_nodes, wanted, leaf_sw, upper or leaf_sw)
        return cf, n, job_nodes, notes
    slots = int(base.scalable_units) * int(base.su_nodes)
    room = slots - job_nodes - (reserved if base.managers_attached else 0)
    if wanted <= room:
        cf = _same_units(fabric_for, base, job_nodes + wanted)
        if cf is not None:
            return cf, wanted, job_nodes, [
                f"{wanted} hot spare(s) take free slots of the {base.scalable_units} scalable "
                "unit(s) the nodes fill: no switch is added for them"]
    left = min(slots - wanted, job_nodes)
    cf = _same_units(fabric_for, base, left + wanted) if displace and left >= 1 else None
    if cf is None:
        cf, n, notes = _outside(fabric_for, base, job_nodes, wanted, leaf_sw, upper or leaf_sw)
        return cf, n, job_nodes, [
            f"the {base.scalable_units} scalable unit(s) have no free slot for the {wanted} hot "
            "spare(s) and the cluster is sized by its deadline, so they go outside the units: "
            + notes[0]]
    if left == job_nodes:                  # only the fabric managers' slot was given up
        return cf, wanted, left, [
            f"{wanted} hot spare(s) take the free slots of the {base.scalable_units} scalable "
            "unit(s), the fabric managers' reserved slot included (the UFM attaches outside "
            "the counted ports): no switch is added for them"]
    return cf, wanted, left, [
        f"the {base.scalable_units} scalable unit(s) hold {slots} node slots and the "
        f"{job_nodes} installed nodes fill them, so {wanted} of them serve as hot spare(s) "
        f"(a spare never opens a unit): the training job runs on the other {left} nodes; set "
        "cluster.spare_placement: outside to add the spares on switches of their own"]


def _same_units(fabric_for, base, nodes: int):
    """The fabric for ``nodes``, or None when it needs more units or switches than ``base``."""
    cf = fabric_for(nodes)
    if cf.scalable_units != base.scalable_units or cf.switches != base.switches:
        return None
    return cf


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
    usd = sum(n * float(sw.price_usd or 0.0) for n, _, sw in added)
    what = ", ".join(f"{n} {tier}" for n, tier, _ in added)
    return cf, wanted, [
        f"{wanted} hot spare(s) placed outside the job's {base.scalable_units} scalable unit(s) "
        f"(cluster.spare_placement: outside) open {cf.scalable_units - base.scalable_units} "
        f"more unit(s): {what} switch(es) and {cf.cables - base.cables:,} more compute-fabric "
        f"cables, about ${usd:,.0f} of switches before optics, for spares a job confined to "
        "its own units' switches cannot use"]
