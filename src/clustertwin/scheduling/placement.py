"""Placement strategies: which GPUs a job gets (a registry: first-fit, best-fit, topology).

Rules shared by all strategies:

* a job below one GPU (``milli < 1000``) shares a GPU with others;
* a job of ``k`` whole GPUs with ``k`` no more than the largest node goes on one node;
* a larger job takes whole idle nodes (exclusive, as multi-node training is run in practice),
  all at once or not at all (gang).

``mask`` (optional bool per node) limits the nodes a job may use (reservations, backfill).
Every strategy returns an allocation (see :mod:`clustertwin.scheduling.state`) or None.
"""

from __future__ import annotations

import numpy as np

from clustertwin.scheduling.registry import Registry
from clustertwin.scheduling.state import WHOLE, Alloc, ClusterState


class Placement:
    """Base: first-fit everywhere. Subclasses override the three choices."""

    name = "first-fit"

    def place(self, st: ClusterState, milli: int, mask: np.ndarray | None = None) -> Alloc | None:
        if st.pooled:
            return ((0, (), milli),) if st.free_milli >= milli else None
        if milli > st.free_milli:
            return None
        if milli < WHOLE:
            return self.fraction(st, milli, mask)
        k = milli // WHOLE
        if k >= st.max_node_gpus and st.idle_node_gpus < k:
            # a whole largest node, or several nodes, needs idle nodes: up nodes with every GPU
            # free, whose GPUs idle_node_gpus counts (so too few there: no candidate at all)
            return None
        if k <= st.max_node_gpus:
            node = self._listed_node(st, k, mask)
            if node is None:  # not answerable from the lists: the array scan
                ok = st.full >= k
                if mask is not None:
                    ok &= mask
                cand = ok.nonzero()[0]
                if cand.size == 0:
                    return None
                node = int(self.pick_node(st, cand, k))
            elif node < 0:
                return None
            row = st.gfree[node].tolist()  # a few GPUs: a list is faster than NumPy here
            idx = tuple([g for g, f in enumerate(row) if f == WHOLE][:k])
            return ((node, idx, WHOLE),)
        ok = st.full == st.node_gpus
        if mask is not None:
            ok &= mask
        idle = ok.nonzero()[0]
        if idle.size == 0 or int(st.node_gpus[idle].sum()) < k:
            return None
        nodes = self.pick_nodes(st, idle, k)
        if nodes is None:
            return None
        return tuple((int(n), tuple(range(int(st.node_gpus[n]))), WHOLE) for n in nodes)

    def _listed_node(self, st: ClusterState, k: int, mask: np.ndarray | None) -> int | None:
        """:meth:`pick_node`'s answer for ``k`` whole GPUs on one node from the state's sets of
        nodes by free-GPU count (``st.by_full``, bit n for node n), without scanning every
        node: first-fit takes the lowest-numbered node with at least ``k`` free GPUs, best-fit
        the lowest-numbered among those with the fewest (``argmin``'s first minimum). -1: no
        node fits; None: a choice these sets do not make (another ``pick_node``, the
        topology's NVLink-domain order)."""
        rule = self._rule(st)
        if rule is None:
            return None
        by = st.by_full
        allowed = -1 if mask is None else self._bits(mask)
        if rule == "best":
            for f in range(k, len(by)):
                hit = by[f] & allowed
                if hit:
                    return (hit & -hit).bit_length() - 1
            return -1
        hit = 0
        for f in range(k, len(by)):
            hit |= by[f]
        hit &= allowed
        return (hit & -hit).bit_length() - 1 if hit else -1

    def know_bits(self, mask: np.ndarray, bits: int) -> None:
        """Take ``bits`` as the bit set of ``mask`` (bit n set where ``mask[n]``), which the
        caller built faster than :meth:`_bits` would, for the placements under it."""
        self._mask_bits = (mask, bits)

    def _bits(self, mask: np.ndarray) -> int:
        """A node mask as a bit set (the last one is kept: a pass places under one mask)."""
        last = self.__dict__.get("_mask_bits")
        if last is not None and last[0] is mask:
            return last[1]
        bits = int.from_bytes(np.packbits(mask.astype(bool), bitorder="little").tobytes(), "little")
        self._mask_bits = (mask, bits)
        return bits

    def _rule(self, st: ClusterState) -> str | None:
        pick = type(self).pick_node
        if pick is Placement.pick_node:
            return "first"
        if pick is BestFit.pick_node or (pick is Topology.pick_node
                                         and st.spec.domain_gpus <= st.max_node_gpus):
            return "best"
        return None

    # -- choices ---------------------------------------------------------------------------
    def fraction(self, st: ClusterState, milli: int, mask: np.ndarray | None) -> Alloc | None:
        free = st.gfree if mask is None else np.where(mask[:, None], st.gfree, -1)
        flat = (free.ravel() >= milli).nonzero()[0]
        if flat.size == 0:
            return None
        pos = int(self.pick_gpu(free.ravel(), flat))
        node, gpu = divmod(pos, st.gfree.shape[1])
        return ((node, (gpu,), milli),)

    def pick_gpu(self, free_flat: np.ndarray, cand: np.ndarray) -> int:
        return int(cand[0])

    def pick_node(self, st: ClusterState, cand: np.ndarray, k: int) -> int:
        return int(cand[0])

    def pick_nodes(self, st: ClusterState, idle: np.ndarray, k: int) -> list[int] | None:
        take = np.cumsum(st.node_gpus[idle])
        n = int(np.searchsorted(take, k)) + 1
        return [int(i) for i in idle[:n]]


class BestFit(Placement):
    """Tightest fit: the GPU or node with the least spare capacity that still fits, so partly
    used GPUs and nodes fill up before idle ones are broken into."""

    name = "best-fit"

    def pick_gpu(self, free_flat: np.ndarray, cand: np.ndarray) -> int:
        return int(cand[free_flat[cand].argmin()])

    def pick_node(self, st: ClusterState, cand: np.ndarray, k: int) -> int:
        return int(cand[st.full[cand].argmin()])

    def pick_nodes(self, st: ClusterState, idle: np.ndarray, k: int) -> list[int] | None:
        order = idle[np.argsort(-st.node_gpus[idle], kind="stable")]  # fewest nodes
        return Placement.pick_nodes(self, st, order, k)


class Topology(BestFit):
    """Topology-aware: a multi-node job goes into the smallest group that can hold it, trying
    NVLink domain, then leaf group, then scalable unit, then the whole cluster; inside a group
    whole idle NVLink domains are used first (a job of one NVL72 domain gets a whole domain).
    Among groups that fit, the one with the fewest idle GPUs is chosen (best fit), keeping big
    idle groups for big jobs. Single-node jobs are placed best-fit, preferring nodes in the
    busiest domain so idle domains stay whole."""

    name = "topology"

    def pick_node(self, st: ClusterState, cand: np.ndarray, k: int) -> int:
        spec = st.spec
        if spec.domain_gpus <= st.max_node_gpus:
            return BestFit.pick_node(self, st, cand, k)
        idle_per_dom = np.bincount(spec.domain, weights=st.full, minlength=int(spec.domain.max()) + 1)
        key = np.lexsort((cand, idle_per_dom[spec.domain[cand]], st.full[cand]))
        return int(cand[key[0]])

    def pick_nodes(self, st: ClusterState, idle: np.ndarray, k: int) -> list[int] | None:
        spec = st.spec
        gp = st.node_gpus[idle].astype(np.float64)
        for groups in (spec.domain, spec.leaf, spec.su):
            g = groups[idle]
            tot = np.bincount(g, weights=gp)
            fits = (tot >= k).nonzero()[0]
            if fits.size:
                best = int(fits[tot[fits].argmin()])
                members = idle[g == best]
                return self._fill(st, members, k)
        # spans scalable units: take the SUs with the most idle GPUs first
        su = spec.su[idle]
        tot = np.bincount(su, weights=gp)
        order = np.argsort(-tot[su], kind="stable")
        return self._fill(st, idle[order], k)

    @staticmethod
    def _fill(st: ClusterState, members: np.ndarray, k: int) -> list[int]:
        spec = st.spec
        if spec.domain_gpus > st.max_node_gpus:  # whole idle domains first
            dom = spec.domain[members]
            cnt = np.bincount(dom, weights=st.node_gpus[members].astype(np.float64))
            members = members[np.lexsort((members, dom, -cnt[dom]))]
        take = np.cumsum(st.node_gpus[members])
        n = int(np.searchsorted(take, k)) + 1
        return [int(i) for i in members[:n]]


PLACEMENTS: Registry[type[Placement]] = Registry("placement")
PLACEMENTS.add("first-fit", Placement)
PLACEMENTS.add("best-fit", BestFit)
PLACEMENTS.add("topology", Topology)


def get_placement(name: str) -> Placement:
    return PLACEMENTS.get(name, path="--placement")()


def groups_spanned(st: ClusterState, alloc: Alloc) -> tuple[int, int, int]:
    """(nodes, leaf groups, scalable units) an allocation touches."""
    nodes = {a[0] for a in alloc}
    spec = st.spec
    return (len(nodes), len({int(spec.leaf[n]) for n in nodes}),
            len({int(spec.su[n]) for n in nodes}))
