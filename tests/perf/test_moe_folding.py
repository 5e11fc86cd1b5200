"""MoE parallel folding (stack ``expert_tp_folding``): expert TP 1, the expert-parallel group
laid over the tensor x context x data-parallel ranks, as Megatron-core runs MoE models
(Liu et al. 2025, arXiv 2504.14960; NVIDIA Megatron-MoE-ModelZoo Qwen3-235B plans: EP32 on
TP2 x DP16, EP8 inside one node with TP2 or TP4)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from clustertwin.perf.costmodel import PLAN_KEYS, Job, evaluate
from clustertwin.perf.flops import Shape
from clustertwin.perf.search import search
from clustertwin.perf.stacks import profile_of
from clustertwin.perf.system import default_node, system_from_catalog

QWEN3 = Shape(
    layers=94, hidden=4096, ffn=12288, heads=64, kv_heads=4, vocab=151936, swiglu=True,
    head_size=128, experts=128, active_experts=8, expert_ffn=1536,
)


def _setup(catalog, fold: bool):
    sys = system_from_catalog(catalog, "h100-sxm-80gb", default_node(catalog, "h100-sxm-80gb"),
                              "ib-ndr")
    st = replace(profile_of(catalog, "megatron", sys.generation), expert_tp_folding=fold)
    return Job(QWEN3, 4096, 2048, "bf16", stack=st), sys


def _one(**kw: int) -> dict[str, np.ndarray]:
    base = dict(tp=2, pp=8, cp=1, ep=8, dp=16, micro_batch=1, virtual_stages=4, recompute=1,
                sequence_parallel=1, zero=1)
    base.update(kw)
    return {k: np.array([base[k]]) for k in PLAN_KEYS}


def test_folding_makes_ep_beyond_dp_expressible(catalog):
    """EP32 over TP2 x DP16 (published Megatron plan) builds only when the stack folds."""
    pinned = {"tp": 2, "pp": 8, "dp": 16, "ep": 32}
    folded, plain = (search(_setup(catalog, f)[0], _setup(catalog, f)[1], 256, pinned)
                     for f in (True, False))
    assert folded.size > 0 and plain.size == 0


def test_folding_keeps_flops_and_moves_ep_inside_the_node(catalog):
    """Same model FLOPs either way; folded EP8 on TP2 spans 8 consecutive ranks (one node), the
    unfolded one 16 (two nodes), so its all-to-all is cheaper and the step shorter. Expert
    weights and gradients per GPU double (whole experts); their optimizer shard group doubles
    too, so the states grow, by less than 2x."""
    out = {}
    for fold in (True, False):
        job, sys = _setup(catalog, fold)
        out[fold] = {k: float(v[0]) for k, v in evaluate(job, sys, _one()).items()}
    assert out[True]["model_flops"] == out[False]["model_flops"]
    assert out[True]["ep_comm_s"] < 0.5 * out[False]["ep_comm_s"]
    assert out[True]["step_time_s"] < out[False]["step_time_s"]
    assert 1.0 < out[True]["state_bytes"] / out[False]["state_bytes"] < 2.0
