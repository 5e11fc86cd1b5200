"""The design expanded into named things: the one source every export reads.

``build_inventory(scenario, catalog, design, naming=Naming()) -> Inventory``.

What is in it (names per :mod:`clustertwin.design.site.naming`):

* **racks** in rows of ``racks_per_row`` (design rule), filled in order (row 1 position 1
  onwards): each scalable unit's compute racks followed by its share of the network racks,
  then the management and storage racks (:func:`rack_kinds`).
* **nodes**: the schedulable nodes. A rack-scale system (GB200 NVL72) is expanded into its
  compute trays (``compute_nics / rack_scale_ports_per_tray`` = 18 trays of 4 GPUs), all in one
  NVLink domain, plus its NVLink switch trays (role ``nvswitch``). Each node carries its rack,
  slot, row, scalable unit (SU), pod, NVLink domain, GPUs and whether it is a hot spare (the
  last ``spare_nodes`` systems). Serial numbers are not known at design time (left empty).
* **compute fabric** leaves / spines / cores per plane (``fabric`` = compute), numbered plane by
  plane in the order of ``ComputeFabric.port_map`` (leaf = plane, SU, rail group).
  Top-of-rack leaves sit in their compute rack; the other switches fill the network racks.
* **storage fabric**, **in-band** and **OOB** switches, fabric-manager (UFM) appliances,
  management servers (management racks), storage systems (storage racks), PDUs (per rack, by
  kind), CDUs (in-row, on the compute rows).

Devices of one role are contiguous in ``Inventory.devices``; ``span(role)`` gives their index
range, which the cabling map uses to stay vectorized.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from clustertwin.design.site.naming import Naming
from clustertwin.design.site.placement import (
    leaf_rack_count,
    leaf_spots,
    oob_near_devices,
    spines_with_pods,
)


@dataclass(frozen=True)
class Rack:
    """One placed rack: its name, kind, row and position."""

    name: str
    kind: str          #: compute | network | management | storage
    row: int           #: 1-based, numbered across the site
    position: int      #: 1-based, along the row
    hall: int = 1      #: 1-based data hall (design.floor.hall_of_row)
    tier: str = ""     #: network racks: "leaf" (beside their units) or "spine" (network block)


@dataclass(frozen=True)
class Device:
    """One named thing. Unknown or not-applicable fields are 0 / "" (``su``, ``pod``,
    ``plane`` and ``nvlink_domain`` are 1-based when set)."""

    name: str
    role: str          #: node nvswitch leaf spine core storage-leaf ... inband oob ufm ...
    model: str         #: catalog id ("" when the catalog has none)
    rack: str = ""
    slot: int = 0      #: position inside the rack, 1-based (0 = not racked, e.g. a CDU)
    row: int = 0
    su: int = 0
    pod: int = 0
    plane: int = 0
    nvlink_domain: int = 0
    gpus: int = 0
    spare: bool = False
    serial: str = ""   #: placeholder: unknown until the hardware arrives


@dataclass(frozen=True, eq=False)
class Inventory:
    """The placed site: racks, devices and the index ranges of each role."""

    name: str
    racks: tuple[Rack, ...]
    devices: tuple[Device, ...]
    spans: tuple[tuple[str, int, int], ...]     #: (role, first index, end index)
    gpus_per_node: int                          #: per schedulable node (a tray for NVL72)
    trays_per_system: int                       #: 1, or compute trays per rack-scale system
    node_model: str
    gpu_model: str
    storage_nics: int                           #: storage / in-band ports per catalog node
    storage_nic_gbps: float
    fiber_cable: str                            #: catalog cable id of optical fabric links
    copper_cable: str                           #: catalog cable id of copper (DAC) links
    rack_index: np.ndarray = field(repr=False)  #: rack index of every device (-1 = none)
    node_ru: float = 0.0                        #: rack units of one schedulable node (tray)
    inband_gbps: float = 0.0                    #: in-band switch port speed (catalog)
    #: the node model's compute adapter names in rail order (catalog), () = mlx5_0..N-1
    compute_adapters: tuple[str, ...] = ()

    def span(self, role: str) -> tuple[int, int]:
        for r, a, b in self.spans:
            if r == role:
                return a, b
        return 0, 0

    def role(self, role: str) -> tuple[Device, ...]:
        a, b = self.span(role)
        return self.devices[a:b]

    @property
    def nodes(self) -> tuple[Device, ...]:
        return self.role("node")

    def count(self, role: str) -> int:
        a, b = self.span(role)
        return b - a

    def rows(self) -> int:
        return max((r.row for r in self.racks), default=0)


def trays_per_system(node, rules) -> int:
    """Schedulable nodes per catalog node: compute trays of a rack-scale system, else 1."""
    if not node.rack_scale:
        return 1
    per = int(rules.num("rack_scale_ports_per_tray"))
    return max(1, int(node.compute_nics) // per) if per else 1


def rack_kinds(design, leaf_racks: int | None = None) -> list[str]:
    """Rack kinds in floor order (issue 22 placement rules).

    With ``leaf_racks`` (network racks that hold the leaves, from the leaf switch's height):
    the compute racks of the scalable units in order, each group of units followed by the leaf
    rack that serves it (a leaf stands in the row of its nodes, at the end of its group; in a
    plain tree of 3+ tiers a pod's spines stand there too); the remaining spine / core racks
    form one network block in the middle of the site (half the units on each side: the
    shortest worst-case run to it); then management and storage racks.
    Without it every unit's compute racks are followed by its share of all network racks."""
    rc, lay = design.rack_counts, design.layout
    per_su = max(1, math.ceil(design.fabric.su_nodes / max(1, lay.nodes_per_rack)))
    sus = max(1, math.ceil(rc.compute / per_su))
    lr = rc.network if leaf_racks is None else max(0, min(int(leaf_racks), rc.network))
    spine_block = rc.network - lr
    kinds: list[str] = []
    done_c = done_n = 0
    for k in range(sus):
        if k == sus // 2 and spine_block:
            kinds += ["network-spine"] * spine_block
            spine_block = 0
        n = min(per_su, rc.compute - done_c)
        target = round((k + 1) * lr / sus)
        kinds += ["compute"] * n + ["network"] * (target - done_n)
        done_c, done_n = done_c + n, target
    kinds += (["compute"] * (rc.compute - done_c) + ["network"] * (lr - done_n)
              + ["network-spine"] * spine_block)
    return kinds + ["management"] * rc.management + ["storage"] * rc.storage


def rack_list(design, rules, naming: Naming, leaf_racks: int | None = None) -> list[Rack]:
    per_row = max(1, int(rules.num("racks_per_row")))
    out = []
    fl = design.floor
    split = leaf_racks is not None
    for i, kind in enumerate(rack_kinds(design, leaf_racks)):
        row, pos = divmod(i, per_row)
        hall = int(fl.hall_of_row(row + 1)) if fl.halls > 1 else 1
        tier = ("spine" if kind == "network-spine" else "leaf") if split and \
            kind.startswith("network") else ""
        out.append(Rack(f"{naming.rack}{row + 1:02d}-{pos + 1:02d}", kind.split("-")[0],
                        row + 1, pos + 1, hall, tier))
    return out


def pod_of_leaf(cf, local: np.ndarray) -> np.ndarray:
    """0-based pod of each plane-local leaf index."""
    if cf.pod is not None:
        return local // (cf.pod.segments_per_pod * cf.leaves_per_su)
    if cf.plane.tiers >= 3:
        return local // (cf.radix // 2)
    return np.zeros_like(local)


def spine_pods(cf) -> list[tuple[int, int]]:
    """(spines, first plane-local spine index) of every pod, in pod order."""
    p = cf.plane
    if p.spine == 0:
        return []
    if cf.pod is not None:
        n = cf.pod.spines_per_pod
        return [(n, i * n) for i in range(cf.pod.pods)]
    if p.tiers < 3:
        return [(p.spine, 0)]
    out, start = [], 0
    for count, _ in p.spine_groups:
        per = p.leaf_up if count >= p.leaf_up and count % p.leaf_up == 0 else count
        for _ in range(count // per):
            out.append((per, start))
            start += per
    return out


class _Placer:
    """Hands out slots in racks of one kind, spreading ``count`` things evenly over them."""

    def __init__(self, racks: list[Rack]) -> None:
        self.racks = racks
        self.next_slot: dict[str, int] = {}

    def place(self, kinds: tuple[str, ...], count: int,
              tier: str = "") -> list[tuple[Rack | None, int]]:
        pool = [r for r in self.racks if r.kind in kinds and (not tier or r.tier == tier)] or \
            [r for r in self.racks if r.kind in kinds] or \
            [r for r in self.racks if r.kind == "management"] or self.racks
        out: list[tuple[Rack | None, int]] = []
        for i in range(count):
            rack = pool[i * len(pool) // count] if pool else None
            if rack is None:
                out.append((None, 0))
                continue
            slot = self.next_slot.get(rack.name, 0) + 1
            self.next_slot[rack.name] = slot
            out.append((rack, slot))
        return out


def _nodes(design, node, rules, naming, racks) -> tuple[list[Device], list[Device], int]:
    lay, cf = design.layout, design.fabric
    trays = trays_per_system(node, rules)
    n_sys = design.nodes
    total = n_sys * trays
    gpn = max(1, int(node.gpus) // trays)
    names = naming.numbered(naming.node, total, 4)
    sys_idx = np.arange(total) // trays
    su = sys_idx // cf.su_nodes
    pod = pod_of_leaf(cf, su * cf.leaves_per_su)
    if cf.pod is not None:
        pod = su // cf.pod.segments_per_pod
    dom = (np.arange(total) * gpn) // max(1, lay.nvlink_domain_gpus)
    npr = lay.nodes_per_rack
    compute = [r for r in racks if r.kind == "compute"]
    # plain Python ints per node (numpy scalars cost a conversion each)
    su_l, pod_l, dom_l = (su + 1).tolist(), (pod + 1).tolist(), (dom + 1).tolist()
    rack_name = [r.name for r in compute]
    rack_row = [r.row for r in compute]
    nodes = []
    for k, s in enumerate(sys_idx.tolist()):
        ri = s // npr
        nodes.append(Device(names[k], "node", node.id, rack_name[ri] if compute else "",
                            (s % npr) * trays + k % trays + 1, rack_row[ri] if compute else 0,
                            su_l[k], pod_l[k], 0, dom_l[k], gpn, s >= lay.job_nodes))
    nvsw: list[Device] = []
    if node.rack_scale and trays > 1:
        per = trays // 2
        sw_names = naming.numbered(naming.nvswitch, n_sys * per, 4)
        for s in range(n_sys):
            rack = compute[s // npr] if compute else None
            for j in range(per):
                nvsw.append(Device(sw_names[s * per + j], "nvswitch", "", rack.name if rack
                                   else "", trays * npr + j + 1, rack.row if rack else 0,
                                   int(s // cf.su_nodes) + 1, nvlink_domain=s + 1))
    return nodes, nvsw, trays


def _fabric_switches(design, naming, placer, racks) -> list[tuple[str, list[Device]]]:
    cf = design.fabric
    p, q = cf.plane, cf.planes
    out = []
    leaf_local = np.tile(np.arange(p.leaf), q)
    leaf_pod = pod_of_leaf(cf, leaf_local)
    names = naming.numbered(f"{naming.compute}-leaf", p.leaf * q)
    if cf.tor:
        compute = [r for r in racks if r.kind == "compute"]
        spots = []
        for i in range(p.leaf * q):
            su = int(leaf_local[i]) // cf.leaves_per_su
            rack = compute[min(len(compute) - 1, su * cf.su_nodes // design.layout.nodes_per_rack)]
            spots.append((rack, 0))
    else:
        spots = leaf_spots(cf, placer, leaf_local)
    leaves = [Device(names[i], "leaf", cf.switch_id, r.name if r else "", s, r.row if r else 0,
                     int(leaf_local[i]) // cf.leaves_per_su + 1, int(leaf_pod[i]) + 1,
                     i // p.leaf + 1) for i, (r, s) in enumerate(spots)]
    out.append(("leaf", leaves))
    pod_of_spine = np.zeros(p.spine, dtype=np.int64)
    for k, (_, start) in enumerate(spine_pods(cf)):
        pod_of_spine[start:] = k
    for role, count, pods in (("spine", p.spine, pod_of_spine), ("core", p.core, None)):
        names = naming.numbered(f"{naming.compute}-{role}", count * q)
        if role == "spine" and spines_with_pods(cf):
            # a spine stands in the leaf rack of its pod's middle leaf
            middle = np.array([np.median(np.flatnonzero(leaf_pod[:p.leaf] == k)) for k in
                               range(int(leaf_pod[:p.leaf].max()) + 1)]).astype(np.int64)
            spots = leaf_spots(cf, placer, np.tile(middle[pods], q))
        else:
            spots = placer.place(("network",), count * q, tier="spine")
        out.append((role, [Device(names[i], role, cf.upper_switch_id, r.name if r else "", s,
                                  r.row if r else 0, 0,
                                  int(pods[i % count]) + 1 if pods is not None else 0,
                                  i // count + 1) for i, (r, s) in enumerate(spots)]))
    return out


def _simple(role: str, names: list[str], model: str, spots) -> list[Device]:
    return [Device(n, role, model, r.name if r else "", s, r.row if r else 0)
            for n, (r, s) in zip(names, spots, strict=True)]


def _support(design, naming, placer, racks) -> list[tuple[str, list[Device]]]:
    net, mgmt_k = design.networks, ("management",)
    sf = net.storage
    out = []
    node_leaves = sf.leaf - sf.storage_leaves
    for role, count in (("storage-leaf", sf.leaf), ("storage-spine", sf.spine),
                        ("storage-core", sf.core)):
        tier = role.split("-")[1]
        names = naming.numbered(f"{naming.storage}-{tier}", count)
        devs = _simple(role, names, sf.switch_id, placer.place(mgmt_k, count))
        if role == "storage-leaf":   # node leaves first, then the storage-system leaves
            devs = [d if i < node_leaves else _replace(d, su=i - node_leaves + 1)
                    for i, d in enumerate(devs)]
        out.append((role, devs))
    for role, prefix, count, model in (
            ("inband", f"{naming.inband}-sw", net.inband_switches, net.inband_switch_id),
            ("oob", f"{naming.oob}-sw", net.oob_switches, net.oob_switch_id),
            ("ufm", naming.ufm, net.ufm_appliances, ""),
            ("management", naming.management, net.management_servers, "")):
        # OOB switches spread over every rack (the management ToR in its reserved U)
        kinds = ("compute", "network", "management", "storage") if role == "oob" else mgmt_k
        out.append((role, _simple(role, naming.numbered(prefix, count, 2), model,
                                  placer.place(kinds, count))))
    systems = []
    for t in design.storage.tiers:
        if t.system_id is None or t.blocks <= 0:
            continue
        names = naming.numbered(f"{naming.system}-{t.tier}", t.blocks, 2)
        systems += _simple("storage", names, t.system_id, placer.place(("storage",), t.blocks))
    out.append(("storage", systems))
    return out


def _replace(d: Device, **kw) -> Device:
    from dataclasses import replace

    return replace(d, **kw)


def _pdus_cdus(design, naming, racks) -> list[tuple[str, list[Device]]]:
    pdus = []
    for kind, count in design.power.pdus_by_kind:
        pool = [r for r in racks if r.kind == kind]
        if not pool or count <= 0:
            continue
        per = math.ceil(count / len(pool))
        for i in range(count):
            r = pool[i // per]
            pdus.append(Device(f"{r.name}-pdu{i % per + 1}", "pdu", "", r.name, 0, r.row))
    n_cdu = design.cooling.cdu_units
    compute = [r for r in racks if r.kind == "compute"] or racks
    cdus = [Device(nm, "cdu", "", "", 0, compute[i * len(compute) // n_cdu].row)
            for i, nm in enumerate(naming.numbered(naming.cdu, n_cdu, 2))] if n_cdu else []
    return [("pdu", pdus), ("cdu", cdus)]


def build_inventory(scenario, catalog, design, naming: Naming = Naming()) -> Inventory:  # noqa: B008
    """Expand ``design`` (a ClusterDesign of ``scenario``) into named racks and devices."""
    from clustertwin.design.rules import load_rules

    rules = load_rules()
    node = catalog.node(design.node_id)
    fabric = catalog.fabric(design.fabric.technology)
    racks = rack_list(design, rules, naming, leaf_rack_count(design, catalog, rules))
    placer = _Placer(racks)
    nodes, nvsw, trays = _nodes(design, node, rules, naming, racks)
    groups = [("node", nodes), ("nvswitch", nvsw)]
    groups += _fabric_switches(design, naming, placer, racks)
    groups += _support(design, naming, placer, racks)
    groups += _pdus_cdus(design, naming, racks)
    devices: list[Device] = []
    spans = []
    for role, devs in groups:
        spans.append((role, len(devices), len(devices) + len(devs)))
        devices.extend(devs)
    index = {r.name: i for i, r in enumerate(racks)}
    rack_index = np.array([index.get(d.rack, -1) for d in devices], dtype=np.int64)
    oob_near_devices(devices, spans, racks, rack_index, placer)
    return Inventory(name=scenario.name, racks=tuple(racks), devices=tuple(devices),
                     spans=tuple(spans), gpus_per_node=max(1, int(node.gpus) // trays),
                     trays_per_system=trays, node_model=node.id, gpu_model=design.gpu_id,
                     storage_nics=int(node.storage_nics),
                     storage_nic_gbps=float(node.storage_nic_gbps or 0.0),
                     fiber_cable=fabric.fiber_cable, copper_cable=fabric.copper_cable,
                     rack_index=rack_index, node_ru=_node_ru(node, rules, trays),
                     inband_gbps=_port_gbps(catalog, design.networks.inband_switch_id),
                     compute_adapters=tuple(node.compute_adapters or ()))


def _node_ru(node, rules, trays: int) -> float:
    """Rack units of one schedulable node: the catalog's, or a rack-scale system's usable U
    shared by its compute trays and switch trays."""
    if node.rack_units and not node.rack_scale:
        return float(node.rack_units)
    usable = rules.num("rack_ru") - rules.num("rack_reserved_ru")
    return usable / max(1, trays + trays // 2)


def _port_gbps(catalog, switch_id: str) -> float:
    if not switch_id or not catalog.has("switch", switch_id):
        return 0.0
    return float(catalog.get("switch", switch_id).port_gbps)
