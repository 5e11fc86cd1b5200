"""What healthy hardware should show in acceptance tests, from the twin's own models.

:class:`AcceptanceModel` wraps the perf stage's :class:`~clustertwin.perf.system.System` for the
scenario's (GPU, node, fabric) and answers, in the units the test tools print:

* per-GPU GEMM TFLOP/s: dense peak x the microbenchmark GEMM efficiency of the generation;
* HBM bandwidth GB/s: catalog bandwidth x the perf stage's ``hbm_efficiency``;
* nccl-tests bus bandwidth (GB/s) of all_reduce / all_gather / alltoall for ``n`` GPUs and a
  message size, from :mod:`clustertwin.perf.collectives` with the scale-out efficiency replaced
  by what nccl-tests reaches on the fabric (``microbench.yaml``). The perf model adds the
  NVLink phase and the network phase of a hierarchical collective (training overlaps them with
  compute, not with each other); nccl-tests pipelines chunks through both at once, so the test
  takes the slower phase: ``max(intra, inter)``, where ``intra`` is the collective over the
  NVLink domain alone and ``inter`` the rest of the model's time;
* intra-node all_reduce with NVLink SHARP (NVLS): the switch reduces, each GPU sends and
  receives the buffer once, so algbw = per-direction NVLink bandwidth x ``nvls_algbw_efficiency``
  and busbw = algbw x 2(n-1)/n (nccl-tests' factor);
* per-NIC GPUDirect bandwidth GB/s: NIC line rate x ``nccl_bus_efficiency``.

Bus bandwidth factors follow nccl-tests ``doc/PERFORMANCE.md``: all_reduce 2(n-1)/n,
all_gather and alltoall (n-1)/n.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from clustertwin.perf import collectives
from clustertwin.perf.system import System

DATA = Path(__file__).parent / "data" / "microbench.yaml"
OPS = ("all_reduce", "all_gather", "alltoall")


@lru_cache(maxsize=1)
def constants() -> dict[str, Any]:
    """The acceptance constants file (microbench.yaml), parsed once."""
    import yaml

    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


def _merged(section: str, key: str) -> dict[str, Any]:
    table = constants()[section]
    out = dict(table.get("default", {}))
    out.update(table.get(key, {}))
    return out


def bus_factor(op: str, n: np.ndarray | float) -> np.ndarray:
    """nccl-tests' busbw / algbw for ``op`` on ``n`` ranks."""
    n = np.asarray(n, dtype=np.float64)
    if op == "all_reduce":
        return 2.0 * (n - 1.0) / n
    return (n - 1.0) / n


@dataclasses.dataclass(frozen=True)
class AcceptanceModel:
    """Expected microbenchmark figures for one (GPU, node, fabric) System."""

    system: System          #: the perf stage's System, unchanged
    micro: System           #: the same with nccl-tests' scale-out efficiency
    gen: dict[str, Any]     #: microbench constants of the generation
    fab: dict[str, Any]     #: microbench constants of the fabric technology
    nic_gbps: float         #: line rate of one compute NIC port, Gb/s
    nics_per_node: int

    @classmethod
    def build(cls, system: System, technology: str, nic_gbps: float, nics_per_node: int) -> AcceptanceModel:
        gen = _merged("generation", system.generation)
        fab = _merged("fabric", technology)
        micro = dataclasses.replace(system, fab={**system.fab, "bus_efficiency": fab["nccl_bus_efficiency"]})
        return cls(system, micro, gen, fab, nic_gbps, nics_per_node)

    # --- per GPU -------------------------------------------------------------------------
    def gemm_tflops(self, precision: str) -> float | None:
        """Dense GEMM TFLOP/s one healthy GPU sustains (None: no such tensor-core peak)."""
        peak = self.system.peak_flops.get(precision)
        eff = self.gen.get(f"gemm_{precision}_efficiency")
        if not peak or eff is None:
            return None
        return peak * eff / 1e12

    def hbm_gbps(self) -> float:
        return self.system.hbm_bw * self.system.gen["hbm_efficiency"] / 1e9

    def nic_busbw(self) -> float:
        """GB/s one NIC carries in nccl-tests / GPUDirect RDMA write tests."""
        return self.nic_gbps / 8.0 * self.fab["nccl_bus_efficiency"]

    # --- collectives ---------------------------------------------------------------------
    @property
    def has_nvls(self) -> bool:
        return "nvls_algbw_efficiency" in self.gen and self.system.nvlink_domain > 2

    def busbw(self, op: str, n: int, size_bytes: np.ndarray | float, nvls: bool = False) -> np.ndarray:
        """nccl-tests bus bandwidth, GB/s, of ``op`` over ``n`` GPUs (consecutive ranks, whole
        nodes) at message ``size_bytes`` (the size column nccl-tests prints)."""
        size = np.asarray(size_bytes, dtype=np.float64)
        t = self.seconds(op, n, size, nvls)
        return size / t * bus_factor(op, n) / 1e9

    def seconds(self, op: str, n: int, size: np.ndarray, nvls: bool = False) -> np.ndarray:
        sysm = self.micro
        k = min(n, sysm.nvlink_domain)
        if nvls and op == "all_reduce" and self.has_nvls and n <= sysm.nvlink_domain:
            bw = sysm.nvlink_bw * self.gen["nvls_algbw_efficiency"]
            return size / bw + 2 * sysm.gen["nvlink_latency_us"] * 1e-6
        fn = {"all_reduce": collectives.all_reduce, "all_gather": collectives.all_gather,
              "alltoall": collectives.all_to_all}[op]
        total = fn(sysm, size, np.float64(n), np.float64(1))
        if op == "alltoall" or n <= k:  # the model already overlaps the two phases of all-to-all
            return np.asarray(total, dtype=np.float64)
        intra = fn(sysm, size, np.float64(k), np.float64(1)) if k > 1 else np.zeros_like(size)
        return np.maximum(intra, total - intra)


def model_for(scenario: Any, catalog: Any) -> AcceptanceModel:
    """The acceptance model of a scenario's cluster."""
    from clustertwin.perf.stage import system_of

    node = catalog.node(scenario.cluster.node)
    fabric = catalog.fabric(scenario.cluster.fabric.technology)
    nic = min(node.compute_nic_gbps, fabric.link_gbps)
    return AcceptanceModel.build(system_of(scenario, catalog), fabric.technology, nic, node.compute_nics)
