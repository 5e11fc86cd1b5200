"""topology/block and topology.yaml checked by a Slurm >= 25.05 slurmctld (Debian sid, in a
chroot that .ci/run builds with debootstrap): the GB200 NVL72 blocks are accepted and shown as
the design's racks, topology.yaml (tree + block) is accepted, a BlockSizes value that does not
double is refused. Skips with the reason where no such root exists."""

from __future__ import annotations

import re
import shutil
import uuid

import pytest

from clustertwin.export import slurm as S
from clustertwin.export.hostlist import expand
from clustertwin.export.stage import make_context

from .helpers import catalog, example
from .slurm_harness import NEW_SLURM_ROOT, loopback_site, new_slurm_skip_reason, run_ctld

pytestmark = pytest.mark.skipif(new_slurm_skip_reason() is not None,
                                reason=new_slurm_skip_reason() or "")


@pytest.fixture
def conf():
    """A folder inside the Slurm root: (path here, path as slurmctld sees it)."""
    name = f"tmp/ctwin-{uuid.uuid4().hex[:8]}"
    here = NEW_SLURM_ROOT / name
    here.mkdir(parents=True)
    hosts = NEW_SLURM_ROOT / "etc" / "hosts"
    if not hosts.exists() or "localhost" not in hosts.read_text():
        hosts.write_text("127.0.0.1 localhost\n")   # debootstrap minbase has none
    yield here, f"/{name}"
    shutil.rmtree(here, ignore_errors=True)


def _gb200():
    scen, d, _, _ = example("llama3-70b-gb200-nvl72")
    return make_context(scen, catalog(), d)


def _site(inside: str):
    from pathlib import Path

    return loopback_site(Path(inside))


def test_block_topology_is_accepted_and_shows_the_nvl72_racks(conf):
    here, inside = conf
    ctx = _gb200()
    files = {"slurm.conf": S.slurm_conf(ctx, site=_site(inside), topology="block"),
             "gres.conf": S.gres_conf(ctx), "topology.conf": S.topology_block(ctx)}
    run = run_ctld(here, files, root=NEW_SLURM_ROOT)
    assert run.up, run.output + run.log[-3000:]
    assert run.problems() == []
    blocks = dict(re.findall(r"BlockName=(\S+) BlockIndex=\d+ Nodes=(\S+)", run.topology))
    ours = dict(S.blocks(ctx))
    assert set(blocks) == set(ours)
    assert all(sorted(expand(blocks[b])) == sorted(expand(ours[b])) for b in ours)
    rows = [ln.split() for ln in run.sinfo.splitlines() if ln.strip()]
    assert len(rows) == ctx.inventory.count("node")
    assert {r[1] for r in rows} == {f"gpu:{ctx.gpu_type}:4"}


def test_the_whole_folder_means_the_nvlink_blocks(conf):
    """Copied as it is (slurm.conf + topology.conf + topology.yaml, which Slurm >= 25.05
    reads in place of topology.conf), the default topology is the NVLink blocks."""
    here, inside = conf
    ctx = _gb200()
    files = S.slurm_files(ctx, "fifo+backfill", site=_site(inside))
    assert "topology.yaml" in files and "topology.conf" in files
    run = run_ctld(here, files, root=NEW_SLURM_ROOT)
    assert run.up, run.output + run.log[-3000:]
    assert run.problems() == []
    blocks = dict(re.findall(r"BlockName=(\S+) BlockIndex=\d+ Nodes=(\S+)", run.topology))
    assert set(blocks) == {b for b, _ in S.blocks(ctx)}, run.topology


def test_topology_yaml_alone_is_accepted(conf):
    here, inside = conf
    ctx = _gb200()
    files = {"slurm.conf": S.slurm_conf(ctx, site=_site(inside), topology="yaml"),
             "gres.conf": S.gres_conf(ctx), "topology.yaml": S.topology_yaml(ctx)}
    run = run_ctld(here, files, root=NEW_SLURM_ROOT)
    assert run.up, run.output + run.log[-3000:]
    assert run.problems() == []
    blocks = re.findall(r"BlockName=(\S+) BlockIndex", run.topology)
    assert blocks == [b for b, _ in S.blocks(ctx)], run.topology


def test_block_sizes_that_do_not_double_are_refused(conf):
    here, inside = conf
    ctx = _gb200()
    bad = re.sub(r"BlockSizes=\S+", "BlockSizes=18,36,72,100", S.topology_block(ctx))
    files = {"slurm.conf": S.slurm_conf(ctx, site=_site(inside), topology="block"),
             "gres.conf": S.gres_conf(ctx), "topology.conf": bad}
    run = run_ctld(here, files, root=NEW_SLURM_ROOT)
    assert not run.up
    assert "Invalid BlockSizes value: 100" in run.log
