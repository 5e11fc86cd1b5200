"""training.stack: auto (issue 20): the documented table, the stack reported in the JSON, and
table stack names mapped to catalog stacks."""

from __future__ import annotations

import pytest

from clustertwin.perf import estimate
from clustertwin.perf.csvrows import stack_name
from clustertwin.scenario import scenario_from_dict

GPT2 = {"layers": 12, "hidden": 768, "ffn_hidden": 3072, "heads": 12, "kv_heads": 12,
        "vocab": 50257, "mlp": "gelu"}


def scen(installed, gpus="auto", stack=None, catalog=None):
    t = {"tokens": 1e9, "seq_len": 2048, "global_batch_tokens": 2**20, "gpus": gpus}
    if stack:
        t["stack"] = stack
    d = {"name": "x", "model": dict(GPT2), "training": t,
         "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": installed}}
    return scenario_from_dict(d, catalog=catalog)


@pytest.mark.parametrize("installed, gpus, want", [
    (1, "auto", "pytorch"), (8, 4, "pytorch"), (8, "auto", "pytorch"),
    (64, "auto", "megatron"), (64, 8, "pytorch"), (64, 16, "megatron"),
])
def test_auto_picks_by_job_size(installed, gpus, want, catalog):
    sc = scen(installed, gpus, catalog=catalog)
    assert sc.training.stack == "auto"
    assert estimate(sc, catalog).stack == want


def test_a_named_stack_is_kept(catalog):
    assert estimate(scen(8, stack="torchtitan", catalog=catalog), catalog).stack == "torchtitan"


def test_the_eager_stack_is_slower_than_the_fused_one_on_one_gpu(catalog):
    eager = estimate(scen(1, stack="pytorch", catalog=catalog), catalog).tokens_per_s
    comp = estimate(scen(1, stack="pytorch-compile", catalog=catalog), catalog).tokens_per_s
    mega = estimate(scen(1, stack="megatron", catalog=catalog), catalog).tokens_per_s
    assert eager < comp < mega


@pytest.mark.parametrize("text, want", [
    ("torchtitan compile", "torchtitan-compile"), ("torchtitan", "torchtitan"),
    ("PyTorch eager + SDPA", "pytorch"), ("torch.compile", "pytorch-compile"),
    ("PyTorch FSDP", "fsdp"), ("NeMo 24.09", "megatron"),
])
def test_table_stack_names(text, want, catalog):
    assert stack_name(catalog, text) == want
