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
    size_gb: float               #: one full checkpoint, GB (1e9 B)
    per_gpu_gb: float
    write_gbps: float            #: effective aggregate write bandwidth, GB/s
    read_gbps: float
    write_s: float               #: time to persist one checkpoint to the file system
    restore_s: float             #: time to read it back
    nvme_write_s: float | None   #: time to write each node's share to local NVMe, if known
    storage_source: str          #: where the bandwidth figures came from


def checkpoint_size_gb(params: float, precision: str) -> float:
    return params * (WEIGHT_BYTES.get(precision, 2.0) + OPTIMIZER_BYTES) / 1e9


def checkpoint_times(params: float, precision: str, gpus: int, nodes: int,
                     pfs_write_gbps: float | None = None, pfs_read_gbps: float | None = None,
                     node_storage_gbps: float | None = None,
                     nvme_write_gbps_per_node: float | None = None) -> CheckpointTimes:
    """Size and write/read times. Bandwidths in GB/s (gigaBYTES); ``node_storage_gbps`` is one
    node's storage-network bandwidth. Missing file-system figures use the per-GPU default."""
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
