"""The acceptance test plan: every test with its expected value, pass/warn/fail band and the
command line that runs it (``clustertwin acceptance SCENARIO``).

Expected values come from :class:`~clustertwin.acceptance.model.AcceptanceModel`; bands are
fractions of the expected value (``microbench.yaml`` ``bands``); published thresholds are listed
beside the twin's figure as cross-checks, never used in its place.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from clustertwin.acceptance.model import OPS, AcceptanceModel, constants, model_for

MIB = 2**20
#: message sizes of the multi-node collective rows (nccl-tests -b 1M -e 8G covers them)
SIZES = (MIB, 32 * MIB, 1024 * MIB, 8192 * MIB)
INTRA_SIZE = 16 * 1024 * MIB  # Azure's health check runs the intra-node all_reduce at 16G


@dataclass(frozen=True)
class Check:
    """One acceptance test: what to run, what healthy hardware shows, and the grading band."""

    id: str
    kind: str               #: gemm | hbm | nvlink | network | dcgm | burnin
    scope: str              #: gpu | node | nic | 2 nodes | one SU | one pod | whole cluster
    unit: str
    expected: float
    pass_min: float
    warn_min: float
    command: str
    op: str = ""
    gpus: int = 0
    size_bytes: int = 0
    published: str = ""     #: published threshold / range beside it, with source

    def grade(self, measured: float) -> str:
        return grade_value(measured, self.pass_min, self.warn_min)


def grade_value(measured: float, pass_min: float, warn_min: float) -> str:
    if measured >= pass_min:
        return "pass"
    return "warn" if measured >= warn_min else "fail"


def band(kind: str) -> tuple[float, float]:
    b = constants()["bands"][kind]
    return float(b["pass"]), float(b["warn"])


def _check(cid: str, kind: str, scope: str, unit: str, expected: float, command: str, **kw: Any) -> Check:
    p, w = band(kind)
    return Check(cid, kind, scope, unit, float(expected), expected * p, expected * w, command, **kw)


@dataclass(frozen=True)
class AcceptancePlan:
    scenario: str
    gpu_id: str
    node_id: str
    fabric_id: str
    gpus_per_node: int
    nodes: int
    checks: tuple[Check, ...]
    dcgm_level: int
    burnin_hours: float
    max_temp_c: float
    crosschecks: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def find(self, cid: str) -> Check | None:
        return next((c for c in self.checks if c.id == cid), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario, "gpu": self.gpu_id, "node": self.node_id,
            "fabric": self.fabric_id, "gpus_per_node": self.gpus_per_node, "nodes": self.nodes,
            "dcgm_level": self.dcgm_level, "burnin_hours": self.burnin_hours,
            "burnin_max_temp_c": self.max_temp_c,
            "tests": [asdict(c) for c in self.checks],
            "crosschecks": list(self.crosschecks),
            "sources": {k: constants()[k].get("source", "") for k in ("dcgm", "burnin")},
        }


def _per_gpu_checks(m: AcceptanceModel, gpn: int) -> list[Check]:
    out = []
    for prec in ("bf16", "fp8"):
        tf = m.gemm_tflops(prec)
        if tf is not None:
            out.append(_check(f"gemm_{prec}", "gemm", "gpu", "TFLOP/s", tf,
                              "burn-in GEMM per GPU (e.g. dcgmproftester12 -t 1004 -d 300); report it in the burn-in CSV"))
    out.append(_check("hbm_bandwidth", "hbm", "gpu", "GB/s", m.hbm_gbps(),
                      "dcgmi diag -r memory_bandwidth (or nvbandwidth -t device_local_copy)"))
    # one process drives a node's GPUs; a rack-scale NVLink domain spans hosts: one rank per GPU
    run = f"all_reduce_perf -b 16G -e 16G -g {gpn}" if gpn <= 8 else f"mpirun -np {gpn} all_reduce_perf -b 16G -e 16G -g 1"
    out.append(_check("nvlink_allreduce_ring", "nvlink", "node", "GB/s",
                      float(m.busbw("all_reduce", gpn, INTRA_SIZE)), f"NCCL_ALGO=Ring {run}",
                      op="all_reduce", gpus=gpn, size_bytes=INTRA_SIZE))
    if m.has_nvls:
        out.append(_check("nvlink_allreduce_nvls", "nvlink", "node", "GB/s",
                          float(m.busbw("all_reduce", gpn, INTRA_SIZE, nvls=True)),
                          f"{run}  (NCCL picks NVLS)", op="all_reduce", gpus=gpn, size_bytes=INTRA_SIZE))
    out.append(_check("nic_gpudirect", "network", "nic", "GB/s", m.nic_busbw(),
                      "ib_write_bw -d mlx5_N --use_cuda=N -s 8388608 --report_gbits (per NIC; divide Gb/s by 8)"))
    return out


def scopes(m: AcceptanceModel, cluster_gpus: int, pod_gpus: int | None) -> list[tuple[str, int]]:
    """(label, GPUs) of the multi-node test scopes, smallest first, no duplicates."""
    gpn = m.system.gpus_per_node
    su = m.system.nodes_per_leaf * gpn
    cand = [("2 nodes", 2 * gpn), ("one SU", su)]
    if pod_gpus:
        cand.append(("one pod", pod_gpus))
    cand.append(("whole cluster", cluster_gpus))
    out: list[tuple[str, int]] = []
    for label, g in cand:
        g = min(g, cluster_gpus)
        if g > gpn and all(g != x for _, x in out):
            out.append((label, g))
    return out


def _size_flag(size: int) -> str:
    return f"{size // (1024 * MIB)}G" if size >= 1024 * MIB else f"{size // MIB}M"


def _network_checks(m: AcceptanceModel, cluster_gpus: int, pod_gpus: int | None) -> list[Check]:
    gpn = m.system.gpus_per_node
    out = []
    for label, g in scopes(m, cluster_gpus, pod_gpus):
        for op in OPS:
            bw = m.busbw(op, g, SIZES)
            cmd = (f"mpirun -np {g} -N {gpn} {op}_perf -b 1M -e 8G -f 2 -g 1 "
                   f"-J {op}-{label.replace(' ', '-')}.json")
            for size, v in zip(SIZES, bw, strict=True):
                out.append(_check(f"{op}@{label}@{_size_flag(size)}", "network", label, "GB/s",
                                  float(v), cmd, op=op, gpus=g, size_bytes=size))
    return out


def _crosschecks(plan_checks: list[Check], gpu_id: str, fabric_id: str) -> list[dict[str, Any]]:
    out = []
    for pub in constants()["published"]:
        if pub.get("gpu", gpu_id) != gpu_id or pub.get("fabric", fabric_id) != fabric_id:
            continue
        c = next((c for c in plan_checks if c.id == pub["test"]), None)
        if c is None:
            continue
        out.append({"id": pub["id"], "test": c.id, "twin": round(c.expected, 1),
                    "published_low": pub["low"], "published_high": pub["high"], "unit": pub["unit"],
                    "within": bool(pub["low"] <= c.expected <= pub["high"]), "source": pub["source"]})
    return out


def build_plan(scenario: Any, catalog: Any, cluster_gpus: int | None = None) -> AcceptancePlan:
    """The acceptance plan of a scenario (``cluster_gpus``: installed GPUs; default the
    scenario's ``cluster.gpus``, else the perf stage's solved count)."""
    m = model_for(scenario, catalog)
    gpn = m.system.gpus_per_node
    if cluster_gpus is None:
        cluster_gpus = scenario.cluster.gpus
    if cluster_gpus is None:
        from clustertwin.deadline import train

        cluster_gpus = train(scenario, catalog).gpus
    nodes = -(-int(cluster_gpus) // gpn)
    checks = _per_gpu_checks(m, gpn) + _network_checks(m, nodes * gpn, scenario.cluster.fabric.pod_gpus)
    dc, bi = constants()["dcgm"], constants()["burnin"]
    lvl = int(dc["level"])
    checks.append(Check("dcgm_diag", "dcgm", "node", "level", lvl, lvl, lvl,
                        f"dcgmi diag -r {lvl} -j > dcgm-$(hostname -s).json", published=dc["source"]))
    checks.append(Check("burnin_duration", "burnin", "node", "h", float(bi["hours"]), float(bi["hours"]),
                        float(bi["hours"]), "burn-in: node, gpu, serial, tflops, max_temp_c, errors per GPU (CSV)",
                        published=bi["source"]))
    cross = _crosschecks(checks, scenario.cluster.gpu, scenario.cluster.fabric.technology)
    checks = [_with_published(c, cross) for c in checks]
    return AcceptancePlan(scenario.name, scenario.cluster.gpu, scenario.cluster.node,
                          scenario.cluster.fabric.technology, gpn, nodes, tuple(checks), lvl,
                          float(bi["hours"]), float(bi["max_temp_c"]), tuple(cross))


def _with_published(c: Check, cross: list[dict[str, Any]]) -> Check:
    hit = [x for x in cross if x["test"] == c.id]
    if not hit:
        return c
    from dataclasses import replace

    x = hit[0]
    return replace(c, published=f"{x['published_low']}-{x['published_high']} {x['unit']} ({x['source']})")
