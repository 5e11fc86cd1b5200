"""Operator costs that follow shape (issue 33): materialised attention priced per pass over the
score matrix, the fp16 loss scaler's pass, and the era failure profile of whole runs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from clustertwin.perf import ops
from clustertwin.perf.flops import Shape
from clustertwin.perf.stacks import profile_of
from clustertwin.perf.system import default_node, system_from_catalog

SHAPE = Shape(layers=24, hidden=2048, ffn=8192, heads=16, kv_heads=16, vocab=50304, swiglu=False)


def ctx(catalog, stack, seq, precision="bf16", micro=1.0):
    sys = system_from_catalog(catalog, "a100-sxm-80gb", default_node(catalog, "a100-sxm-80gb"),
                              "ib-hdr")
    st = profile_of(catalog, stack, sys.generation)
    one = np.ones(1)
    return ops.Ctx(sys, st, SHAPE, precision, float(seq), one, one, one, one * micro * seq, one)


def test_score_passes_scale_with_seq_squared_and_heads(catalog):
    """Per sequence, the passes' bytes grow with seq^2 x heads: twice the sequence at the same
    sequences per micro-batch is four times the traffic (launch gaps aside)."""
    a, b = ctx(catalog, "megatron-lm-2021", 2048), ctx(catalog, "megatron-lm-2021", 4096)
    gap = len(ops.score_chain(a.st)) * a.st.kernel_gap_us * 1e-6
    fa, ba = ops.score_passes(a)
    fb, bb = ops.score_passes(b)
    assert (fb - gap) / (fa - gap) == pytest.approx(4.0)
    assert (bb - gap) / (ba - gap) == pytest.approx(4.0)
    h = ctx(catalog, "megatron-lm-2021", 2048)
    h.m = replace(SHAPE, heads=32, kv_heads=32)
    assert (ops.score_passes(h)[0] - gap) / (fa - gap) == pytest.approx(2.0)


def test_eager_chain_moves_more_bytes_than_the_fused_one(catalog):
    """Megatron's fused scale-mask-softmax + dropout against eager scale, mask, autocast's fp32
    softmax, dropout: bytes per score from the passes' operands (SCORE_PASSES), one launch
    each."""
    fused = ctx(catalog, "megatron-lm-2021", 8192)
    eager = ctx(catalog, "megatron-lm-2021+eager-materialised", 8192)
    assert ops.score_chain(fused.st) == ("score-gemms", "scale-mask-softmax", "dropout")
    assert ops.score_chain(eager.st) == ("score-gemms", "scale", "mask", "softmax-fp32", "dropout")
    per = {name: sum(ops.SCORE_PASSES[p][0] + ops.SCORE_PASSES[p][1]
                     for p in ops.score_chain(c.st)) for name, c in (("f", fused), ("e", eager))}
    assert per == {"f": 32.0, "e": 74.0}
    assert sum(ops.score_passes(eager)) > 2.0 * sum(ops.score_passes(fused))


def test_flash_attention_has_no_score_passes(catalog):
    c = ctx(catalog, "megatron", 8192)
    f, b, extra = ops.attention(c, 1.0)
    assert extra == 0.0 and float(f[0]) > 0 and float(b[0]) == pytest.approx(2.5 * float(f[0]))


def test_fp16_adds_the_loss_scaler_pass(catalog):
    bf, fp = ctx(catalog, "megatron", 2048), ctx(catalog, "megatron", 2048, precision="fp16")
    params = 1e9
    ratio = ops.optimizer(fp, params) / ops.optimizer(bf, params)
    assert ratio == pytest.approx((bf.st.optimizer_bytes + ops.LOSS_SCALE_BYTES) / bf.st.optimizer_bytes)


@pytest.mark.parametrize("gpu, year, profile", [
    ("a100-sxm-80gb", 2022, "a100-era-2021-22"),
    ("a100-sxm-80gb", 2021, "a100-era-2021-22"),
    ("a100-sxm-80gb", 2023, "a100-era-2021-22"),
    ("a100-sxm-80gb", 2024, "rsc-a100"),
    ("a100-sxm-80gb", None, "rsc-a100"),
    ("h100-sxm-80gb", 2022, "llama3-h100"),
])
def test_era_profile_by_generation_and_year(catalog, gpu, year, profile):
    from clustertwin.catalog.lookup import era_profile_id

    assert era_profile_id(catalog, gpu, year) == profile


def test_era_profile_charges_its_hours_lost_per_interruption(catalog):
    """OPT-175B logbook: 11.7 interruptions per 1000 node-days, 7.7 h lost each; on 48 nodes
    (BLOOM's 384 GPUs) 0.56 a day, 4.3 h lost a day: ETTR 0.82. Today's A100 profile charges
    a few percent for the same job."""
    from clustertwin.reliability.goodput import daly_ettr

    era = daly_ettr(catalog, "a100-sxm-80gb", 384, 176e9, "bf16", year=2022)
    assert era == pytest.approx(1 - 11.7 * 48 / 1000 / 24 * 7.7, abs=1e-6)
    assert daly_ettr(catalog, "a100-sxm-80gb", 384, 176e9, "bf16", year=2024) > era + 0.1


def test_row_year_from_the_source():
    from types import SimpleNamespace

    from clustertwin.reliability.goodput import row_year

    assert row_year(SimpleNamespace(source="Luccioni et al. 2022, BLOOM (arXiv 2211.02001)")) == 2022
    assert row_year(SimpleNamespace(source="Llama 2 model card (meta-llama/llama MODEL_CARD.md)")) is None
    assert row_year(SimpleNamespace(source="Brown et al. (arXiv 2005.14165)")) is None
