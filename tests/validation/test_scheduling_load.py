"""Scheduling validation against published numbers and orderings.

Load effect: research/scheduling-anchors.md section 3.3 ran the Alibaba PAI-2020 simulator
(clusterdata cluster-trace-gpu-v2020/simulator @ 7a6c496, 1-s tick, one pooled node, GPU and
CPU limits) on openb pods that have scheduled and deletion times, durations deletion -
scheduled >= 1 s, pods over 7 days dropped (7,214 left), arrivals re-timed 1,000 per minute.
We rebuild that input exactly (same random.Random(42) sample) and replay it on a pooled
cluster with the same greedy FIFO / oracle SJF. Tolerances: 0.1 % where there is no
contention (the answer is the mean duration); 2 % at 256 GPUs and 5 % at 64 GPUs, where the
reference's 1-s tick and its CPU limit (23.22 CPUs per GPU, which we do not model) differ from
an exact event-driven GPU-only replay.
"""

from __future__ import annotations

import numpy as np
import pytest

from clustertwin.scheduling import SimConfig, load_cluster, pooled, schedule, simulate
from clustertwin.scheduling.jobs import with_time_limits
from clustertwin.scheduling.traces import load_trace
from clustertwin.scheduling.traces.locate import PACKAGED
from clustertwin.scheduling.traces.openb import load_openb, pai_sim_input

TR = PACKAGED  # the traces packaged with clustertwin


@pytest.fixture(autouse=True)
def _packaged_traces(monkeypatch):
    monkeypatch.delenv("CLUSTERTWIN_TRACES", raising=False)

# (jobs, GPUs, policy, published avg JCT s, published avg wait s, relative tolerance)
PAI_ROWS = [
    (7000, 6500, "fifo+greedy", 4409.41, 0.0, 0.001),
    (7000, 6500, "sjf-oracle+greedy", 4409.41, 0.0, 0.001),
    (2000, 256, "fifo+greedy", 7025.98, 2138.11, 0.02),
    (2000, 256, "sjf-oracle+greedy", 5659.13, 771.26, 0.02),
    (7000, 64, "sjf-oracle+greedy", 28589.47, 24180.06, 0.05),
]


@pytest.fixture(scope="module")
def pai_base():
    return load_openb(TR / "alibaba-gpu-v2023-openb" / "openb_pod_list_default.csv.gz",
                      cpu_only="keep", max_duration_s=7 * 86400)


def _pai_run(base, jobs, gpus, policy):
    w = with_time_limits(pai_sim_input(base, jobs), np.random.default_rng(0))
    r = simulate(w, pooled(gpus), policy, SimConfig(scan_depth=None, record_timeline=False))
    return float((r.end_s - w.submit_s).mean()), float((r.first_start_s - w.submit_s).mean())


def test_pai_input_matches_anchor(pai_base):
    """7,214 pods after the 7-day cut (anchors 3.3)."""
    assert len(pai_base) == 7214


@pytest.mark.parametrize("jobs,gpus,policy,jct,wait,tol", PAI_ROWS,
                         ids=[f"anchors3.3-{j}jobs-{g}gpus-{p}-tol{t:.1%}"
                              for j, g, p, _, _, t in PAI_ROWS])
def test_load_effect_matches_pai_simulator(pai_base, jobs, gpus, policy, jct, wait, tol):
    got_jct, got_wait = _pai_run(pai_base, jobs, gpus, policy)
    assert got_jct == pytest.approx(jct, rel=tol)
    assert got_wait == pytest.approx(wait, rel=tol, abs=1.0)


def test_fifo_sjf_ratio_at_256_gpus(pai_base):
    """FIFO/SJF avg JCT = 7,025.98 / 5,659.13 = 1.24 in anchors 3.3; tolerance +-0.03."""
    fifo, _ = _pai_run(pai_base, 2000, 256, "fifo+greedy")
    sjf, _ = _pai_run(pai_base, 2000, 256, "sjf-oracle+greedy")
    assert fifo / sjf == pytest.approx(7025.98 / 5659.13, abs=0.03)


def test_fewer_gpus_more_waiting(pai_base):
    """Qualitative load effect: waiting grows as GPUs shrink (6,500 -> 256 -> 128)."""
    waits = [_pai_run(pai_base, 2000, g, "sjf-oracle+greedy")[1] for g in (6500, 256, 128)]
    assert waits[0] == 0 and waits[0] < waits[1] < waits[2]


REAL = [("gavel", "uniform:16x8"), ("pollux", "uniform:2x8"), ("pollux:4", "uniform:4x8"),
        ("pollux:7", "uniform:2x8")]


@pytest.mark.parametrize("trace,cluster", REAL, ids=[f"{t}-on-{c}" for t, c in REAL])
def test_sjf_family_beats_fifo_on_real_traces(trace, cluster):
    """Every SJF variant (requested time, requested GPU-time, oracle) has lower mean JCT than
    FIFO on contended replays of the real arrivals (Helios QSSF artifact finds FIFO/SJF =
    2.51x on Philly, anchors 2.2a; we check the ordering only, since durations here are
    modelled)."""
    w = load_trace(trace)
    res = schedule(w, load_cluster(cluster), ["fifo", "sjf", "sjf-gpu", "sjf-oracle"],
                   SimConfig(record_timeline=False))
    jct = {r.policy: r.metrics["jct_s"]["mean"] for r in res.runs}
    for p in ("sjf", "sjf-gpu", "sjf-oracle"):
        assert jct[p] < jct["fifo"], (p, jct)
