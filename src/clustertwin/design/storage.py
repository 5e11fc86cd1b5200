"""Storage tiers: node-local NVMe, a parallel file system (PFS) and an object store.

Bandwidths here are gigaBYTES per second (GB/s, 1e9 B/s), capacities TB/PB (1e12/1e15 B).

* Checkpoint size: :func:`clustertwin.perf.checkpoint.checkpoint_size_gb` (the one
  function every stage reads it from: 14 B per parameter, weights + fp32 master + Adam moments);
  a design-only cluster (no model) sizes no checkpoint and no dataset, only the per-GPU floors.
* PFS write = max(checkpoint / ``checkpoint_write_target_s``, GPUs x write floor per GPU);
  PFS read = GPUs x ``read_gbps_per_gpu`` (data loading; R1 Table 6 'better').
* PFS capacity = (dataset + retained checkpoints) x headroom; object store = (dataset +
  archived checkpoints) x headroom. Dataset = tokens x ``dataset_bytes_per_token``.
* A single server (``local_storage_max_nodes``) keeps it on its own NVMe: when the PFS
  capacity (dataset + retained checkpoints) fits in ``local_storage_share`` of the nodes' own
  NVMe and the NVMe's aggregate write bandwidth covers the PFS write and read needs, no shared
  storage is bought and archives go to the site's existing backup (one DGX H100 holds 30 TB;
  a 500 TB PFS appliance and a 900 TB object block for it would be 1.4 PB for 0.1 TB of
  checkpoint). The figures then describe the NVMe tier.
* Building blocks from the catalog's ``storage`` entries: the count is the largest of the
  capacity, write and read needs; among several systems of a tier the one needing the fewest
  blocks wins (then the lowest id).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class StorageTier:
    """One storage tier: its building blocks, capacity and bandwidth."""

    tier: str                 #: nvme | pfs | object
    system_id: str | None     #: catalog id of the building block (None for node-local)
    blocks: int
    capacity_tb: float
    write_gbps: float         #: GB/s
    read_gbps: float          #: GB/s
    rack_units: int
    power_kw: float


@dataclass(frozen=True)
class StorageDesign:
    """Storage of the design. ``*_gbps`` are gigaBYTES per second."""

    checkpoint_tb: float
    dataset_tb: float
    required_write_gbps: float
    required_read_gbps: float
    required_capacity_tb: float
    nvme_write_gbps_per_node: float   #: local NVMe write per node, GB/s (0 = none/unknown)
    tiers: tuple[StorageTier, ...]

    def tier(self, name: str) -> StorageTier | None:
        return next((t for t in self.tiers if t.tier == name), None)

    @property
    def capacity_pb(self) -> float:
        """Usable shared capacity (PFS + object store), PB."""
        return sum(t.capacity_tb for t in self.tiers if t.tier != "nvme") / 1000.0

    @property
    def on_nodes(self) -> bool:
        """Everything lives on the nodes' NVMe (a small cluster buys no shared storage)."""
        return self.tier("pfs") is None and self.tier("nvme") is not None

    @property
    def write_gbps(self) -> float:
        """Sustained PFS write, GB/s (what a checkpoint sees); the NVMe's when on the nodes."""
        t = self.tier("pfs") or (self.tier("nvme") if self.on_nodes else None)
        return t.write_gbps if t else 0.0

    @property
    def read_gbps(self) -> float:
        """Sustained PFS read, GB/s (NVMe reads are counted at its write rate)."""
        t = self.tier("pfs")
        if t is None and self.on_nodes:
            return self.tier("nvme").write_gbps
        return t.read_gbps if t else 0.0

    @property
    def power_kw(self) -> float:
        return sum(t.power_kw for t in self.tiers if t.tier != "nvme")

    @property
    def rack_units(self) -> int:
        return sum(t.rack_units for t in self.tiers if t.tier != "nvme")


def _pick(systems: list, cap_tb: float, write: float, read: float) -> tuple[object, int] | None:
    best = None
    for s in systems:
        n = max(1, math.ceil(cap_tb / s.capacity_tb), math.ceil(write / s.write_gb_per_s),
                math.ceil(read / s.read_gb_per_s))
        key = (n, s.id)
        if best is None or key < best[0]:
            best = (key, s, n)
    return None if best is None else (best[1], best[2])


def _tier(name: str, picked) -> StorageTier | None:
    if picked is None:
        return None
    s, n = picked
    return StorageTier(name, s.id, n, n * s.capacity_tb, n * s.write_gb_per_s,
                       n * s.read_gb_per_s, n * s.rack_units, n * s.power_kw)


def plan_storage(*, checkpoint_tb: float, tokens: float, gpus: int, node, nodes: int,
                 systems: list, rules) -> StorageDesign:
    ckpt_tb = float(checkpoint_tb)
    data_tb = tokens * rules.num("dataset_bytes_per_token") / 1e12
    write = max(ckpt_tb * 1000 / rules.num("checkpoint_write_target_s"),
                gpus * rules.num("write_gbps_per_gpu_floor"))
    read = gpus * rules.num("read_gbps_per_gpu")
    head = rules.num("storage_capacity_headroom")
    pfs_cap = (data_tb + rules.num("checkpoints_retained") * ckpt_tb) * head
    obj_cap = (data_tb + rules.num("checkpoints_archived") * ckpt_tb) * head
    by_tier: dict[str, list] = {}
    for s in systems:
        by_tier.setdefault(s.tier, []).append(s)
    tiers: list[StorageTier] = []
    nvme_w = float(node.local_nvme_write_gb_per_s)
    if node.local_nvme_tb > 0:
        if nvme_w == 0 and by_tier.get("nvme"):  # unpublished: use the catalog's NVMe block
            ref = min(by_tier["nvme"], key=lambda s: s.id)
            nvme_w = ref.write_gb_per_s * node.local_nvme_tb / ref.capacity_tb
        tiers.append(StorageTier("nvme", None, nodes, nodes * node.local_nvme_tb,
                                 nodes * nvme_w, 0.0, 0, 0.0))
    local = tiers[0] if tiers else None
    if (local is not None and nodes <= rules.num("local_storage_max_nodes")
            and pfs_cap <= local.capacity_tb * rules.num("local_storage_share")
            and max(write, read) <= local.write_gbps):
        by_tier = {}                      # small: it all fits on the nodes' own NVMe
    for name, cap, w, r in (("pfs", pfs_cap, write, read), ("object", obj_cap, 0.0, 0.0)):
        t = _tier(name, _pick(by_tier.get(name, []), cap, w, r))
        if t is not None:
            tiers.append(t)
    return StorageDesign(checkpoint_tb=ckpt_tb, dataset_tb=data_tb, required_write_gbps=write,
                         required_read_gbps=read, required_capacity_tb=pfs_cap + obj_cap,
                         nvme_write_gbps_per_node=nvme_w if node.local_nvme_tb > 0 else 0.0,
                         tiers=tuple(tiers))
