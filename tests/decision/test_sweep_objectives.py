"""Decisions across scenarios (issue 21): sweeps carry ``decision.*`` columns, the objectives
``trained_by`` and ``cost_to_model`` rank them, and scenarios that train different models or
token counts are ranked within each model, never against each other."""

from __future__ import annotations

import copy

import pytest

from clustertwin.sweep import choose as ch
from clustertwin.sweep.api import sweep

SMALL = {
    "schema_version": 1, "name": "small",
    "model": {"preset": "llama3-8b"},
    "training": {"tokens": 1e11, "seq_len": 8192, "global_batch_tokens": 4194304},
    "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": 64},
    "reliability": {"trials": 50, "seed": 7},
    "buildout": {"profile": "existing-facility", "start_date": "2027-01-05"},
}


GPU_CASES = [("h100", {"cluster.gpu": "h100-sxm-80gb", "cluster.node": "dgx-h100"}),
             ("h200", {"cluster.gpu": "h200", "cluster.node": "hgx-h200"})]


@pytest.fixture(scope="module")
def target_gpu_table():
    """decision.target_date x GPU type: 2 x 2 scenarios."""
    grid = {"decision.target_date": ["2027-03-01", "2029-01-01"]}
    return sweep(copy.deepcopy(SMALL), grid, cases=GPU_CASES, workers=1, cache=False)


def test_sweep_over_target_date_and_gpu_has_decision_columns(target_gpu_table):
    t = target_gpu_table
    assert t.num_rows == 4 and all(e is None for e in t.column("error").to_pylist())
    names = set(t.column_names)
    for col in ("decision.best", "decision.trained_by", "decision.cost_usd", "decision.meets_target",
                "decision.by_mode.colo.trained_by_p90", "decision.by_mode.build.cost_usd"):
        assert col in names, col
    targets = t.column("decision.target_date").to_pylist()
    build_met = t.column("decision.by_mode.build.meets_target").to_pylist()
    # a build-out cannot finish in eight weeks; within two years it does
    assert [m for m, d in zip(build_met, targets, strict=True) if str(d) == "2027-03-01"] == [False, False]
    assert [m for m, d in zip(build_met, targets, strict=True) if str(d) == "2029-01-01"] == [True, True]


def test_sweep_over_gpu_type_ranks_by_trained_by():
    t = sweep(copy.deepcopy(SMALL), cases=GPU_CASES, workers=1, cache=False)
    for objective in ("trained_by", "cost_to_model"):
        c = ch.choose(t, objective)
        assert len(c.ranked) == 2 and c.best is not None
        col = t.column(ch.OBJECTIVES[objective]).to_pylist()
        key = ch.number_or_none
        assert key(col[c.ranked[0]]) <= key(col[c.ranked[1]])


def test_different_models_ranked_within_each_model():
    base = copy.deepcopy(SMALL)
    cases = [("8b-64", {"cluster.gpus": 64}), ("8b-128", {"cluster.gpus": 128}),
             ("70b-128", {"cluster.gpus": 128, "model.preset": "llama3-70b", "training.tokens": 2e10})]
    t = sweep(base, cases=cases, workers=1, cache=False)
    c = ch.choose(t, "cost_to_model")
    assert c.best is None and len(c.jobs) == 2 and len(c.best_by_job) == 2
    points = t.column("point").to_pylist()
    jobs = [points[i] for i in c.ranked]
    # rows of one model are contiguous in the ranking: never interleaved across models
    first_70b = [i for i, p in enumerate(jobs) if p.startswith("70b")]
    assert first_70b == list(range(first_70b[0], first_70b[0] + len(first_70b)))
