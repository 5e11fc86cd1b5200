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


def test_gb200_jobs_land_inside_nvlink_domains_on_new_slurm(tmp_path):
    """GB200 NVL72 (2 racks, 36 trays) on Slurm >= 25.05 (Debian sid root), the whole folder as
    exported (topology.conf block + topology.yaml) with slurmdbd (the host's MariaDB serves the
    root): a 9-tray job sits inside one rack, and an 18-tray job submitted next takes the whole
    other rack (one NVLink domain), where placement in name order would have split it over
    both; sacct records both jobs' GPUs."""
    import shutil
    import uuid

    from clustertwin.export.hostlist import expand

    from .slurm_harness import NEW_SLURM_ROOT, new_slurm_skip_reason

    why = new_slurm_skip_reason()
    if why or not (NEW_SLURM_ROOT / "usr" / "sbin" / "slurmd").exists():
        pytest.skip(why or f"no slurmd in {NEW_SLURM_ROOT} (.ci/run includes it)")
    if not (NEW_SLURM_ROOT / "usr" / "sbin" / "slurmdbd").exists():
        # Slurm 26.05's slurmctld waits for its slurmdbd at start: without one in the root the
        # bring-up never reaches idle nodes
        pytest.skip(f"no slurmdbd in {NEW_SLURM_ROOT} (.ci/run installs it)")
    scen = scenario(144, gpu="gb200", node="gb200-nvl72", fabric={"technology": "ib-xdr"})
    ctx = make_context(scen, catalog(), design_of(scen))
    conf = NEW_SLURM_ROOT / "tmp" / f"ctwin-{uuid.uuid4().hex[:8]}"
    hosts = NEW_SLURM_ROOT / "etc" / "hosts"
    if not hosts.exists() or "localhost" not in hosts.read_text():
        hosts.write_text("127.0.0.1 localhost\n")
    try:
        run = bring_up(conf, ctx, "multifactor+backfill", root=NEW_SLURM_ROOT, job=(18, ""),
                       pre_job=9)
        rows = [ln.split() for ln in run.read("sinfo.out").splitlines() if ln.strip()]
        detail = run.output + run.read("slurmctld.out")[-2000:] + run.read("srun.err")
        assert len(rows) == 36 and {r[1] for r in rows} == {"idle"}, detail
        busy = expand(run.read("prejob.nodes").split()[0])
        got = [ln.split()[0] for ln in run.read("srun.out").splitlines() if ln.strip()]
        assert "rc=0" in run.read("srun.err"), detail
        dom = {n.name: n.nvlink_domain for n in ctx.inventory.nodes}
        assert len(busy) == 9 and len({dom[n] for n in busy}) == 1
        assert len(got) == 18 and len({dom[n] for n in got}) == 1, got
        assert dom[got[0]] != dom[busy[0]]
        # Slurm 26.05 needs slurmdbd up when slurmctld starts: the exported slurmdbd.conf is it
        acct = [ln.split("|") for ln in run.read("sacct.out").splitlines() if "|" in ln]
        assert sorted(dict(kv.split("=") for kv in t.split(","))["gres/gpu"] for _, t in acct) \
            == ["36", "72"], run.read("slurmdbd.out")[-2000:]
    finally:
        shutil.rmtree(conf, ignore_errors=True)
