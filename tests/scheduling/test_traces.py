"""Trace loaders: counts on the shipped files, and bad input reported, never dropped silently."""

from __future__ import annotations

import numpy as np
import pytest

from clustertwin.errors import ScenarioError
from clustertwin.scheduling.cluster import from_node_list, load_cluster
from clustertwin.scheduling.traces import generate, load_openb, load_sia, load_trace
from clustertwin.scheduling.traces.common import drop_too_large

OPENB_HEAD = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
              "creation_time,deletion_time,scheduled_time\n")


def test_openb_counts(traces):
    """openb default list: 8,152 pods; 897 Pending, 1,088 CPU-only of which 1,052 were
    scheduled (README: num_gpu 0 -> 1,088)."""
    w = load_trace("openb")
    rep = w.report
    assert rep.rows_read == 8152
    assert rep.rows_rejected + rep.jobs == 8152
    assert rep.rejected["never scheduled (no scheduled_time, e.g. Pending pods)"] == 897
    assert len(w) == 6203
    assert (np.diff(w.submit_s) >= 0).all()


def test_openb_nodes(traces):
    c = from_node_list(traces / "alibaba-gpu-v2023-openb" / "openb_node_list_all_node.csv.gz")
    assert c.nodes == 1213 and c.gpus == 6212  # README: 1,213 GPU nodes, 6,212 GPUs
    assert any("310 nodes without GPUs" in n for n in c.notes)


def test_philly_derived(traces):
    g = load_trace("gavel")
    assert len(g) == 15264 and len(g.teams) == 15  # README: 15,264 jobs, 15 VCs
    assert np.mean(g.gpus == 1) == pytest.approx(0.687, abs=0.002)
    for name in ("pollux", "pollux:8"):  # Sia's loader; Sia's own files are not packaged
        w = load_trace(name)
        assert len(w) == 160 and w.report.rows_rejected == 0


def test_missing_column_is_an_error(tmp_path):
    p = tmp_path / "pods.csv"
    p.write_text("name,num_gpu\na,1\n")
    with pytest.raises(ScenarioError, match="missing column"):
        load_openb(p)


def test_unparsable_rows_counted_with_examples(tmp_path):
    p = tmp_path / "pods.csv"
    p.write_text(OPENB_HEAD + "a,1,1,1,1000,,LS,Running,0,100,0\n"
                 "b,1,1,x,1000,,LS,Running,0,100,0\n"
                 "c,1,1,1,1000,,LS,Pending,5,,\n")
    w = load_openb(p)
    assert len(w) == 1
    assert w.report.rows_rejected == 2
    assert any("row 3" in e for ex in w.report.examples.values() for e in ex)
    with pytest.raises(ScenarioError) as exc:
        load_openb(p, strict=True)
    assert len(exc.value.problems) == 2


def test_sia_unknown_application(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("name,time,application,num_replicas,batch_size\n"
                 "a,0,cifar10,2,64\nb,5,gpt5,4,64\n")
    w = load_sia(p)
    assert len(w) == 1 and w.report.rejected == {"unknown application (no GPU-time bucket)": 1}


def test_jobs_larger_than_cluster_reported():
    w = generate("philly", 2000, 64, np.random.default_rng(0))
    w = w.subset(np.arange(len(w)))
    from dataclasses import replace

    big = replace(w, gpus_milli=np.where(np.arange(len(w)) < 5, 128000, w.gpus_milli))
    kept = drop_too_large(big, 64, 8, False, "t")
    assert len(kept) == len(w) - 5
    assert sum(kept.report.rejected.values()) == 5
    with pytest.raises(ScenarioError):
        drop_too_large(big, 64, 8, True, "t")


def test_synthetic_follows_profile_and_load():
    rng = np.random.default_rng(1)
    w = generate("philly", 20000, 1000, rng, load=0.5)
    g = w.gpus
    assert np.mean(g == 1) == pytest.approx(0.687, abs=0.02)
    span = w.submit_s[-1]
    offered = (g * np.minimum(w.duration_s, span / 2)).sum() / (span * 1000)
    assert offered == pytest.approx(0.5, rel=0.05)
    assert np.median(w.duration_s) == pytest.approx(874, rel=0.1)


def test_cluster_arguments(tmp_path):
    assert load_cluster("pool:64").gpus == 64
    c = load_cluster("uniform:10x4")
    assert c.nodes == 10 and c.gpus == 40
    p = tmp_path / "nodes.csv"
    p.write_text("name,gpus,su\na,8,x\nb,8,x\nc,8,y\n")
    c = load_cluster(str(p))
    assert c.gpus == 24 and len(set(c.su.tolist())) == 2
