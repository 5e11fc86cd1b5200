"""Refusals say what to change in the user's units (issue 20): a stack without an interleaved
schedule and pinned virtual stages (the DeepSpeed 405B refusal said 'about 1x more GPUs'), and
memory refusals naming recompute, ZeRO stage, micro-batch and a GPU count in whole nodes."""

from __future__ import annotations

import pytest

from clustertwin.errors import InfeasibleError, UserError
from clustertwin.perf import estimate
from clustertwin.scenario import scenario_from_dict


def doc(gpus, stack, parallelism="auto"):
    return {"name": "r", "model": {"preset": "llama3-405b"},
            "training": {"tokens": 15.6e12, "seq_len": 8192, "global_batch_tokens": 2**24,
                         "stack": stack, "parallelism": parallelism},
            "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": gpus}}


def test_deepspeed_405b_plans_on_1024_gpus(catalog):
    est = estimate(scenario_from_dict(doc(1024, "deepspeed"), catalog=catalog), catalog)
    assert est.stack == "deepspeed" and est.parallelism["virtual_stages"] == 1


def test_interleaving_pinned_on_a_stack_without_it(catalog):
    sc = scenario_from_dict(doc(1024, "deepspeed", {"tp": 8, "pp": 16, "virtual_stages": 4}), catalog=catalog)
    with pytest.raises(UserError) as ei:
        estimate(sc, catalog)
    (line,) = ei.value.lines()
    assert "training.parallelism.virtual_stages" in line and "must be 1" in line
    assert "more GPUs" not in line


def test_memory_refusal_in_user_units(catalog):
    sc = scenario_from_dict(doc(64, "deepspeed"), catalog=catalog)
    with pytest.raises(InfeasibleError) as ei:
        estimate(sc, catalog)
    (line,) = ei.value.lines()
    assert "cluster.gpus" in line and "nodes of 8" in line
    more = int(line.split("roughly ")[1].split(" GPUs")[0].replace(",", ""))
    assert more > 64 and more % 8 == 0
