"""The reliability stage end to end: contract keys, errors, design fallbacks, figures."""

from __future__ import annotations

import json

import pytest
import reliability_support as rs
from pydantic import ValidationError

from clustertwin.cli.common import to_json
from clustertwin.errors import InfeasibleError, ScenarioError
from clustertwin.reliability import ReliabilityResult, analyze

CONTRACT = ("interruptions_mean", "interruptions_p5", "interruptions_p95", "mtbf_h",
            "checkpoint_interval_min", "optimal_interval_min", "ettr_mean", "ettr_p5",
            "effective_days", "lost_gpu_hours", "by_cause")


@pytest.fixture(scope="module")
def small(rcat):
    sc = rs.scenario(rcat, gpus=4096, spare_nodes=8, reliability={"trials": 200, "seed": 3})
    return sc, analyze(sc, rcat, rs.estimate(gpus=4096, days=20))


def test_contract_keys_and_frozen(small):
    _, res = small
    assert isinstance(res, ReliabilityResult)
    block = res.to_contract()
    for k in CONTRACT:
        assert k in block
    assert sum(block["by_cause"].values()) == pytest.approx(block["interruptions_mean"])
    assert 0 < block["ettr_p5"] <= block["ettr_mean"] < 1
    assert block["interruptions_p5"] <= block["interruptions_mean"] <= block["interruptions_p95"]
    cats = res.lost_gpu_hours_by_category
    assert sum(cats.values()) == pytest.approx(res.lost_gpu_hours, rel=1e-9)
    assert res.wasted_usd == pytest.approx(res.lost_gpu_hours * 3.0)
    json.loads(to_json(block))
    with pytest.raises(ValidationError):
        res.ettr_mean = 1.0  # type: ignore[misc]


def test_same_seed_same_result(rcat, small):
    sc, res = small
    again = analyze(sc, rcat, rs.estimate(gpus=4096, days=20))
    assert again.to_contract() == res.to_contract()


def test_summary_rows_and_figures(small):
    _, res = small
    from clustertwin.report import views
    from clustertwin.report.views import reliability as view

    rows = views.rows(res)
    assert all(isinstance(a, str) and isinstance(b, str) for a, b in rows)
    figs = view.figures(res)
    assert [n for n, _ in figs] == ["interruptions", "ETTR"]
    assert [t.name for t in figs[1][1].data][:2] == ["Simulated (mean over trials)", "Daly model"]


def test_design_storage_and_spares_are_used(rcat):
    from dataclasses import replace

    from clustertwin.design import design as make_design

    sc = rs.scenario(rcat, gpus=4096, spare_nodes=40, reliability={"trials": 50})
    est = rs.estimate(gpus=4096, days=5)
    d = make_design(sc, rcat, est)
    pfs = tuple(replace(t, write_gbps=50.0, read_gbps=100.0) if t.tier == "pfs" else t
                for t in d.storage.tiers)
    d = replace(d, storage=replace(d.storage, tiers=pfs, nvme_write_gbps_per_node=10.0))
    res = analyze(sc, rcat, est, d)
    assert res.storage_write_gbps == 50.0 and res.storage_read_gbps == 100.0
    assert res.checkpoint_write_s == pytest.approx(res.checkpoint_size_gb / 50.0)
    assert res.spare_nodes == d.spare_nodes == 40
    assert res.checkpoint_nvme_write_s == pytest.approx(res.checkpoint_size_gb / (512 * 10.0))
    # without a design stage: cluster.spare_nodes and the default storage
    res2 = analyze(rs.scenario(rcat, gpus=4096, spare_nodes=20, reliability={"trials": 50}), rcat, est)
    assert res2.spare_nodes == 20 and "default" in res2.storage_source


def test_no_spares_means_waiting_for_repair(rcat):
    sc = rs.scenario(rcat, gpus=4096, spare_nodes=0, reliability={"trials": 50})
    res = analyze(sc, rcat, rs.estimate(gpus=4096, days=10))
    assert res.lost_gpu_hours_by_category["waiting_for_repair"] > 0
    assert any("spare" in n for n in res.notes)


def test_async_blocking_sets_persist_window(rcat):
    sc = rs.scenario(rcat, gpus=4096, spare_nodes=8,
                     reliability={"trials": 50, "checkpoint_blocking_s": 0.5})
    res = analyze(sc, rcat, rs.estimate(gpus=4096, days=5))
    assert res.checkpoint_blocking_s == 0.5
    assert res.checkpoint_persist_s == pytest.approx(res.checkpoint_write_s - 0.5)


def test_interval_shorter_than_write_is_infeasible(rcat):
    sc = rs.scenario(rcat, gpus=4096, reliability={"checkpoint_interval_min": 0.1,
                                                   "checkpoint_blocking_s": 30})
    with pytest.raises(InfeasibleError) as e:
        analyze(sc, rcat, rs.estimate(gpus=4096, days=5))
    assert e.value.problems[0].path == "reliability.checkpoint_interval_min"
    assert e.value.problems[0].source == "test.yaml"


def test_unknown_profile_and_negative_values(rcat):
    sc = rs.scenario(rcat, gpus=4096)
    bad = sc.model_copy(update={"reliability": sc.reliability.model_copy(
        update={"failure_profile": "nope"})})
    with pytest.raises(ScenarioError) as e:
        analyze(bad, rcat, rs.estimate(gpus=4096))
    assert e.value.problems[0].path == "reliability.failure_profile"
    neg = sc.model_copy(update={"reliability": sc.reliability.model_copy(
        update={"restart_min": -1.0, "checkpoint_interval_min": 0.0})})
    with pytest.raises(ScenarioError) as e:
        analyze(neg, rcat, rs.estimate(gpus=4096))
    assert {p.path for p in e.value.problems} == {"reliability.restart_min",
                                                 "reliability.checkpoint_interval_min"}


def test_schema_rejects_negative_rate(rcat):
    with pytest.raises(ScenarioError):
        rs.scenario(rcat, reliability={"failures_per_1000_node_days": -1})


def test_hopeless_job_is_infeasible(rcat):
    sc = rs.scenario(rcat, gpus=131072, spare_nodes=100,
                     reliability={"failures_per_1000_node_days": 200, "restart_min": 120})
    with pytest.raises(InfeasibleError):
        analyze(sc, rcat, rs.estimate(gpus=131072, days=30))


def test_zero_failure_rate(rcat):
    sc = rs.scenario(rcat, gpus=4096, reliability={"failures_per_1000_node_days": 0, "trials": 20})
    res = analyze(sc, rcat, rs.estimate(gpus=4096, days=5))
    assert res.interruptions_mean == 0 and res.ettr_mean > 0.98
    json.loads(to_json(res.to_contract()))
