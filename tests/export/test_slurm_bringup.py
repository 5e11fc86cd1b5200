"""The exported Slurm set brought up whole, as an operator would on the head node (only the
lab changes of slurm_cluster.lab_site): MariaDB + slurmdbd + slurmctld + one slurmd per node
with fake GPUs. Every node idle with its GPUs; a 2-node ``--gres=gpu:N`` job runs inside one
leaf (``--switches=1``) with all of each node's GPUs; ``sacct`` records ``gres/gpu`` (GPU-hours
are accounted). Skips with the reason when Slurm, slurmdbd or MariaDB is absent."""

from __future__ import annotations

import pytest

from clustertwin.export.stage import make_context

from .helpers import catalog, design_of, scenario
from .slurm_cluster import bring_up, skip_reason

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

#: (GPUs, spare nodes): a 2-node cluster, and the issue's 1,024-GPU export (128 DGX H100
#: in 4 scalable units)
SIZES = {"2-nodes": (16, 0), "1024-gpus": (1024, 2)}


@pytest.mark.parametrize("size", list(SIZES))
def test_exported_set_starts_runs_a_gpu_job_and_accounts_gpus(size, tmp_path):
    gpus, spares = SIZES[size]
    scen = scenario(gpus, spare_nodes=spares)
    ctx = make_context(scen, catalog(), design_of(scen))
    run = bring_up(tmp_path, ctx)
    gpn = ctx.inventory.gpus_per_node
    rows = [ln.split() for ln in run.read("sinfo.out").splitlines() if ln.strip()]
    detail = run.output + run.read("slurmctld.out")[-2000:] + run.read("srun.err")
    assert {r[0] for r in rows} == {n.name for n in ctx.inventory.nodes}, detail
    assert {r[1] for r in rows} == {"idle"}, rows
    assert {r[2] for r in rows} == {f"gpu:{ctx.gpu_type}:{gpn}"}
    assert run.read("nodes.out").count(f"gres/gpu={gpn}") == len(ctx.inventory.nodes)
    # the job: two nodes, every GPU of each, both under one leaf switch (one SU)
    lines = [ln.split() for ln in run.read("srun.out").splitlines() if ln.strip()]
    assert "rc=0" in run.read("srun.err"), detail
    assert len(lines) == 2 and len({n for n, _ in lines}) == 2
    assert {v for _, v in lines} == {",".join(str(i) for i in range(gpn))}
    su = {n.name: n.su for n in ctx.inventory.nodes}
    assert len({su[n] for n, _ in lines}) == 1
    # accounting: the job's allocated TRES carries the GPUs and memory by DefMemPerGPU
    acct = dict(ln.split("|", 1) for ln in run.read("sacct.out").splitlines() if "|" in ln)
    assert acct, run.read("slurmdbd.out")[-2000:]
    tres = dict(kv.split("=") for kv in next(iter(acct.values())).split(","))
    assert tres["gres/gpu"] == str(2 * gpn)
    from clustertwin.export.slurm import node_hardware

    per_gpu = node_hardware(ctx).real_memory_mib // gpn
    assert tres["mem"] == f"{2 * gpn * per_gpu}M"
