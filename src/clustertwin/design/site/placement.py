"""Where the inventory puts things that follow the cabling (issue 22): leaves beside their
scalable units, OOB switches beside the devices they serve.

* :func:`leaf_rack_count` - network racks the compute-fabric leaves fill (the rest of the
  network racks form the spine / core block);
* :func:`leaf_spots` - each leaf in the leaf rack that follows its unit's compute racks;
* :func:`oob_assignment` / :func:`oob_near_devices` - OOB switches shared out to the halls and
  placed in the rack of the middle device they serve, so no Cat6 run crosses the site.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np


def spines_with_pods(cf) -> bool:
    """A plain tree of 3+ tiers: each pod's spines stand in its leaf racks (same switch model),
    so leaf-spine runs stay inside the pod's stretch of floor; only spine-core runs cross it."""
    return cf.pod is None and cf.core > 0 and not cf.tor


def leaf_rack_count(design, catalog, rules) -> int:
    """Network racks the compute-fabric leaves (and, by :func:`spines_with_pods`, the pods'
    spines) fill; 0 for top-of-rack leaves."""
    cf = design.fabric
    if cf.tor or not cf.leaf:
        return 0
    sw = catalog.get("switch", cf.switch_id) if catalog.has("switch", cf.switch_id) else None
    ru = float(sw.rack_units or 1)
    n = cf.leaf + (cf.spine if spines_with_pods(cf) else 0)
    return math.ceil(n * ru / rules.num("network_rack_switch_ru"))


def leaf_spots(cf, placer, leaf_local: np.ndarray) -> list:
    """Each leaf in the leaf rack that follows its scalable unit's compute racks (every plane's
    leaves of a unit together), so node-leaf runs stay inside the unit's stretch of row."""
    pool = [r for r in placer.racks if r.kind == "network" and r.tier == "leaf"]
    if not pool:
        return placer.place(("network",), leaf_local.size)
    sus = max(1, cf.scalable_units)
    lr = len(pool)
    out: list = []
    for local in leaf_local.tolist():
        k = min(sus - 1, int(local) // max(1, cf.leaves_per_su))
        after, before = round((k + 1) * lr / sus), round(k * lr / sus)
        rack = pool[min(lr - 1, after - 1 if after > before else after)]
        slot = placer.next_slot.get(rack.name, 0) + 1
        placer.next_slot[rack.name] = slot
        out.append((rack, slot))
    return out


#: roles with an out-of-band (BMC / management) port, in the order the OOB cabling takes them
OOB_ROLES = ("node", "nvswitch", "leaf", "spine", "core", "storage-leaf", "storage-spine",
             "storage-core", "inband", "management", "ufm", "pdu")


def switches_per_hall(counts: np.ndarray, n_sw: int) -> np.ndarray:
    """``n_sw`` switches shared out to halls holding ``counts`` devices: largest remainder, at
    least one per hall while switches last (the OOB rule of :func:`oob_assignment`)."""
    share = counts * n_sw / int(counts.sum())
    per = np.maximum(np.minimum(1, n_sw // max(1, counts.size)), np.floor(share)).astype(int)
    while per.sum() < n_sw:
        per[np.argmax(share - per)] += 1
    while per.sum() > n_sw:
        per[np.argmax(per)] -= 1
    return per


def oob_assignment(rack_idx: np.ndarray, rack_hall: np.ndarray, n_sw: int) -> np.ndarray:
    """OOB switch (0-based) of each device given its rack index (-1 = unracked): switches are
    shared out to the halls by their devices (largest remainder, at least one per hall while
    switches last), and within a hall devices in floor order fill its switches in order."""
    n = rack_idx.size
    out = np.zeros(n, dtype=np.int64)
    if not n or n_sw <= 0:
        return out
    hall = np.where(rack_idx >= 0, rack_hall[np.maximum(rack_idx, 0)], 1)
    halls, counts = np.unique(hall, return_counts=True)
    per = switches_per_hall(counts, n_sw)
    first = np.r_[0, np.cumsum(per)[:-1]]
    for h, k0, m in zip(halls.tolist(), first.tolist(), per.tolist(), strict=True):
        sel = np.flatnonzero(hall == h)
        order = sel[np.argsort(rack_idx[sel], kind="stable")]
        out[order] = k0 + (np.arange(order.size) * max(1, m)) // order.size if m else \
            min(n_sw - 1, k0)
    return out


def oob_near_devices(devices: list, spans, racks, rack_index: np.ndarray, placer) -> None:
    """Moves each OOB switch into the rack of the middle device it serves
    (:func:`oob_assignment`), so no Cat6 run crosses the site."""
    span = {r: (a, b) for r, a, b in spans}
    a_o, b_o = span.get("oob", (0, 0))
    n_sw = b_o - a_o
    if not n_sw:
        return
    idx = np.concatenate([np.arange(*span.get(r, (0, 0))) for r in OOB_ROLES])
    ri = rack_index[idx]
    sw = oob_assignment(ri, np.array([r.hall for r in racks] + [1]), n_sw)
    keep = ri >= 0
    order = np.lexsort((ri[keep], sw[keep]))
    sw_sorted, ri_sorted = sw[keep][order], ri[keep][order]
    bounds = np.searchsorted(sw_sorted, np.arange(n_sw + 1))
    for k in range(n_sw):
        mine = ri_sorted[bounds[k]:bounds[k + 1]]
        if not mine.size:
            continue
        at = int(mine[(mine.size - 1) // 2])
        rack = racks[at]
        slot = placer.next_slot.get(rack.name, 0) + 1
        placer.next_slot[rack.name] = slot
        devices[a_o + k] = replace(devices[a_o + k], rack=rack.name, slot=slot, row=rack.row)
        rack_index[a_o + k] = at
