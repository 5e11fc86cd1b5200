"""The hardware a training job runs on, reduced to the numbers the time/memory model needs.

:class:`System` is built from catalog entries (GPU, node, fabric, switch, perf calibration) and
is the only hardware view the rest of :mod:`clustertwin.perf` sees, so tests can build one
directly. Units: bytes, bytes/s, FLOP/s, seconds.

Fabric tiers follow the radix of the fabric's switch: a rail-optimized fat tree of radix-k
switches serves k/2 nodes per leaf and k^2/2 endpoints per rail plane with two tiers; beyond
that a third tier is needed. Oversubscription (leaf downlink:uplink) throttles only traffic that
leaves the leaf. Pods (``pod_gpus``) are trees of their own joined by an aggregation layer whose
uplinks are ``pod_oversubscription`` times thinner than the pod's injection bandwidth; how that
slows a collective is in :mod:`clustertwin.perf.collectives`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clustertwin.errors import Problem, ScenarioError

#: Keys each calibration scope must provide (documented in catalog/data/perf_calibration.yaml).
GENERATION_KEYS = (
    "gemm_efficiency",
    "fp8_gemm_efficiency",
    "gemm_overhead_us",
    "gemm_half_dim",
    "hbm_efficiency",
    "attention_efficiency",
    "nvlink_efficiency",
    "nvlink_latency_us",
    "tp_overlap",
    "dp_overlap",
    "ep_overlap",
    "reserve_gib",
    "fragmentation",
    "interference_nvlink",
    "interference_network",
    "cp_chunk_half_tokens",
    "dp_bucket_mb",
)
FABRIC_KEYS = ("bus_efficiency", "latency_us", "alltoall_efficiency")

GIB = 2**30


@dataclass(frozen=True)
class System:
    """Hardware and calibration constants for one (GPU, node, fabric) triple."""

    gpu_id: str
    generation: str
    peak_flops: dict[str, float]  #: dense FLOP/s per precision
    hbm_bytes: float  #: HBM capacity, bytes
    hbm_bw: float  #: HBM bandwidth, bytes/s
    nvlink_bw: float  #: per-GPU NVLink bandwidth one direction, bytes/s
    nvlink_domain: int  #: GPUs in one NVLink domain
    gpus_per_node: int
    nic_bw: float  #: scale-out bandwidth per GPU one direction, bytes/s
    fabric_id: str
    switch_radix: int
    hop_latency_s: float
    oversubscription: float = 1.0
    #: GPUs under one pod (leaves + spines) joined to other pods by an aggregation layer; None:
    #: one tree as sized by the radix (scenario ``cluster.fabric.pod_gpus``)
    pod_gpus: int | None = None
    #: down:up ratio of a pod's spines toward the aggregation layer (``pod_oversubscription``)
    pod_oversubscription: float = 1.0
    gen: dict[str, float] = field(default_factory=dict)  #: generation constants
    fab: dict[str, float] = field(default_factory=dict)  #: fabric constants
    calibration_ids: tuple[str, ...] = ()
    #: this part's measured GEMM rate (16-bit, fp8) and HBM copy bandwidth relative to the part
    #: its generation's constants were fitted on (1: the same, or not measured); see
    #: :func:`hardware_factors`
    gemm_hw: float = 1.0
    fp8_hw: float = 1.0
    hbm_hw: float = 1.0

    def peak(self, precision: str) -> float:
        """Dense peak FLOP/s for ``precision`` (fp8 falls back to bf16 where absent)."""
        p = self.peak_flops
        return p.get(precision) or p.get("bf16") or p.get("fp16") or max(p.values())

    def sustained(self, precision: str) -> float:
        """The datasheet peak scaled by this part's measured GEMM rate against the generation's
        reference part: what kernels' efficiencies (fractions of the reference peak) apply to."""
        hw = self.fp8_hw if precision == "fp8" and "fp8" in self.peak_flops else self.gemm_hw
        return self.peak(precision) * hw

    @property
    def nodes_per_leaf(self) -> int:
        """Nodes one leaf switch serves per rail (half the radix faces down)."""
        return max(1, self.switch_radix // 2)

    def tiers(self, gpus: int) -> int:
        """Fabric tiers for ``gpus``: one rail plane holds gpus/nic-per-GPU endpoints."""
        nodes = -(-gpus // self.gpus_per_node)
        k = self.switch_radix
        if nodes <= k // 2:
            return 1
        return 2 if nodes <= k * k // 2 else 3


def calibration_constants(
    catalog: Any, scope: str, key: str, needed: tuple[str, ...] = ()
) -> tuple[dict[str, float], list[str]]:
    """The perf calibration constants of one scope (``gpu-generation`` or ``fabric``) for
    ``key``: the ``default`` entry's, overridden by ``key``'s own; and the entry ids used.
    Raises ScenarioError when a ``needed`` constant is missing."""
    entries = (
        [e for e in catalog.all("perf_calibration") if e.scope == scope]
        if "perf_calibration" in catalog.kinds()
        else []
    )
    merged: dict[str, float] = {}
    ids: list[str] = []
    for want in ("default", key):
        for e in entries:
            if e.applies_to == want:
                merged.update(e.constants)
                ids.append(e.id)
    missing = [k for k in needed if k not in merged]
    if missing:
        raise ScenarioError(
            [
                Problem(
                    "catalog/perf_calibration",
                    f"{scope}[{key}]",
                    f"missing calibration constants: {', '.join(missing)}",
                )
            ]
        )
    return merged, ids


#: generation constants naming the measured fraction of the reference part the constants were
#: fitted on, per hardware fact (GPU catalog fields achieved_tflops / achieved_hbm_tb_per_s)
REFERENCE_KEYS = {"bf16": "reference_gemm_fraction", "fp8": "reference_fp8_fraction",
                  "hbm": "reference_hbm_fraction"}


def hardware_factors(gpu: Any, gen: dict[str, float]) -> dict[str, float]:
    """``gemm_hw``, ``fp8_hw`` and ``hbm_hw`` of a catalog GPU: its measured fraction of its
    datasheet figure over the fraction of the part the generation was fitted on (a 500 W
    HBM2e H100 against the 700 W HBM3 H100 SXM); 1 where either side is not measured."""
    got = dict(gpu.achieved_tflops or {})
    frac = {k: got[k] / gpu.peak_tflops[k] for k in ("bf16", "fp8") if k in got and k in gpu.peak_tflops}
    hbm = gpu.achieved_hbm_tb_per_s
    if hbm:
        frac["hbm"] = hbm / gpu.hbm_tb_per_s
    out = {}
    for k, name in (("bf16", "gemm_hw"), ("fp8", "fp8_hw"), ("hbm", "hbm_hw")):
        ref = gen.get(REFERENCE_KEYS[k], 0.0)
        out[name] = frac[k] / ref if k in frac and ref > 0 else 1.0
    return out


def system_from_catalog(
    catalog: Any,
    gpu_id: str,
    node_id: str,
    fabric_id: str,
    oversubscription: float = 1.0,
    pod_gpus: int | None = None,
    pod_oversubscription: float = 1.0,
) -> System:
    """Build a :class:`System` from catalog ids (raises ScenarioError for unknown ids)."""
    gpu = catalog.gpu(gpu_id)
    node = catalog.node(node_id)
    fabric = catalog.fabric(fabric_id)
    radix = 64
    if catalog.has("switch", fabric.switch):
        radix = int(catalog.get("switch", fabric.switch).ports)
    gen, gids = calibration_constants(catalog, "gpu-generation", gpu.generation, GENERATION_KEYS)
    fab, fids = calibration_constants(catalog, "fabric", fabric.technology, FABRIC_KEYS)
    for e in catalog.all("perf_calibration") if "perf_calibration" in catalog.kinds() else []:
        if e.scope == "fabric" and e.applies_to == fabric.id:  # a fabric's own (cloud fabrics)
            fab, fids = {**fab, **e.constants}, [*fids, e.id]
    nic_gbps = min(node.compute_nic_gbps, fabric.link_gbps) * node.compute_nics / node.gpus
    if fabric.per_gpu_gbps:
        nic_gbps = min(nic_gbps, fabric.per_gpu_gbps)
    return System(
        gpu_id=gpu.id,
        generation=gpu.generation,
        peak_flops={k: v * 1e12 for k, v in gpu.peak_tflops.items()},
        hbm_bytes=gpu.hbm_gib * GIB,
        hbm_bw=gpu.hbm_tb_per_s * 1e12,
        nvlink_bw=gpu.nvlink_gb_per_s * 1e9 / 2,
        nvlink_domain=node.nvlink_domain_gpus,
        gpus_per_node=node.gpus,
        nic_bw=nic_gbps * 1e9 / 8,
        fabric_id=fabric.id,
        switch_radix=radix,
        hop_latency_s=fabric.hop_latency_us * 1e-6,
        oversubscription=oversubscription,
        pod_gpus=pod_gpus,
        pod_oversubscription=pod_oversubscription,
        gen=gen,
        fab=fab,
        calibration_ids=tuple(dict.fromkeys(gids + fids)),
        **hardware_factors(gpu, gen),
    )


def default_node(catalog: Any, gpu_id: str) -> str:
    """The first catalog node built on ``gpu_id`` (for calibration rows that name only a GPU)."""
    for n in catalog.all("node"):
        if n.gpu == gpu_id:
            return n.id
    raise ScenarioError(
        [Problem("catalog", "node", f"no node in the catalog holds GPU {gpu_id!r}")]
    )
