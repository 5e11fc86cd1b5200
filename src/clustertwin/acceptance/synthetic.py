"""A synthetic measured cluster with planted faults: what tests and the benchmark import.

``synthesize(model, plan, nodes, designed, plants, seed)`` writes nothing; it returns the texts
the real tools would print (a burn-in CSV, one ``dcgmi diag -j`` 4.x document and one intra-node
nccl-tests log per node, the ``ibnetdiscover`` output of the fabric) with:

* healthy GPUs at the expected GEMM figure x U(0.97, 1.03) (inside the pass band);
* ``slow_gpus`` at x U(0.55, 0.88) (below the pass edge);
* ``bad_links``: designed node links shown at half width (2x) or absent;
* ``crossed``: pairs of node links on one leaf whose switch ports are exchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from clustertwin.acceptance.importers.ibnet import render
from clustertwin.acceptance.model import AcceptanceModel
from clustertwin.acceptance.plan import INTRA_SIZE, AcceptancePlan


@dataclass(frozen=True)
class Plants:
    slow_gpus: tuple[tuple[str, int], ...] = ()
    bad_links: tuple[int, ...] = ()          #: indices into the designed links (node links)
    missing: tuple[int, ...] = ()            #: subset of bad_links shown absent (others degraded)
    crossed: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Measured:
    burnin_csv: str
    dcgm: dict[str, str]                     #: node -> document
    nccl: dict[str, str]                     #: node -> intra-node all_reduce log
    ibnet: str
    serials: dict[tuple[str, int], str] = field(default_factory=dict)


def _burnin(model: AcceptanceModel, plan: AcceptancePlan, nodes: list[str], slow: set, rng) -> tuple[str, dict]:
    gpn = plan.gpus_per_node
    exp = plan.find("gemm_bf16").expected
    n = len(nodes) * gpn
    factor = rng.uniform(0.97, 1.03, n)
    names = np.repeat(np.asarray(nodes), gpn)
    idx = np.tile(np.arange(gpn), len(nodes))
    for i, (nd, g) in enumerate(zip(names.tolist(), idx.tolist(), strict=True)):
        if (nd, g) in slow:
            factor[i] = rng.uniform(0.55, 0.88)
    serial = [f"1654{i:09d}" for i in range(n)]
    temp = rng.uniform(55, 75, n)
    lines = ["node,gpu,serial,tflops,max_temp_c,errors"]
    lines += [f"{a},{b},{s},{exp * f:.1f},{t:.0f},0" for a, b, s, f, t in
              zip(names.tolist(), idx.tolist(), serial, factor.tolist(), temp.tolist(), strict=True)]
    return "\n".join(lines) + "\n", {(a, b): s for a, b, s in zip(names.tolist(), idx.tolist(), serial, strict=True)}


def dcgm_doc(gpn: int, serials: list[str], failing: dict[int, str] | None = None) -> str:
    """A ``dcgmi diag -r 3 -j`` document in the 4.x form for one node."""
    failing = failing or {}
    results = [{"entity_group": "GPU", "entity_group_id": 1, "entity_id": g,
                "status": "Fail" if g in failing else "Pass",
                **({"warnings": [{"warning": failing[g], "error_id": 21}]} if g in failing else {})}
               for g in range(gpn)]
    tests = [{"name": n, "results": results if n == "memory" else
              [dict(r, status="Pass") for r in results], "test_summary": {"status": "Pass"}}
             for n in ("software", "pcie", "memory", "targeted_stress", "memory_bandwidth")]
    doc = {"DCGM Diagnostic": {"test_categories": [{"category": "Stress", "tests": tests}]},
           "entity_groups": [{"entity_group": "GPU", "entity_group_id": 1,
                              "entities": [{"entity_id": g, "serial_num": s} for g, s in enumerate(serials)]}],
           "metadata": {"version": "4.2.3", "Driver Version Detected": "580.82.09"}}
    return json.dumps(doc)


def nccl_log(hosts: str | list[str], gpn: int, busbw: float, size: int = INTRA_SIZE) -> str:
    """A one-size all_reduce_perf log as nccl-tests prints it, ``gpn`` ranks on each host."""
    hosts = [hosts] if isinstance(hosts, str) else hosts
    n = gpn * len(hosts)
    alg = busbw * n / (2 * (n - 1))
    t_us = size / (alg * 1e9) * 1e6
    ranks = "\n".join(f"#  Rank {r:2d} Group  0 Pid {1000 + r:6d} on {hosts[r // gpn]:>10} device {r % gpn:2d} "
                      f"[0x{r % gpn:02x}] NVIDIA H100 80GB HBM3" for r in range(n))
    row = (f"{size:12d} {size // 4:13d}     float     sum      -1  {t_us:7.0f}  {alg:6.2f}  {busbw:6.2f}      0"
           f"  {t_us:7.0f}  {alg:6.2f}  {busbw:6.2f}      0")
    return (f"# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1 minBytes {size} maxBytes {size}\n#\n"
            f"# Using devices\n{ranks}\n#\n"
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
            f"{row}\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {busbw:.3f}\n#\n")


def synthesize(model: AcceptanceModel, plan: AcceptancePlan, nodes: list[str],
               designed: list[tuple[str, str, str, str, float]], plants: Plants, seed: int = 0) -> Measured:
    rng = np.random.default_rng(seed)
    gpn = plan.gpus_per_node
    csv_text, serials = _burnin(model, plan, nodes, set(plants.slow_gpus), rng)
    intra = plan.find("nvlink_allreduce_nvls") or plan.find("nvlink_allreduce_ring")
    dcgm = {n: dcgm_doc(gpn, [serials[(n, g)] for g in range(gpn)]) for n in nodes}
    nccl = {n: nccl_log(n, gpn, intra.expected * rng.uniform(0.985, 1.01)) for n in nodes}
    links = [list(x) for x in designed]
    for i in plants.bad_links:
        if i not in plants.missing:
            links[i][4] = links[i][4] / 2
    for i, j in plants.crossed:  # the two cables' switch ends exchanged
        links[i][2:4], links[j][2:4] = links[j][2:4], links[i][2:4]
    shown = [tuple(x) for k, x in enumerate(links) if k not in set(plants.missing)]
    return Measured(csv_text, dcgm, nccl, render(shown), serials)
