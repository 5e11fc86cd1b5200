"""Costs of overlapped communication, ring attention on short chunks, latency-bound ring
collectives at scale and the pipeline's memory-heaviest stage."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from clustertwin.perf import collectives as coll
from clustertwin.perf.costmodel import PLAN_KEYS, Job, evaluate
from clustertwin.perf.flops import Shape
from clustertwin.perf.pipeline import held_layer_batches
from tests.perf.test_formulas import toy_system

LLAMA = Shape(
    layers=126, hidden=16384, ffn=53248, heads=128, kv_heads=8, vocab=128256, swiglu=True
)


def _plan(**kw: int) -> dict[str, np.ndarray]:
    base = dict(tp=8, pp=16, cp=1, ep=1, dp=64, micro_batch=1, virtual_stages=4, recompute=0)
    base.update(sequence_parallel=1, zero=1)
    base.update(kw)
    return {k: np.array([base[k]]) for k in PLAN_KEYS}


def test_reduce_scatter_pays_ring_latency_per_domain():
    sys = toy_system()
    small = 1e5
    t64 = coll.reduce_scatter(sys, small, np.array(64 * 8), np.array(1))
    t512 = coll.reduce_scatter(sys, small, np.array(512 * 8), np.array(1))
    # d - 1 steps of ~5 us each: 63 -> 511 domains is ~8x the latency
    assert float(t512) > 6 * float(t64)
    assert float(t512) > 511 * 5e-6


def test_interference_slows_overlapped_plans():
    job = Job(LLAMA, 8192, 2048)
    free = toy_system()
    busy = replace(free, gen={**free.gen, "tp_overlap": 0.5, "interference_nvlink": 0.5})
    calm = replace(free, gen={**free.gen, "tp_overlap": 0.5, "interference_nvlink": 0.0})
    plan = _plan()
    assert evaluate(job, busy, plan)["step_time_s"][0] > evaluate(job, calm, plan)["step_time_s"][0]


def test_short_ring_attention_chunks_cost_efficiency():
    job = Job(LLAMA, 8192, 2048)
    base = toy_system()
    slow = replace(base, gen={**base.gen, "cp_chunk_half_tokens": 1024.0, "flash_attention": 1})
    fast = replace(base, gen={**base.gen, "cp_chunk_half_tokens": 0.0, "flash_attention": 1})
    plan = _plan(tp=4, cp=8, dp=32)
    assert evaluate(job, slow, plan)["step_time_s"][0] > evaluate(job, fast, plan)["step_time_s"][0]
    # cp = 1 is untouched by the ring-attention penalty
    one = _plan()
    assert np.isclose(
        evaluate(job, slow, one)["step_time_s"][0], evaluate(job, fast, one)["step_time_s"][0]
    )


def test_llama3_stage_balancing_memory():
    """126 layers on 16 stages, 1F1B: stages hold 7x16 or 8x15 layer-batches (Llama 3 3.3.2)."""
    held = held_layer_batches(126, np.array([16]), np.array([32]), np.array([1]))
    assert held[0] == 120
    assert held_layer_batches(24, np.array([1]), np.array([8]), np.array([1]))[0] == 24


def test_zero3_gathers_grow_with_dp_at_small_messages():
    shape = Shape(layers=32, hidden=4096, ffn=14336, heads=32, kv_heads=8, vocab=32000, swiglu=True)
    base = toy_system()
    sys = replace(base, gen={**base.gen, "dp_overlap": 0.3, "interference_network": 0.1})
    out = []
    for gpus in (64, 2048):
        job = Job(shape, 4096, gpus)
        plan = _plan(tp=1, pp=1, dp=gpus, virtual_stages=1, sequence_parallel=0, zero=3)
        out.append(evaluate(job, sys, plan)["zero3_exposed_s"][0])
    assert out[1] > out[0]
