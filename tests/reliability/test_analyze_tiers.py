"""The reliability stage with a two-tier schedule: new keys, contract, errors, views; and that
the single-tier result does not change when the new keys are absent or at their defaults."""

from __future__ import annotations

import json

import pytest
import reliability_support as rs

from clustertwin.cli.common import to_json
from clustertwin.errors import InfeasibleError, ScenarioError
from clustertwin.reliability import analyze

TIER_KEYS = ("checkpoint_tiers", "local_checkpoint_interval_min", "local_optimal_interval_min",
             "pfs_every_local", "optimal_pfs_every_local", "local_checkpoint_replicas",
             "local_checkpoint_blocking_s", "local_checkpoint_write_s", "local_restore_share",
             "local_loss_share", "pfs_only_ettr_mean", "ettr_gain_over_pfs_only",
             "lost_progress_per_interruption_min", "include_planned")


def _run(rcat, gpus=4096, days=10, spares=8, **rel):
    sc = rs.scenario(rcat, gpus=gpus, spare_nodes=spares, reliability={"trials": 100, **rel})
    return analyze(sc, rcat, rs.estimate(gpus=gpus, days=days))


@pytest.fixture(scope="module")
def fixed(rcat):
    return _run(rcat, local_checkpoint_interval_min=10, checkpoint_interval_min=60,
                local_checkpoint_replicas=1, checkpoint_blocking_s=20)


def test_defaults_keep_the_single_tier_result(rcat):
    base = _run(rcat, seed=4)
    explicit = _run(rcat, seed=4, local_checkpoint_interval_min="none", local_checkpoint_replicas=0,
                    local_checkpoint_blocking_s="auto", local_checkpoint_write_s="auto",
                    repair_h="auto", include_planned=True)
    assert explicit.to_contract() == base.to_contract()
    assert base.checkpoint_tiers == 1 and base.local_checkpoint_interval_min is None


def test_two_tier_contract(fixed):
    block = fixed.to_contract()
    for k in TIER_KEYS:
        assert k in block
    assert block["checkpoint_tiers"] == 2
    assert block["local_checkpoint_interval_min"] == 10
    assert block["pfs_every_local"] == 6 and block["checkpoint_interval_min"] == 60
    assert block["local_interval_source"] == "scenario" and block["interval_source"] == "scenario"
    assert block["local_loss_share"] == 0.0 and block["local_restore_share"] > 0.9
    assert block["ettr_gain_over_pfs_only"] > 0
    cats = fixed.lost_gpu_hours_by_category
    assert sum(cats.values()) == pytest.approx(fixed.lost_gpu_hours, rel=1e-9)
    json.loads(to_json(block))


def test_two_tier_views(fixed):
    from clustertwin.report import views
    from clustertwin.report.views import reliability as view

    labels = [a for a, _ in views.rows(fixed)]
    assert "local checkpoints" in labels and "  file system only" in labels
    figs = dict(view.figures(fixed))
    names = [t.name for t in figs["ETTR"].data]
    assert any(n.startswith("Two tiers") for n in names)
    assert any(n.startswith("Local interval used") for n in names)


def test_auto_searches_both_intervals(rcat):
    res = _run(rcat, local_checkpoint_interval_min="auto", checkpoint_blocking_s=30, seed=1)
    assert res.local_interval_source == "optimum" and res.interval_source == "optimum"
    assert res.checkpoint_interval_min == pytest.approx(res.pfs_every_local
                                                        * res.local_checkpoint_interval_min)
    assert res.local_checkpoint_interval_min <= res.checkpoint_interval_min
    assert res.optimal_interval_min == pytest.approx(res.optimal_pfs_every_local
                                                     * res.local_optimal_interval_min)
    same = _run(rcat, local_checkpoint_interval_min="auto", checkpoint_blocking_s=30, seed=1)
    assert same.to_contract() == res.to_contract()


def test_fixed_file_system_interval_picks_a_divisor(rcat):
    res = _run(rcat, local_checkpoint_interval_min="auto", checkpoint_interval_min=60,
               checkpoint_blocking_s=30)
    assert res.checkpoint_interval_min == 60
    assert res.local_checkpoint_interval_min * res.pfs_every_local == pytest.approx(60)


def test_node_local_only_notes_the_loss(rcat):
    res = _run(rcat, local_checkpoint_interval_min=10, local_checkpoint_replicas=0)
    assert res.local_loss_share == pytest.approx(356 / 419, abs=1e-3)   # Table 5: repairs
    assert any("die with their node" in n for n in res.notes)


def test_repair_h_and_include_planned(rcat):
    res = _run(rcat, spares=0, repair_h=2, include_planned=False)
    assert res.repair_h == 2 and res.planned_interruptions_mean == 0
    assert res.include_planned is False
    longer = _run(rcat, spares=0, repair_h=20)
    assert longer.lost_gpu_hours_by_category["waiting_for_repair"] > \
        res.lost_gpu_hours_by_category["waiting_for_repair"]


@pytest.mark.parametrize("key,value", [("local_checkpoint_interval_min", 0),
                                       ("local_checkpoint_interval_min", "sometimes"),
                                       ("local_checkpoint_replicas", -1),
                                       ("local_checkpoint_blocking_s", -1),
                                       ("local_checkpoint_write_s", -0.5),
                                       ("repair_h", -3),
                                       ("include_planned", "maybe")])
def test_bad_new_keys_are_one_line_each(rcat, key, value):
    with pytest.raises(ScenarioError) as e:
        rs.scenario(rcat, reliability={key: value})
    assert [p.path for p in e.value.problems] == [f"reliability.{key}"]


def test_local_longer_than_file_system_is_infeasible(rcat):
    with pytest.raises(InfeasibleError) as e:
        _run(rcat, local_checkpoint_interval_min=90, checkpoint_interval_min=60)
    assert e.value.problems[0].path == "reliability.local_checkpoint_interval_min"


def test_local_shorter_than_its_write_is_infeasible(rcat):
    with pytest.raises(InfeasibleError) as e:
        _run(rcat, local_checkpoint_interval_min=0.5, local_checkpoint_write_s=60)
    assert e.value.problems[0].path == "reliability.local_checkpoint_interval_min"


def test_stage_checks_duck_typed_values(rcat):
    sc = rs.scenario(rcat, gpus=4096)
    bad = sc.model_copy(update={"reliability": sc.reliability.model_copy(
        update={"local_checkpoint_replicas": -2, "repair_h": -1.0})})
    with pytest.raises(ScenarioError) as e:
        analyze(bad, rcat, rs.estimate(gpus=4096))
    assert {p.path for p in e.value.problems} == {"reliability.local_checkpoint_replicas",
                                                 "reliability.repair_h"}
