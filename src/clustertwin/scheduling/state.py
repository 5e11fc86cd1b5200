"""Mutable per-run GPU state of a cluster: free capacity per GPU, node health.

Capacity is tracked per GPU in milli-GPUs (1000 = a whole free GPU) so that shared-GPU jobs
(openb's fractional pods) and whole-GPU jobs use the same books. Down nodes have every GPU set
to -1 so that no placement can pick them.

An allocation is a tuple of ``(node, gpu_indices, milli_each)`` entries; in a pooled cluster
it is ``((0, (), milli),)``.
"""

from __future__ import annotations

import numpy as np

from clustertwin.scheduling.cluster import ClusterSpec

WHOLE = 1000

Alloc = tuple[tuple[int, tuple[int, ...], int], ...]


class ClusterState:
    """Free capacity of every GPU, plus running totals the engine reads on every event."""

    def __init__(self, spec: ClusterSpec) -> None:
        self.spec = spec
        self.pooled = spec.pooled
        self.node_gpus = spec.node_gpus.astype(np.int64)
        n = spec.nodes
        maxg = 1 if self.pooled else spec.max_node_gpus
        self.gfree = np.full((n, maxg), -1, dtype=np.int64)
        if not self.pooled:
            for g in np.unique(self.node_gpus):
                self.gfree[self.node_gpus == g, :g] = WHOLE
        self.full = self.node_gpus.copy()  # fully free GPUs per node
        self.up = np.ones(n, dtype=bool)
        # the same as plain lists, for the scalar reads of every take and give (placement
        # reads the arrays)
        self.gpus_l: list[int] = self.node_gpus.tolist()
        self.full_l: list[int] = self.full.tolist()
        self.up_l: list[bool] = [True] * n
        self.capacity_milli = int(self.node_gpus.sum()) * WHOLE
        self.up_milli = self.capacity_milli
        self.free_milli = self.capacity_milli  # free capacity on up nodes
        self.idle_node_gpus = int(self.node_gpus.sum())  # GPUs on nodes with nothing running
        self.free_whole = int(self.full.sum())  # = full.sum(), kept up to date (read per event)
        self.max_node_gpus = int(self.node_gpus.max()) if n else 0
        # the nodes by their count of fully free GPUs as bit sets (bit n: node n; down nodes
        # count 0): placement finds a node for k whole GPUs without scanning every node
        self.by_full: list[int] = [0] * (self.max_node_gpus + 1)
        for node, f in enumerate(self.full_l):
            self.by_full[f] |= 1 << node
        self.changes = 0  # counts take/give/fail/repair: equal counts, the same free GPUs

    # ------------------------------------------------------------------ bookkeeping
    def _node_before(self, node: int) -> None:
        f = self.full_l[node]
        self.free_whole -= f
        g = self.gpus_l[node]
        if f == g and self.up_l[node]:
            self.idle_node_gpus -= g

    def _node_after(self, node: int, whole: int | None = None) -> None:
        """Update the node's counts after its GPUs changed; ``whole`` (its fully free GPUs)
        when the caller knows it, else counted."""
        g = self.gpus_l[node]
        if whole is None:
            whole = self.gfree[node, :g].tolist().count(WHOLE)  # a few GPUs: faster than NumPy
        self._relist(node, self.full_l[node], whole)
        self.full[node] = whole
        self.full_l[node] = whole
        self.free_whole += whole
        if whole == g and self.up_l[node]:
            self.idle_node_gpus += g

    def _shift(self, node: int, idx: tuple[int, ...], delta: int) -> None:
        """Add ``delta`` to the free capacity of GPUs ``idx`` of ``node``: one GPU or a run of
        GPUs by plain indexing (an index list costs several times more), else by the list."""
        n = len(idx)
        if n == 1:
            self.gfree[node, idx[0]] += delta
            return
        first = idx[0] if n else 0
        if idx == tuple(range(first, first + n)):
            self.gfree[node, first:first + n] += delta
        else:
            self.gfree[node, list(idx)] += delta

    def _set(self, node: int, idx: tuple[int, ...], value: int) -> None:
        """:meth:`_shift` for a whole-GPU entry, whose GPUs all go from ``WHOLE`` to 0 (take)
        or back (give): the new value stored, which costs NumPy a third of an addition."""
        n = len(idx)
        if n == 1:
            self.gfree[node, idx[0]] = value
            return
        first = idx[0]
        if idx == tuple(range(first, first + n)):
            self.gfree[node, first:first + n] = value
        else:
            self.gfree[node, list(idx)] = value

    def _relist(self, node: int, old: int, new: int) -> None:
        """Move ``node`` from the set of nodes with ``old`` free GPUs to that with ``new``."""
        if old != new:
            bit = 1 << node
            by = self.by_full
            by[old] ^= bit
            by[new] |= bit

    # A whole-GPU entry (milli = WHOLE) takes GPUs that were fully free and gives back GPUs
    # it held alone (nothing else fits on a GPU with no free capacity), so the node's count of
    # fully free GPUs moves by exactly its GPU count; a fractional entry has them counted.
    def take(self, alloc: Alloc) -> None:
        self.changes += 1
        for node, idx, milli in alloc:
            if self.pooled:
                self.free_milli -= milli
                continue
            self._node_before(node)
            self.free_milli -= milli * len(idx)
            if milli == WHOLE and idx:
                self._set(node, idx, 0)
                self._node_after(node, self.full_l[node] - len(idx))
            else:
                self._shift(node, idx, -milli)
                self._node_after(node)

    def give(self, alloc: Alloc) -> None:
        self.changes += 1
        for node, idx, milli in alloc:
            if self.pooled:
                self.free_milli += milli
                continue
            if not self.up_l[node]:
                continue  # the node's books were cleared when it failed
            self._node_before(node)
            self.free_milli += milli * len(idx)
            if milli == WHOLE and idx:
                self._set(node, idx, WHOLE)
                self._node_after(node, self.full_l[node] + len(idx))
            else:
                self._shift(node, idx, milli)
                self._node_after(node)

    def fail(self, node: int) -> None:
        """Take a node out (its jobs must have been given back first)."""
        if not self.up[node] or self.pooled:
            return
        self.changes += 1
        self._node_before(node)
        g = int(self.node_gpus[node])
        self.free_milli -= int(self.gfree[node, :g].clip(min=0).sum())
        self.up_milli -= g * WHOLE
        self.gfree[node, :g] = -1
        self._relist(node, self.full_l[node], 0)
        self.full[node] = self.full_l[node] = 0  # _node_before took them off free_whole
        self.up[node] = self.up_l[node] = False

    def repair(self, node: int) -> None:
        if self.up[node] or self.pooled:
            return
        self.changes += 1
        g = int(self.node_gpus[node])
        self.up[node] = self.up_l[node] = True
        self.gfree[node, :g] = WHOLE
        self._relist(node, self.full_l[node], g)
        self.full[node] = self.full_l[node] = g
        self.free_whole += g
        self.free_milli += g * WHOLE
        self.up_milli += g * WHOLE
        self.idle_node_gpus += g

    @property
    def fragmentation(self) -> float:
        """Share of free whole GPUs that sit on partly busy nodes, where a job that needs a whole
        node cannot use them (0 = every free GPU is on an idle node)."""
        if self.pooled:
            return 0.0
        free_whole = self.free_whole
        return 0.0 if free_whole <= 0 else 1.0 - self.idle_node_gpus / free_whole


def copy_state(st: ClusterState) -> ClusterState:
    """A hypothetical copy of ``st`` (own capacity arrays, shared read-only fields)."""
    c = ClusterState.__new__(ClusterState)
    c.__dict__.update(st.__dict__)
    c.gfree = st.gfree.copy()
    c.full = st.full.copy()
    c.up = st.up.copy()
    c.full_l = st.full_l.copy()
    c.by_full = st.by_full.copy()
    c.up_l = st.up_l.copy()
    return c
