"""The longest run of each link class on the design's floor, in closed form (issue 36).

The racks are laid out as the inventory lays them (:func:`~clustertwin.design.site.inventory.rack_kinds`,
rows of ``racks_per_row``, halls), and the switches and appliances are handed their racks and
slots by the same rules (:class:`_Slots` mirrors the inventory's placer and
:func:`~clustertwin.design.site.placement.leaf_spots`); nodes are not expanded: a node of system
``s`` stands in compute rack ``s // nodes_per_rack`` and talks to the leaves of scalable unit
``s // su_nodes``. A class's bound is the routed length
(:meth:`clustertwin.design.geometry.Geometry.route_m`) between the farthest pair of racks its
two ends can stand in, each end at the lowest slot its role uses there (the longest rise to the
tray), or, inside one rack, the largest height difference. Every routed link of the class is
at most this long (tested against the placed site).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from clustertwin.design.geometry import Geometry

_ALL = ("compute", "network", "management", "storage")
#: rack kinds and network tiers as small integers (fast comparisons over 10^4 racks)
KIND = {k: i for i, k in enumerate(_ALL)}
TIER = {"": 0, "leaf": 1, "spine": 2}


@dataclass(frozen=True)
class End:
    """Where one end of a class stands: rack floor indices and its height range (m)."""

    racks: np.ndarray
    z_lo: float
    z_hi: float


@dataclass
class _Slots:
    """The inventory's placer without names: racks handed out in the same order, slot counts
    per rack kept, so each role's lowest slot is known."""

    kind: np.ndarray        #: rack kind per floor index (:data:`KIND` codes)
    tier: np.ndarray        #: network tier (:data:`TIER` codes: leaf / spine; 0 otherwise)
    used: np.ndarray = field(init=False)
    last_slots: np.ndarray = field(init=False)   #: slot of each thing of the last call

    def __post_init__(self) -> None:
        self.used = np.zeros(self.kind.size, dtype=np.int64)
        self.last_slots = np.array([], dtype=np.int64)

    def pool(self, kinds: tuple[str, ...], tier: str = "") -> np.ndarray:
        of_kind = np.isin(self.kind, [KIND[k] for k in kinds])
        for sel in ((of_kind & (self.tier == TIER[tier])) if tier else of_kind, of_kind,
                    self.kind == KIND["management"], np.ones(self.kind.size, dtype=bool)):
            idx = np.flatnonzero(sel)
            if idx.size:
                return idx
        return np.array([], dtype=np.int64)

    def place(self, kinds: tuple[str, ...], count: int, tier: str = "") -> np.ndarray:
        """Rack of each of ``count`` things spread evenly over the pool (the placer's rule)."""
        pool = self.pool(kinds, tier)
        if not count or not pool.size:
            return np.array([], dtype=np.int64)
        return self.take(pool[(np.arange(count) * pool.size) // count])

    def take(self, racks: np.ndarray) -> np.ndarray:
        from clustertwin.design.site.link_groups import rank_within

        self.last_slots = self.used[racks] + rank_within(racks) + 1
        np.add.at(self.used, racks, 1)
        return racks


class Floor:
    """The design's racks on the floor and where each link class's ends stand."""

    def __init__(self, design, catalog, rules) -> None:
        from clustertwin.design.site.inventory import rack_kinds, trays_per_system
        from clustertwin.design.site.placement import leaf_rack_count

        self.design, self.rules = design, rules
        self.geo = Geometry.from_rules(rules)
        kinds = rack_kinds(design, leaf_rack_count(design, catalog, rules)) or ["management"]
        code = {k: (KIND[k.split("-")[0]], TIER["spine" if k == "network-spine" else
                                                   "leaf" if k == "network" else ""])
                for k in set(kinds)}
        pairs = np.array([code[k] for k in kinds], dtype=np.int64).reshape(-1, 2)
        n = pairs.shape[0]
        per_row = max(1, int(rules.num("racks_per_row")))
        row = np.arange(n) // per_row + 1
        fl = design.floor
        hall = np.asarray(fl.hall_of_row(row)) if fl.halls > 1 else np.ones(n, dtype=np.int64)
        first = np.zeros(int(hall.max()) + 1, dtype=np.int64)
        for h in np.unique(hall).tolist():
            first[h] = int(row[hall == h].min())
        hall_row = row - first[hall] + 1
        self.x, self.y = self.geo.rack_xy(hall, hall_row, np.arange(n) % per_row + 1, per_row)
        self.hall = hall
        self.slots = _Slots(pairs[:, 0].copy(), pairs[:, 1].copy())
        self.compute = np.flatnonzero(self.slots.kind == KIND["compute"])
        node = self.catalog_node = catalog.node(design.node_id)
        self.trays = trays_per_system(node, rules)
        self.ends: dict[str, End] = {}
        self._place_all(node)

    @classmethod
    def of(cls, design, catalog) -> Floor:
        from clustertwin.design.rules import load_rules

        return cls(design, catalog, load_rules())

    # --- where things stand -----------------------------------------------------------------
    def _switch_end(self, racks: np.ndarray) -> End:
        """An end of switches in ``racks`` (each listed once per switch, slots already taken)."""
        g = self.geo
        if not racks.size:
            return End(racks, 0.0, 0.0)
        top_slot = int(self.slots.used[racks].max())
        return End(np.unique(racks), max(0.0, g.rack_height_m - (top_slot - 0.5) * g.ru_m),
                   g.rack_height_m - 0.5 * g.ru_m)

    def _place_all(self, node) -> None:
        from clustertwin.design.site.inventory import _node_ru

        d = self.design
        g, lay = self.geo, d.layout
        node_u = max(1.0, float(_node_ru(node, self.rules, self.trays) or 1.0))
        per_rack = lay.nodes_per_rack * self.trays
        n_sys = d.nodes
        self.node_rack = self.compute[np.minimum(np.arange(n_sys) // max(1, lay.nodes_per_rack),
                                                 max(0, self.compute.size - 1))] \
            if self.compute.size else np.zeros(n_sys, dtype=np.int64)
        self.ends["node"] = End(np.unique(self.node_rack), min(g.rack_height_m, 0.5 * node_u * g.ru_m),
                                min(g.rack_height_m, (per_rack - 0.5) * node_u * g.ru_m))
        self._fabric_switches()
        self._support()

    def _fabric_switches(self) -> None:
        from clustertwin.design.site.inventory import pod_of_leaf, spine_pods
        from clustertwin.design.site.placement import spines_with_pods

        cf = self.design.fabric
        p, q, s = cf.plane, cf.planes, self.slots
        local = np.arange(p.leaf)
        self.leaf_fallback = False
        if cf.tor:
            su = local // max(1, cf.leaves_per_su)
            at = su * cf.su_nodes // max(1, self.design.layout.nodes_per_rack)
            self.leaf_rack = np.tile(self.compute[np.minimum(self.compute.size - 1, at)], q)
            g = self.geo
            self.ends["leaf"] = End(np.unique(self.leaf_rack), g.rack_height_m + 0.5 * g.ru_m,
                                    g.rack_height_m + 0.5 * g.ru_m)
        else:
            pool = np.flatnonzero((s.kind == KIND["network"]) & (s.tier == TIER["leaf"]))
            self.leaf_fallback = not pool.size
            self.leaf_rack = self._leaf_spots(np.tile(local, q))
        self.spine_rack = self.spine_slot = np.array([], dtype=np.int64)
        self.pod_rack = None
        if spines_with_pods(cf):
            pods = spine_pods(cf)
            pod_of = np.zeros(p.spine, dtype=np.int64)
            for k, (_, start) in enumerate(pods):
                pod_of[start:] = k
            leaf_pod = pod_of_leaf(cf, local)
            middle = np.array([np.median(np.flatnonzero(leaf_pod == k))
                               for k in range(int(leaf_pod.max()) + 1)]).astype(np.int64)
            self.spine_rack = self._leaf_spots(np.tile(middle[pod_of], q))
            self.spine_slot = s.last_slots
            # a leaf's uplinks reach the spines of its pod, which stand in one rack
            pod_rack = self.spine_rack[np.array([st for _, st in pods])]
            self.pod_rack = pod_rack[np.minimum(leaf_pod, len(pods) - 1)]
        elif p.spine:
            self.spine_rack = s.place(("network",), p.spine * q, tier="spine")
            self.spine_slot = s.last_slots
        self.core_rack = s.place(("network",), p.core * q, tier="spine")
        self.core_slot = s.last_slots if p.core else np.array([], dtype=np.int64)
        # the leaves' lowest slots are final once the spines have joined them
        if not cf.tor:
            self.ends["leaf"] = self._switch_end(self.leaf_rack)
        self.ends["spine"] = self._switch_end(self.spine_rack)
        self.ends["core"] = self._switch_end(self.core_rack)

    def _leaf_spots(self, leaf_local: np.ndarray) -> np.ndarray:
        """:func:`~clustertwin.design.site.placement.leaf_spots` by rack floor index."""
        cf, s = self.design.fabric, self.slots
        pool = np.flatnonzero((s.kind == KIND["network"]) & (s.tier == TIER["leaf"]))
        if not pool.size:
            return s.place(("network",), leaf_local.size)
        sus, lr = max(1, cf.scalable_units), pool.size
        k = np.minimum(sus - 1, leaf_local // max(1, cf.leaves_per_su))
        ks = np.unique(k)
        after = np.array([round((int(j) + 1) * lr / sus) for j in ks])
        before = np.array([round(int(j) * lr / sus) for j in ks])
        at = np.minimum(lr - 1, np.where(after > before, after - 1, after))
        return s.take(pool[at[np.searchsorted(ks, k)]])

    def _support(self) -> None:
        d, s = self.design, self.slots
        net, sf = d.networks, d.networks.storage
        mgmt = ("management",)
        storage = np.concatenate([s.place(mgmt, n) for n in (sf.leaf, sf.spine, sf.core)])
        self.ends["storage-switch"] = self._switch_end(storage)
        self.storage_leaf_rack = storage[:sf.leaf]
        inband = self.inband_rack = s.place(mgmt, net.inband_switches)
        s.place(_ALL, net.oob_switches)
        ufm = s.place(mgmt, net.ufm_appliances)
        management = s.place(mgmt, net.management_servers)
        #: racks of the devices with an OOB port (placement.OOB_ROLES), one entry per device
        self.oob_devices = [storage, inband, ufm, management, ufm[0::2][:net.ufm_appliances // 2],
                            *self._pdu_racks()]
        self.ends["inband"] = self._switch_end(inband)
        self.ends["ufm"] = self._switch_end(ufm)
        systems = [s.place(("storage",), t.blocks) for t in d.storage.tiers
                   if t.system_id is not None and t.blocks > 0]
        self.ends["storage"] = self._switch_end(np.concatenate(systems) if systems
                                                else np.array([], dtype=np.int64))

    def _pdu_racks(self) -> list[np.ndarray]:
        """The rack of every PDU (the inventory's rule: each kind's PDUs fill its racks in
        order, ``ceil(count / racks)`` to a rack)."""
        out = []
        for kind, count in self.design.power.pdus_by_kind:
            pool = np.flatnonzero(self.slots.kind == KIND.get(kind, -1))
            if pool.size and count > 0:
                out.append(pool[np.arange(count) // -(-count // pool.size)])
        return out

    # --- lengths ----------------------------------------------------------------------------
    def route_bound(self, a: End, b: End) -> float:
        """The longest routed run between any rack of ``a`` and any rack of ``b``."""
        if not a.racks.size or not b.racks.size:
            return 0.0
        g = self.geo
        top = g.rack_height_m + g.tray_m
        across = 0.0
        for sx, sy in ((1, 1), (1, -1)):
            ua = sx * self.x[a.racks] + sy * self.y[a.racks]
            ub = sx * self.x[b.racks] + sy * self.y[b.racks]
            across = max(across, float(ua.max() - ub.min()), float(ub.max() - ua.min()))
        between = (top - a.z_lo) + across + (top - b.z_lo)
        inside = max(a.z_hi - b.z_lo, b.z_hi - a.z_lo, 0.0) \
            if np.intersect1d(a.racks, b.racks).size else 0.0
        return max(between, inside) * (1.0 + g.slack_frac) + 2 * g.loop_m

    def _paired(self, a_racks: np.ndarray, b_racks: np.ndarray, a: End, b: End) -> float:
        """The longest run over given (rack of a, rack of b) pairs."""
        if not a_racks.size:
            return 0.0
        g = self.geo
        top = g.rack_height_m + g.tray_m
        across = np.abs(self.x[a_racks] - self.x[b_racks]) + np.abs(self.y[a_racks] - self.y[b_racks])
        same = a_racks == b_racks
        between = (top - a.z_lo) + float(across[~same].max()) + (top - b.z_lo) if (~same).any() else 0.0
        inside = max(a.z_hi - b.z_lo, b.z_hi - a.z_lo, 0.0) if same.any() else 0.0
        return max(between, inside) * (1.0 + g.slack_frac) + 2 * g.loop_m

    def bound_m(self, kind: str) -> float:
        """The longest run a link of class ``kind`` can have (m)."""
        e, cf = self.ends, self.design.fabric
        sf = self.design.networks.storage
        if kind == "node-leaf":
            if self.leaf_fallback:
                return self.route_bound(e["node"], e["leaf"])
            # every leaf of a scalable unit (all planes) stands in the same rack
            su = np.arange(self.design.nodes) // max(1, cf.su_nodes)
            first_leaf = np.minimum(su * cf.leaves_per_su, cf.plane.leaf - 1)
            return self._paired(self.node_rack, self.leaf_rack[first_leaf], e["node"], e["leaf"])
        if kind == "manager-leaf":
            last = self.leaf_rack[min(cf.plane.leaf - 1, (cf.scalable_units - 1) * cf.leaves_per_su)]
            return self.route_bound(e["ufm"], End(np.array([last]), e["leaf"].z_lo, e["leaf"].z_hi))
        if kind == "leaf-leaf":
            pair = self.leaf_rack[:2]
            return self._paired(pair[:1], pair[-1:], e["leaf"], e["leaf"])
        if kind == "leaf-spine" and self.pod_rack is not None and not self.leaf_fallback:
            return self._paired(self.leaf_rack[:cf.plane.leaf], self.pod_rack, e["leaf"], e["spine"])
        if kind == "spine-core" and not (cf.pod is None and cf.plane.tiers >= 4):
            return self._spine_core()
        pairs = {"leaf-spine": ("leaf", "spine"), "spine-core": ("spine", "core"),
                 "core-core": ("core", "core"), "storage-node": ("node", "storage-switch"),
                 "storage-system": ("storage", "inband" if sf.converged or sf.leaf == 0
                                    else "storage-switch"),
                 "storage-leaf-spine": ("storage-switch", "storage-switch"),
                 "storage-spine-core": ("storage-switch", "storage-switch"),
                 "inband": ("node", "inband")}
        if kind in pairs:
            a, b = pairs[kind]
            return self.route_bound(e[a], e[b])
        # OOB: Cat6 is the only medium of its speed; the site's widest run bounds it
        everything = End(np.arange(self.x.size), 0.0, self.geo.rack_height_m + self.geo.ru_m)
        return self.route_bound(everything, everything)

    def _spine_core(self) -> float:
        per = self.spine_core_runs()
        if per is None:
            return self.route_bound(self.ends["spine"], self.ends["core"])
        return float(per[1].max()) if per[1].size else 0.0

    def spine_core_runs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(global spine index, longest run, uplinks) of every spine with core uplinks; None
        where the wiring has no core groups (a 4-tier tree is bounded as a whole). Spine j of
        a pod feeds core group ``(j x span + t) % groups`` (t < span;
        :func:`clustertwin.design.site.cabling._core_links`): its bound is its farthest core of
        those groups, plane by plane, each switch at its own slot."""
        from clustertwin.design.site.inventory import spine_pods

        cf = self.design.fabric
        p, q, g = cf.plane, cf.planes, self.geo
        pods = spine_pods(cf)
        n_groups = cf.pod.spines_per_pod if cf.pod is not None else p.leaf_up
        c = cf.pod.aggregation_per_group if cf.pod is not None else p.core // max(1, p.leaf_up)
        if (cf.pod is None and p.tiers >= 4) or not pods or not n_groups or not c:
            return None
        if cf.pod is not None:
            ups = [cf.pod.spine_up] * (len(pods) - 1) + [cf.pod.last_spine_up]
        else:
            ups = [cf.radix // 2] * len(pods)
        sp, grp, up = [], [], np.zeros(p.spine, dtype=np.int64)
        for (ns, start), u in zip(pods, ups, strict=True):
            span = max(1, n_groups // ns)
            j = np.repeat(np.arange(ns), span)
            sp.append(start + j)
            grp.append((j * span + np.tile(np.arange(span), ns)) % n_groups)
            up[start:start + ns] = u
        sp_l, grp_l = np.concatenate(sp), np.concatenate(grp)
        top = g.rack_height_m + g.tray_m
        core_local = np.arange(n_groups * c)
        runs = np.full(p.spine * q, -np.inf)
        for pl in range(q):
            a = self.spine_rack[pl * p.spine + sp_l]
            ra = top - np.maximum(0.0, g.rack_height_m - (self.spine_slot[pl * p.spine + sp_l] - 0.5) * g.ru_m)
            b = self.core_rack[pl * p.core + core_local]
            rb = top - np.maximum(0.0, g.rack_height_m - (self.core_slot[pl * p.core + core_local] - 0.5) * g.ru_m)
            for sx, sy in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                ub = np.full(n_groups, -np.inf)
                np.maximum.at(ub, core_local // c, -(sx * self.x[b] + sy * self.y[b]) + rb)
                np.maximum.at(runs, pl * p.spine + sp_l, sx * self.x[a] + sy * self.y[a] + ra + ub[grp_l])
        has = np.isfinite(runs)
        idx = np.flatnonzero(has)
        return idx, runs[has] * (1.0 + g.slack_frac) + 2 * g.loop_m, np.tile(up, q)[has]
