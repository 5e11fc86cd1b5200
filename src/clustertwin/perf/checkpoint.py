"""Checkpoint size and the time to write and read it on the storage tiers.

Size: a checkpoint holds the model weights in the training format plus the fp32 master copy
and the two Adam moments. Gradients are not saved. Byte counts follow the mixed-precision Adam
accounting of Rajbhandari et al., "ZeRO" (SC'20): 2 B weights + 12 B optimizer state per
parameter; fp8 training keeps bf16 weights (Transformer Engine practice), so 14 B per parameter
for every precision the scenario allows.

Writes: modern sharded checkpointing (PyTorch DCP, Megatron distributed checkpoints) spreads
one deduplicated copy over every rank, so the whole job writes in parallel. The write time is
the size over the slower of the parallel file system's aggregate write bandwidth and the job's
nodes' storage NICs. Restores read the same bytes back the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

#: bytes per parameter of the saved weights, by training precision (fp8 keeps bf16 weights)
WEIGHT_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 2.0}
#: fp32 master weights + Adam first and second moments (ZeRO paper, section 3.1)
OPTIMIZER_BYTES = 12.0
#: Parallel-file-system write bandwidth per GPU when no design is given, GB/s: Meta's Tectonic
#: sustains 2 TB/s for the 16,384-GPU Llama 3 run (arXiv 2407.21783, section 3.3.1).
DEFAULT_PFS_GBPS_PER_GPU = 2000.0 / 16384.0


@dataclass(frozen=True)
class CheckpointTimes:
    """A checkpoint's size and its write and read times on the file system."""

    size_gb: float               #: one full checkpoint, GB (1e9 B)
    per_gpu_gb: float
    write_gbps: float            #: effective aggregate write bandwidth, GB/s
    read_gbps: float
    write_s: float               #: time to persist one checkpoint to the file system
    restore_s: float             #: time to read it back
    nvme_write_s: float | None   #: time to write each node's share to local NVMe, if known
    storage_source: str          #: where the bandwidth figures came from


def checkpoint_size_gb(params: float, precision: str) -> float:
    """One full checkpoint, GB: the one rule every stage (design storage, reliability, the
    report) reads the checkpoint size from."""
    return params * (WEIGHT_BYTES.get(precision, 2.0) + OPTIMIZER_BYTES) / 1e9


def job_checkpoint_gb(scenario, estimate=None) -> float:
    """Checkpoint of the scenario's job, GB (0 for a design-only scenario: no model).

    Parameters from the estimate when there is one, else counted from the scenario's model."""
    model, training = scenario.model, scenario.training
    params = estimate.params_total if estimate is not None else None
    if not params:
        if model is None:
            return 0.0
        from clustertwin.catalog.params import param_count

        params = param_count(model).total
    precision = training.precision if training is not None else "bf16"
    return checkpoint_size_gb(float(params), precision)


@dataclass(frozen=True)
class StorageRates:
    """What a checkpoint goes through, GB/s (gigaBYTES; None = not known): the file system's
    write and read, one node's storage network, one node's local NVMe write."""

    pfs_write_gbps: float | None = None
    pfs_read_gbps: float | None = None
    node_storage_gbps: float | None = None
    nvme_write_gbps_per_node: float | None = None


def checkpoint_times(params: float, precision: str, gpus: int, nodes: int,
                     rates: StorageRates = StorageRates()) -> CheckpointTimes:
    """Size and write/read times through ``rates``. Missing file-system figures use the
    per-GPU default."""
    pfs_write_gbps, pfs_read_gbps = rates.pfs_write_gbps, rates.pfs_read_gbps
    node_storage_gbps, nvme_write_gbps_per_node = rates.node_storage_gbps, rates.nvme_write_gbps_per_node
    size = checkpoint_size_gb(params, precision)
    source = "design.storage"
    if not pfs_write_gbps:
        pfs_write_gbps = DEFAULT_PFS_GBPS_PER_GPU * gpus
        source = "default: Llama 3 Tectonic 2 TB/s per 16,384 GPUs"
    if not pfs_read_gbps:
        pfs_read_gbps = pfs_write_gbps
    write, read = pfs_write_gbps, pfs_read_gbps
    if node_storage_gbps:
        write = min(write, nodes * node_storage_gbps)
        read = min(read, nodes * node_storage_gbps)
    nvme = size / (nodes * nvme_write_gbps_per_node) if nvme_write_gbps_per_node else None
    return CheckpointTimes(size, size / gpus, write, read, size / write, size / read, nvme, source)


#: GPU -> host-memory staging rate per GPU, GB/s, for the blocking copy of a two-stage
#: checkpoint when nothing better is known. Fitted to one measurement: Llama 3 70B
#: (70.6e9 parameters x 14 B = 988 GB) on 1,856 H200 blocked training for 0.78 s (PyTorch blog
#: "6x faster Async Checkpointing", 2025-04-30): 0.533 GB per GPU in 0.78 s. An effective rate
#: (it includes the staging overheads), far below PCIe bandwidth.
DEFAULT_STAGE_GBPS_PER_GPU = 70.6e9 * (WEIGHT_BYTES["bf16"] + OPTIMIZER_BYTES) / 1e9 / 1856 / 0.78


@dataclass(frozen=True)
class LocalTierTimes:
    """The local checkpoint tier's stall, persist and restore times."""

    blocking_s: float   #: training stall: staging each GPU's share into host memory
    persist_s: float    #: background time until the local copy (and its replicas) is durable
    restore_s: float    #: time to load the local copy back onto the GPUs
    medium: str         #: "node NVMe" or "host memory"
    source: str


def local_tier_times(size_gb: float, gpus: int, nodes: int, replicas: int,
                     nvme_write_gbps_per_node: float | None = None,
                     node_network_gbps: float | None = None,
                     stage_gbps_per_gpu: float = DEFAULT_STAGE_GBPS_PER_GPU) -> LocalTierTimes:
    """Times of the local checkpoint tier (GB/s are gigaBYTES per second).

    The blocking copy stages each GPU's share into host memory. The copy is then persisted to
    the node's NVMe when its write bandwidth is known (otherwise it stays in host memory, as in
    Gemini) and sent to ``replicas`` peer nodes over the node's network; the two run in
    parallel, so the persist time is the slower of them. Restores read at the same rates (NVMe
    reads are at least as fast as writes), and take at least the staging copy's time."""
    per_gpu, per_node = size_gb / gpus, size_gb / nodes
    blocking = per_gpu / stage_gbps_per_gpu
    nvme = per_node / nvme_write_gbps_per_node if nvme_write_gbps_per_node else 0.0
    peer = replicas * per_node / node_network_gbps if replicas and node_network_gbps else 0.0
    persist = max(nvme, peer)
    medium = "node NVMe" if nvme_write_gbps_per_node else "host memory"
    source = (f"staging at {stage_gbps_per_gpu:.2f} GB/s per GPU; {medium}"
              + (f", {replicas} peer copies over the node network" if replicas else ""))
    return LocalTierTimes(blocking, persist, max(persist, blocking), medium, source)
