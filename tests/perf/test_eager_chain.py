"""Eager element-wise work priced op by op (issue 33): the chain of ``ELEMENTWISE_OPS`` a
kernels entry declares, its widths, launches and the host-issue floor of eager PyTorch."""

from __future__ import annotations

import typing
from dataclasses import replace

import numpy as np
import pytest

from clustertwin.catalog.models import ElementwiseOp
from clustertwin.perf import ops
from clustertwin.perf.flops import Shape
from clustertwin.perf.stacks import profile_of
from clustertwin.perf.system import default_node, system_from_catalog

GPT2 = Shape(layers=12, hidden=768, ffn=3072, heads=12, kv_heads=12, vocab=50257, swiglu=False)
EAGER = "pytorch+eager-materialised"


def ctx(catalog, stack, tokens, shape=GPT2):
    sys = system_from_catalog(catalog, "a100-sxm-80gb", default_node(catalog, "a100-sxm-80gb"),
                              "ib-hdr")
    st = profile_of(catalog, stack, sys.generation)
    one = np.ones(1)
    return ops.Ctx(sys, st, shape, "fp16", 1024.0, one, one, one, one * tokens, one)


def test_catalog_names_every_op_of_the_table():
    assert set(typing.get_args(ElementwiseOp)) == set(ops.ELEMENTWISE_OPS)


def test_hf_block_is_the_eager_kernels_chain(catalog):
    st = ctx(catalog, EAGER, 8192).st
    assert st.elementwise_ops == ops.HF_GPT2_BLOCK
    assert ctx(catalog, "pytorch", 8192).st.elementwise_ops == ()


def test_chain_bytes_follow_widths(catalog):
    """Per token: 62 bytes per hidden element forward (two fp32 LayerNorms, two casts, two
    dropouts, two promoting residual adds, the head merge), 76 per MLP element (GELU's nine
    kernels and the cast after it), 4 per QKV element (the head copies); the weights' casts
    once per micro-batch."""
    c = ctx(catalog, EAGER, 8192)
    gap = c.st.kernel_gap_us * 1e-6
    f, b, nf, nb = ops.elementwise_chain(c, float(GPT2.ffn))
    params = 4 * 768 * 768 + 2 * 768 * 3072
    want = 8192 * (62 * 768 + 76 * 3072 + 4 * 3 * 768) + 6 * params
    assert float(f[0]) == pytest.approx(want / c.hbm + nf * gap)
    assert (nf, nb) == (30, 49)
    wide = ctx(catalog, EAGER, 8192, replace(GPT2, ffn=6144))
    f2 = ops.elementwise_chain(wide, 6144.0)[0]
    assert float(f2[0] - f[0]) == pytest.approx(
        (8192 * 76 * 3072 + 6 * 2 * 768 * 3072) / c.hbm)


def test_fused_stacks_keep_the_pass_multiplier(catalog):
    """A stack without a chain prices element-wise work by elementwise_passes; with a chain
    the norms, adds and activation are the chain's (no double count)."""
    fused = ctx(catalog, "pytorch", 8192)
    assert ops.elementwise_chain(fused, 3072.0) == (0.0, 0.0, 0, 0)
    assert float(np.sum(ops.elementwise_bytes(fused, 3072.0))) > 0.0
    assert float(np.sum(ops.elementwise_bytes(ctx(catalog, EAGER, 8192), 3072.0))) == 0.0


def test_host_issue_floor_binds_small_micro_batches_only(catalog):
    """A layer takes the longer of its GPU time and host_launch_us per kernel it issues:
    at 8 tokens per micro-batch the host paces it, at 8,192 the GPU does."""
    small, large = ctx(catalog, EAGER, 8), ctx(catalog, EAGER, 8192)
    us = small.st.host_launch_us * 1e-6
    assert us > 0
    kernels = 30 + len(ops.score_chain(small.st)) + ops.GEMM_KERNELS[0]
    f, _ = ops.host_bound(small, np.array([1e-6]), np.array([1e-6]), 30, 49)
    assert float(f[0]) == pytest.approx(kernels * us)
    g, _ = ops.host_bound(large, np.array([0.05]), np.array([0.1]), 30, 49)
    assert float(g[0]) == 0.05
    none = ctx(catalog, "pytorch", 8)
    assert ops.host_bound(none, 1e-6, 2e-6, 30, 49) == (1e-6, 2e-6)
