"""Small clusters priced like small clusters (issue 21): one DGX H100 in a colocation hall.

Published range for an owned H100 in colocation at full use: $1.6 / $1.9 / $2.3 per GPU-hour
(decision-anchors section 6: capex $50k over 5 or 4 years, colocation at CBRE's $195/kW-month,
energy at $0.08/kWh; [C] from cited inputs). Go-live under 120 days with no assembly-line steps:
the DGX ships as an integrated system."""

from __future__ import annotations

import copy

import pytest

from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict

ASSEMBLY_STEPS = [*range(9, 21), *range(22, 31), 39, 41]  # chassis ... fans, NICs; 21 is a paper check


@pytest.fixture(scope="module")
def dgx(default_doc, catalog):
    d = copy.deepcopy(default_doc)
    d["model"] = {"preset": "llama3-8b"}
    d["training"] = {"tokens": 1e11, "seq_len": 8192, "global_batch_tokens": 1048576}
    d["cluster"] = {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": 8}
    d["economics"] = {"facility": "lease"}
    # bought when the published range's $50k-per-GPU capex was the price (H100 Freakonomics,
    # Aug 2024): GPU servers are priced at their purchase date (issue 37)
    d["buildout"] = {"profile": "colocation", "start_date": "2024-08-15"}
    d["decision"] = {"options": ["colo"]}
    return make_plan(scenario_from_dict(d, "one-dgx.yaml", catalog), catalog)


def test_one_dgx_goes_live_within_120_days(dgx):
    assert dgx.buildout.go_live_days_p50 < 120
    colo = dgx.decision.option("colo")
    assert (colo.ready_date - dgx.scenario.buildout.start_date).days < 120


def test_no_assembly_steps_for_an_integrated_node(dgx):
    for n in ASSEMBLY_STEPS:
        step = dgx.buildout.step(n)
        assert not step.applicable and step.likely_days == 0, n
    for n in (4, 31, 34, 87):  # received, powered up, burned in, racked
        assert dgx.buildout.step(n).applicable


@pytest.mark.parametrize("low,high", [(1.6, 2.3)], ids=["decision-anchors-6-owned-h100-colo"])
def test_owned_cost_in_published_range(dgx, low, high):
    assert low <= dgx.economics.owned_usd_per_gpu_hour <= high


def test_staff_floor_named(dgx):
    assert any("staff_fte_min_colo" in w for w in dgx.warnings)
