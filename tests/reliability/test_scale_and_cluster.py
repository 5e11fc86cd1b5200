"""Issue 11 on the reliability side: node-level reliability of a design-only cluster, the
failure profile picked by GPU generation, spares that pay for themselves, long runs stretched,
and the ETTR chart's labels on its log axis."""

from __future__ import annotations

import numpy as np
import pytest
import reliability_support as rs

from clustertwin.catalog import load_catalog
from clustertwin.design.failure_rates import default_profile_id, job_rates
from clustertwin.design.spares import spares_needed, spares_worth_keeping
from clustertwin.reliability import analyze
from clustertwin.reliability.montecarlo import Outcome
from clustertwin.reliability.montecarlo import stretch as _stretch


@pytest.fixture(scope="module")
def cat():
    return load_catalog([])


@pytest.mark.parametrize("gpu,profile", [("a100-sxm-80gb", "rsc-a100"),
                                         ("h100-sxm-80gb", "llama3-h100"),
                                         ("b200", "llama3-h100"), ("gb200", "llama3-h100"),
                                         ("mi300x", "llama3-h100")])
def test_failure_profile_auto_follows_the_gpu_generation(cat, gpu, profile):
    """Ampere clusters get Meta's RSC-1 A100 profile; Hopper the Llama 3 one, which the catalog
    also names for Blackwell and CDNA3 (no fleet census of those published as of 2025-11)."""
    assert default_profile_id(cat, gpu) == profile


def test_one_node_keeps_no_spare_and_a_big_job_keeps_the_wait_rule():
    """One node: ~2e-3 nodes in repair; a spare would save ~4e-6 node-hours an hour. 2,048
    nodes (Llama 3 rates, 8 h repair): the 0.1% wait rule's count stays the smaller one."""
    assert spares_worth_keeping(0.002, 8.0, 1) == 0
    mean = 2.2
    assert spares_worth_keeping(mean, 8.0, 2048) >= spares_needed(mean) == 8


def test_design_only_cluster_gets_node_level_reliability(rcat):
    sc = rs.scenario(rcat, 1024)
    res = analyze(sc, rcat, None, None)
    profile = rcat.get("failure_profile", sc.reliability.failure_profile)
    rates = job_rates(profile, 1024, 8)
    assert res.failures_per_day == pytest.approx(rates.unexpected_per_h * 24)
    assert res.node_mtbf_h == pytest.approx(rates.mtbf_h * res.nodes)
    from clustertwin.report import views

    assert res.to_contract()["mode"] == "cluster" and views.rows(res)
    assert [n for n, _ in views.view_of(res).figures(res, None)] == ["reliability-causes"]


def test_stretch_grows_means_linearly_and_spread_as_the_root():
    rng = np.random.default_rng(0)
    a = rng.normal(100.0, 10.0, size=(1, 4000))
    out = Outcome(intervals_h=np.ones(1), wall_h=a, work_h=a * 0.9, stall_h=a * 0, lost_h=a * 0,
                  restart_h=a * 0, waiting_h=a * 0, interruptions=a, planned=a * 0,
                  counts=rng.poisson(5.0, size=(4000, 3)).astype(float))
    s = _stretch(out, 16.0)
    assert s.wall_h.mean() == pytest.approx(16 * a.mean(), rel=1e-9)
    assert s.wall_h.std() == pytest.approx(4 * a.std(), rel=1e-9)
    assert s.counts.mean(axis=0) == pytest.approx(16 * out.counts.mean(axis=0))
    assert np.allclose(s.ettr, 0.9)


def test_ettr_chart_marks_sit_on_their_intervals(rcat):
    """The used, Young and Daly intervals are vertical lines at their own values on the log
    axis, named in the legend with the value (no label placed on a log axis can run it away to
    10^153, or print over another)."""
    from clustertwin.report.views import reliability as view

    sc = rs.scenario(rcat, 1024, reliability={"trials": 50})
    res = analyze(sc, rcat, rs.estimate(1024, days=10.0), None)
    fig = dict(view.figures(res))["ETTR"].to_dict()
    marks = [t for t in fig["data"] if t["name"].startswith(("Interval used", "Young:", "Daly:"))]
    assert marks and fig["layout"]["xaxis"]["type"] == "log"
    for t in marks:
        assert t["x"][0] == t["x"][1] and f"{t['x'][0]:.1f} min" in t["name"]
    curve = [c[0] for c in res.curve]
    assert all(min(curve) <= t["x"][0] <= max(curve) for t in marks)


def test_stretched_long_run_matches_the_full_simulation(rcat, monkeypatch):
    """100,000 GPUs, 60 days: ~4,000 interruptions per trial. Simulating 1,000 and stretching
    gives the full simulation's ETTR (within 0.5%) and interruption spread (within 2%)."""
    import clustertwin.reliability.stage as st

    sc = rs.scenario(rcat, 100_000, reliability={"trials": 200}, spare_nodes=40)
    est = rs.estimate(100_000, days=60.0)
    short = analyze(sc, rcat, est, None)
    assert any("stretched" in n for n in short.notes)
    monkeypatch.setattr(st, "MAIN_FAILURES", 10**9)
    full = analyze(sc, rcat, est, None)
    assert short.ettr_mean == pytest.approx(full.ettr_mean, rel=5e-3)
    assert short.ettr_p5 == pytest.approx(full.ettr_p5, rel=5e-3)
    assert short.interruptions_mean == pytest.approx(full.interruptions_mean, rel=0.01)
    assert short.interruptions_p95 - short.interruptions_p5 == pytest.approx(
        full.interruptions_p95 - full.interruptions_p5, rel=0.2)
