"""FLOP, memory and collective formulas against their published closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from clustertwin.perf import collectives as coll
from clustertwin.perf import memory as mem
from clustertwin.perf.flops import (
    Shape,
    forward_flops_per_token,
    head_flops,
    megatron_eq3_flops,
    model_flops_per_token,
)
from clustertwin.perf.system import System

GPT = Shape(
    layers=96, hidden=12288, ffn=4 * 12288, heads=96, kv_heads=96, vocab=51200, swiglu=False
)
GEN = dict(
    gemm_efficiency=0.7,
    fp8_gemm_efficiency=0.6,
    gemm_overhead_us=0.0,
    gemm_half_gflop=0.0,
    hbm_efficiency=0.8,
    flash_attention=0,
    attention_efficiency=0.5,
    nvlink_efficiency=0.8,
    nvlink_latency_us=1.0,
    tp_overlap=0.0,
    dp_overlap=1.0,
    ep_overlap=0.5,
    reserve_gib=3.0,
    fragmentation=0.0,
)
FAB = dict(bus_efficiency=0.85, alltoall_efficiency=0.6, latency_us=5.0)


def toy_system(domain: int = 8, oversub: float = 1.0) -> System:
    return System(
        gpu_id="toy",
        generation="toy",
        peak_flops={"bf16": 1e15, "fp16": 1e15},
        hbm_bytes=80 * 2**30,
        hbm_bw=3e12,
        nvlink_bw=450e9,
        nvlink_domain=domain,
        gpus_per_node=domain,
        nic_bw=50e9,
        fabric_id="toy",
        switch_radix=64,
        hop_latency_s=1.5e-7,
        oversubscription=oversub,
        gen=dict(GEN),
        fab=dict(FAB),
    )


def test_executed_flops_match_megatron_eq3():
    """Narayanan et al. 2021 eq. 3 = 4 forward passes of the layers (full recompute, no causal
    discount) + 3 of the LM head."""
    s, batch = 2048, 1536
    per_tok = 4 * (
        forward_flops_per_token(GPT, s, causal=False) - head_flops(GPT)
    ) + 3 * head_flops(GPT)
    assert per_tok * batch * s == pytest.approx(megatron_eq3_flops(GPT, batch, s), rel=1e-3)


def test_model_flops_close_to_6n_for_short_sequences():
    from clustertwin.catalog.params import param_count
    from clustertwin.scenario.model import ResolvedModel

    n = param_count(
        ResolvedModel(name="gpt3-175b", layers=96, hidden=12288, ffn_hidden=49152, heads=96,
                      kv_heads=96, vocab=51200, mlp="gelu")
    ).total
    assert model_flops_per_token(GPT, 128) == pytest.approx(6 * n, rel=0.01)


def test_moe_counts_only_active_experts():
    moe = Shape(
        layers=4,
        hidden=1024,
        ffn=4096,
        heads=8,
        kv_heads=8,
        vocab=1000,
        swiglu=True,
        experts=64,
        active_experts=2,
        shared_experts=1,
        expert_ffn=512,
        dense_layers=1,
    )
    dense_part = forward_flops_per_token(moe, 1)
    # 3 MoE layers x (router + 3 experts of 3 matrices) + 1 dense layer + attention + head
    mlp = 3 * (2 * 1024 * 64 + 3 * 2 * 3 * 1024 * 512) + 2 * 3 * 1024 * 4096
    attn = 4 * (2 * 1024 * (2 * 1024 + 2 * 1024) + 4 * 1 * 1024 * 0.5)
    assert dense_part == pytest.approx(mlp + attn + 2 * 1024 * 1000)


def test_korthikanti_activation_formulas():
    """Table 2 of Korthikanti et al. 2022: sbh(34 + 5as/h) with no parallelism, 34sbh/t with
    sequence parallelism and selective recompute, 2sbh with full recompute."""
    s, b, h, a = 2048, 1, 12288, 96
    one = np.array([1.0])
    none = mem.layer_activation_bytes(GPT, s * b * one, s * one, one, 0 * one, 0 * one, mem.ActKernels(flash=False))
    assert none[0] == pytest.approx(s * b * h * (34 + 5 * a * s / h))
    t = 8 * one
    sel = mem.layer_activation_bytes(GPT, s * b * one, s * one, t, one, one, mem.ActKernels(flash=False))
    assert sel[0] == pytest.approx(34 * s * b * h / 8)
    tp_only = mem.layer_activation_bytes(
        GPT, s * b * one, s * one, t, 0 * one, 0 * one, mem.ActKernels(flash=False)
    )
    assert tp_only[0] == pytest.approx(s * b * h * (10 + 24 / 8 + 5 * a * s / (h * 8)))
    full = mem.layer_activation_bytes(GPT, s * b * one, s * one, t, 0 * one, 2 * one, mem.ActKernels(flash=False))
    assert full[0] == pytest.approx(2 * s * b * h)


def test_zero_stages_shard_states():
    p = np.array([1e9] * 4)
    n = np.array([64.0] * 4)
    z = np.array([0, 1, 2, 3])
    out = mem.state_bytes(p, np.zeros(4), z, n, n)
    assert out[0] == pytest.approx(16e9)
    assert out[1] == pytest.approx(4e9 + 12e9 / 64)
    assert out[2] == pytest.approx(2e9 + 14e9 / 64)
    assert out[3] == pytest.approx(16e9 / 64)


def test_all_reduce_tiers():
    sysm = toy_system()
    nb = np.array([1e9])
    inside = coll.all_reduce(sysm, nb, np.array([8.0]), np.array([1.0]))
    across = coll.all_reduce(sysm, nb, np.array([8.0]), np.array([8.0]))
    # NVLink: 2*7/8 * 1e9 / (450e9*0.8); network: 2*7/8*1e9/(50e9*0.85)
    assert inside[0] == pytest.approx(2 * 7 / 8 * 1e9 / 360e9 + 14e-6, rel=1e-6)
    assert across[0] > 5 * inside[0]
    # an NVL72 domain keeps a 64-way group on NVLink
    assert coll.all_reduce(toy_system(72), nb, np.array([64.0]), np.array([1.0]))[0] < across[0]


def test_all_to_all_oversubscription_slows_large_groups():
    nb = np.array([1e8])
    n = np.array([512.0])
    fast = coll.all_to_all(toy_system(), nb, n, np.array([8.0]))
    slow = coll.all_to_all(toy_system(oversub=4.0), nb, n, np.array([8.0]))
    assert slow[0] > 3 * fast[0]


def test_fabric_tiers_from_radix():
    s = toy_system()
    assert s.tiers(8 * 32) == 1
    assert s.tiers(8 * 2048) == 2  # 2048 nodes = 64^2/2 endpoints per rail
    assert s.tiers(8 * 2049) == 3


def test_megatron_interleaved_warmup_counts():
    """Megatron-core schedules.py: rank r warms up 2(p-r-1) + (v-1)p chunk forwards and holds one
    more at its peak, at most all m*v; m == p runs every forward first (same as 1F1B)."""
    from clustertwin.perf.pipeline import held_layer_batches, inflight_chunks

    p, v = np.array([16]), np.array([4])
    assert inflight_chunks(p, np.array([32]), v, 0)[0] == 2 * 15 + 3 * 16 + 1
    assert inflight_chunks(p, np.array([32]), v, 1)[0] == 2 * 14 + 3 * 16 + 1
    assert inflight_chunks(p, np.array([16]), v, 0)[0] == 16 * 4
    assert inflight_chunks(p, np.array([32]), np.array([1]), 0)[0] == 16
    # 126 layers, 16 stages of 8 (ends 7), 16 micro-batches: 16 x 8 layers on rank 1
    assert held_layer_batches(126, p, np.array([16]), v)[0] == 128
    assert held_layer_batches(126, p, np.array([32]), v)[0] == 77 * 2


def test_modern_stack_activation_terms():
    """Fused SwiGLU keeps the two GEMM outputs (4f) not their product; flash attention keeps an
    fp32 log-sum-exp per query head; bf16 training keeps fp32 main gradients."""
    llama = Shape(layers=1, hidden=16384, ffn=53248, heads=128, kv_heads=8, vocab=1, swiglu=True)
    one, t = np.array([1.0]), np.array([8.0])
    args = (llama, 8192 * one, 8192 * one, t, one, 0 * one)
    plain = mem.layer_activation_bytes(*args, mem.ActKernels(flash=True))
    fused = mem.layer_activation_bytes(*args, mem.ActKernels(flash=True, fused_glu=True))
    h, f, kv, a = 16384, 53248, 1024, 128
    assert fused[0] == pytest.approx(8192 * ((12 * h + 4 * kv + 4 * f) / 8 + 4 * a / 8))
    assert plain[0] - fused[0] == pytest.approx(8192 * 2 * f / 8)
    assert mem.grad_bytes("bf16") == 4.0 and mem.grad_bytes("fp16") == 2.0
    z = np.array([1])
    out = mem.state_bytes(np.array([1e9]), np.zeros(1), z, np.array([64.0]), np.array([64.0]), 4.0)
    assert out[0] == pytest.approx(6e9 + 12e9 / 64)  # Megatron guide: bf16/fp32 6 + 12/d
