"""The search memo of :mod:`clustertwin.perf.stage` (issue 36, cold start): an equal search
asked again (the deadline solver's next round, the estimate after a solve) is not run again;
a search that differs in any input is."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from clustertwin.perf import stage
from clustertwin.perf.jobsize import search_job
from clustertwin.scenario import scenario_from_dict
from tests.perf.test_search_estimate import SMALL


@pytest.fixture
def counted(monkeypatch):
    """search_job calls, with the memo empty at the start."""
    calls: list[int] = []
    monkeypatch.setattr(stage, "_BEST", {})
    monkeypatch.setattr(stage, "_RECENT", {})

    def counting(*args, **kw):
        calls.append(args[2])
        return search_job(*args, **kw)

    monkeypatch.setattr(stage, "search_job", counting)
    return calls


def _scen(catalog, **training):
    d = copy.deepcopy(SMALL)
    d["training"] = {**d["training"], **training}
    return scenario_from_dict(d, "test.yaml", catalog)


def test_equal_search_runs_once(catalog, counted):
    s = _scen(catalog)
    _, _, first = stage.run_search(s, catalog, 64)
    again = _scen(catalog)                      # another object, the same inputs
    _, _, second = stage.run_search(again, catalog, 64)
    assert counted == [64]
    assert second is first
    best = stage.fastest_plan(again, catalog, 64)
    assert counted == [64]
    i = int(first.ranked()[0])
    assert best == (int(first.metrics["gpus"][i]), float(first.metrics["tokens_per_s"][i]),
                    float(first.metrics["step_time_s"][i]))


def test_other_inputs_search_again(catalog, counted):
    stage.run_search(_scen(catalog), catalog, 64)
    stage.run_search(_scen(catalog), catalog, 32)                          # fewer GPUs
    stage.run_search(_scen(catalog, global_batch_seqs=256), catalog, 64)   # another batch
    stage.run_search(_scen(catalog, precision="fp16"), catalog, 64)        # another job
    assert counted == [64, 32, 64, 64]


def test_fastest_plan_kept_past_the_full_results(catalog, counted):
    """Only the last few whole results are kept; the fastest plan of every search is."""
    s = _scen(catalog)
    _, _, first = stage.run_search(s, catalog, 64)
    for gpus in (64, 48, 32, 16):
        stage.fastest_plan(s, catalog, gpus)
    assert len(stage._RECENT) == stage.RECENT_KEPT
    for gpus in (64, 48, 32, 16):
        stage.fastest_plan(s, catalog, gpus)
    assert counted == [64, 48, 32, 16]
    _, _, res = stage.run_search(s, catalog, 64)      # its whole result is gone: searched again
    assert counted == [64, 48, 32, 16, 64]
    assert res is not first
    for k in first.plans:
        assert np.array_equal(res.plans[k], first.plans[k])
    for k in first.metrics:
        assert np.array_equal(res.metrics[k], first.metrics[k])
