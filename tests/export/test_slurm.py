"""Slurm exports checked by the real slurmctld (Debian 22.05, topology/tree) for the default
scenario, GB200 NVL72 and a 2-node cluster; a broken topology is caught; block / yaml forms
checked by our lints and, where a Slurm >= 25.05 root is present, by that slurmctld."""

from __future__ import annotations

import re

import pytest

from clustertwin.export import slurm as S
from clustertwin.export.hostlist import compress, expand
from clustertwin.export.stage import make_context

from .helpers import catalog, design_of, example, scenario
from .slurm_harness import loopback_site, run_ctld, skip_reason

needs_slurm = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


def _ctx(name: str):
    scen, d, _, _ = example(name)
    return make_context(scen, catalog(), d)


def _two_nodes():
    scen = scenario(16)
    return make_context(scen, catalog(), design_of(scen))


CASES = {"default": lambda: _ctx("default"),
         "gb200-nvl72": lambda: _ctx("llama3-70b-gb200-nvl72"),
         "two-nodes": _two_nodes}


def _tree_files(ctx, tmp_path):
    return {"slurm.conf": S.slurm_conf(ctx, site=loopback_site(tmp_path), topology="tree"),
            "gres.conf": S.gres_conf(ctx), "topology.conf": S.topology_tree(ctx)}


@needs_slurm
@pytest.mark.parametrize("case", list(CASES))
def test_real_slurmctld_accepts_the_generated_configs(case, tmp_path):
    ctx = CASES[case]()
    run = run_ctld(tmp_path, _tree_files(ctx, tmp_path))
    assert run.up, run.output + run.log[-3000:]
    assert run.problems() == []
    # sinfo: every node, with the design's GRES, in the right partition
    rows = [ln.split() for ln in run.sinfo.splitlines() if ln.strip()]
    inv = ctx.inventory
    assert {r[0] for r in rows} == {n.name for n in inv.nodes}
    assert {r[1] for r in rows} == {f"gpu:{ctx.gpu_type}:{inv.gpus_per_node}"}
    spares = {r[0] for r in rows if r[2].rstrip("*") == "spares"}
    assert spares == {n.name for n in inv.nodes if n.spare}
    # scontrol show topology: the switches we wrote, every node under exactly one leaf
    shown = dict(re.findall(r"SwitchName=(\S+) Level=(\d+)", run.topology))
    ours = S.tree_switches(ctx)
    assert set(shown) == {s for s, _, _ in ours}
    leaves = [s for s, kind, _ in ours if kind == "Nodes"]
    assert {s for s, lvl in shown.items() if lvl == "0"} == set(leaves)
    assert len(leaves) == ctx.design.scalable_units
    # the upper levels are the design's pods, then one top switch over them
    pods = {n.pod for n in inv.nodes}
    if len(leaves) > 1:
        top = max(int(v) for v in shown.values())
        assert sum(1 for v in shown.values() if v == str(top)) == 1
        assert top == (2 if len(pods) > 1 else 1)
        assert sum(1 for v in shown.values() if v == "1") == (len(pods) if len(pods) > 1 else 1)
    under = re.findall(r"Level=0 .*Nodes=(\S+)", run.topology)
    assert sorted(x for h in under for x in expand(h)) == sorted(n.name for n in inv.nodes)


@needs_slurm
def test_a_broken_topology_is_caught_by_slurmctld(tmp_path):
    ctx = _ctx("default")
    files = _tree_files(ctx, tmp_path)
    files["topology.conf"] = files["topology.conf"].replace("Switches=pod[", "Switches=pod99,pod[")
    run = run_ctld(tmp_path, files)
    assert not run.up
    assert "invalid child (pod99)" in run.log


def test_slurm_conf_policy_translation():
    ctx = _two_nodes()
    conf = S.slurm_conf(ctx, "multifactor:fairshare=5000,age=100+backfill+preempt")
    assert "PriorityType=priority/multifactor" in conf
    assert "PriorityWeightFairshare=5000" in conf and "PriorityWeightAge=100" in conf
    assert "SchedulerType=sched/backfill" in conf and "PreemptType=preempt/qos" in conf
    assert "AccountingStorageType=accounting_storage/slurmdbd" in conf
    fifo = S.slurm_conf(ctx, "fifo+greedy")
    assert "PriorityType=priority/basic" in fifo and "sched/builtin" in fifo
    assert "AccountingStorage" not in fifo
    assert "no Slurm equivalent" in S.slurm_conf(ctx, "sjf+backfill")


def test_node_lines_follow_the_catalog_node():
    ctx = _ctx("default")
    hw = S.node_hardware(ctx)
    assert (hw.cpus, hw.sockets, hw.threads_per_core, hw.gpus) == (224, 2, 2, 8)  # DGX H100
    gb = _ctx("llama3-70b-gb200-nvl72")
    hw = S.node_hardware(gb)   # one compute tray: 2 Grace (72 cores each, no SMT), 4 GPUs
    assert (hw.cpus, hw.sockets, hw.threads_per_core, hw.gpus) == (144, 2, 1, 4)
    assert "File=/dev/nvidia[0-3]" in S.gres_conf(gb)


def test_gb200_blocks_are_nvl72_racks_and_sizes_double():
    ctx = _ctx("llama3-70b-gb200-nvl72")
    text = S.topology_block(ctx)
    blocks = re.findall(r"BlockName=(\S+) Nodes=(\S+)", text)
    assert len(blocks) == ctx.design.nodes and all(len(expand(n)) == 18 for _, n in blocks)
    sizes = [int(x) for x in re.search(r"BlockSizes=(\S+)", text).group(1).split(",")]
    assert sizes[0] == 18 and all(b == 2 * a for a, b in zip(sizes, sizes[1:], strict=False))
    assert sizes[-1] <= 18 * len(blocks)
    assert S.lint_topology(ctx) == []
    assert "TopologyPlugin=topology/block" in S.slurm_conf(ctx)
    import yaml

    # topology.yaml's default is the same block topology as topology.conf's (Slurm >= 25.05
    # reads the yaml when both are in the folder); the fabric tree is a named extra
    doc = yaml.safe_load(S.topology_yaml(ctx))
    assert [(t["topology"], t["cluster_default"]) for t in doc] == [("nvl", True),
                                                                    ("fabric", False)]
    assert doc[0]["block"]["block_sizes"] == sizes
    assert "TopologyPlugin" not in S.slurm_conf(ctx, topology="yaml")
    tree = yaml.safe_load(S.topology_yaml(_two_nodes()))
    assert [(t["topology"], t["cluster_default"]) for t in tree] == [("fabric", True)]


def test_slurm_set_isolates_accounts_and_checks_gpus():
    """The operator's fixes: cgroup.conf constrains devices, slurmdbd.conf comes with the
    accounting lines and gres/gpu TRES, memory per GPU, shared state for the backup
    controller, prolog / epilog health checks (bash -n clean)."""
    ctx = _ctx("default")
    files = S.slurm_files(ctx)
    conf = files["slurm.conf"]
    assert "ConstrainDevices=yes" in files["cgroup.conf"] and "task/cgroup" in conf
    assert "AccountingStorageTRES=gres/gpu" in conf and "slurmdbd.conf" in files
    assert "StorageType=accounting_storage/mysql" in files["slurmdbd.conf"]
    hw = S.node_hardware(ctx)
    assert f"DefMemPerGPU={hw.real_memory_mib // hw.gpus}" in conf
    hosts = re.findall(r"^SlurmctldHost=(\S+)", conf, re.M)
    assert len(hosts) == 2 and f"StateSaveLocation={S.SHARED_STATE_DIR}" in conf
    assert "Prolog=/etc/slurm/prolog.sh" in conf and "EXPECTED_GPUS=8" in files["prolog.sh"]
    assert "dcgmi diag -r" in files["prolog.sh"]
    fifo = S.slurm_files(ctx, "fifo+backfill")
    assert "slurmdbd.conf" not in fifo and "AccountingStorageTRES" not in fifo["slurm.conf"]
    import shutil
    import subprocess

    if shutil.which("bash"):
        for name in ("prolog.sh", "epilog.sh"):
            run = subprocess.run(["bash", "-n"], input=files[name], text=True,
                                 capture_output=True, check=False)
            assert run.returncode == 0, run.stderr


def test_hostlist_round_trip():
    names = [f"gpu{i:04d}" for i in (1, 2, 3, 7, 9, 10)] + ["core"]
    assert compress(names) == "gpu[0001-0003,0007,0009-0010],core"
    assert expand(compress(names)) == names
