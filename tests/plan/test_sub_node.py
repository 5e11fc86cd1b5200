"""Jobs smaller than a node (issue 20): training.gpus 1, 2 or 4 of an 8-GPU node, and a
one-node cluster with fewer GPUs installed than the node holds, plan end to end."""

from __future__ import annotations

import pytest

from clustertwin.errors import ScenarioError
from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict

GPT2 = {"layers": 12, "hidden": 768, "ffn_hidden": 3072, "heads": 12, "kv_heads": 12,
        "vocab": 50257, "mlp": "gelu"}


def doc(installed, gpus="auto"):
    return {
        "name": f"gpt2-{installed}-{gpus}",
        "model": dict(GPT2),
        "training": {"tokens": 1e9, "seq_len": 2048, "global_batch_tokens": 65536, "gpus": gpus},
        "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": installed},
        "reliability": {"trials": 20},
    }


@pytest.mark.parametrize("installed, gpus", [(8, 1), (8, 2), (8, 4), (1, "auto"), (2, "auto"),
                                             (4, "auto"), (1, 1)])
def test_part_of_a_node_plans_end_to_end(installed, gpus, catalog):
    p = make_plan(scenario_from_dict(doc(installed, gpus), catalog=catalog), catalog)
    want = installed if gpus == "auto" else gpus
    par = p.training.parallelism
    assert p.training.gpus == want
    assert par["tp"] * par["pp"] * par["cp"] * par["dp"] == want
    assert p.training.tokens_per_s > 0 and 0 < p.training.mfu < 1


def test_more_gpus_run_faster_inside_one_node(catalog):
    tps = [make_plan(scenario_from_dict(doc(8, g), catalog=catalog), catalog).training.tokens_per_s
           for g in (1, 2, 4)]
    assert tps[0] < tps[1] < tps[2]


def test_a_count_that_does_not_divide_the_node_is_refused_in_one_line(catalog):
    with pytest.raises(ScenarioError) as ei:
        scenario_from_dict(doc(8, 3), catalog=catalog)
    (line,) = ei.value.lines()
    assert "training.gpus" in line and "try 2" in line


@pytest.mark.parametrize("precision", ["bf16", "fp8"])
def test_estimate_and_plan_print_the_same_mfu(precision, catalog):
    """One MFU: model FLOPs without recompute over the dense peak of the precision used, in the
    estimate's plan table and in the plan (issue 20: 81.6% against 40.8% for one FP8 plan)."""
    from clustertwin.cli.perf import top_plans

    d = doc(8, 8)
    d["training"]["precision"] = precision
    sc = scenario_from_dict(d, catalog=catalog)
    out = top_plans(sc, catalog, 3)
    p = make_plan(sc, catalog)
    peak = catalog.gpu("h100-sxm-80gb").peak_tflops[precision]
    assert out["top"][0]["mfu"] == pytest.approx(p.training.mfu, rel=1e-9)
    assert p.training.mfu == pytest.approx(p.training.model_tflops_per_gpu / peak, rel=1e-9)
    assert p.training.mfu <= p.training.hfu * (1 + 1e-12)
