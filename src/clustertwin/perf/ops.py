"""Per-operator compute costs of one transformer layer, one micro-batch, on one GPU.

Every function takes a :class:`Ctx` (the plan arrays and what follows from them) and returns
seconds as arrays over plans, forward and backward separately where they differ:

* :func:`gemm`: roofline per matrix product, ``max(FLOPs / (peak x eff), bytes / HBM)`` plus a
  per-kernel overhead. The achievable fraction falls when any of the three dimensions is small
  (fewer tiles than SMs, short K loops): ``eff = e x sat(m) sat(n) sat(k)``, ``sat(x) = x / (x +
  gemm_half_dim)``. FP8 only for the GEMMs the stack's recipe quantizes (``fp8_gemms``), at the
  FP8 peak, plus the recipe's cast/scale traffic (``fp8_cast_bytes`` per operand element:
  activation in forward, gradient and transposed activation in backward, weight once per
  micro-batch). Backward = two GEMMs of the same dimensions (data and weight gradients).
* :func:`attention`: fused (flash) kernels at the stack's efficiency for the generation, scaled
  by head dimension and by keys per query block (``sat(d)/sat(128)``, ``sat(L)/sat(4096)``);
  causal half; backward 2.5 x forward. Without flash (scores materialised): two batched GEMMs on
  the full s x s matrix per head, and one kernel per pass over the score matrix
  (:data:`SCORE_PASSES`: scale, mask, softmax, dropout, or Megatron's fused scale-mask-softmax),
  each priced by the bytes it reads and writes per score and one launch, forward and backward.
* :func:`elementwise_bytes`: norms, residual adds, rotary embedding and activation functions by
  HBM bytes moved, times the stack's ``elementwise_passes`` (1 = fused kernels).
* :func:`moe_compute`: grouped GEMMs per local expert with the tokens each expert receives
  (times the imbalance factor: the busiest rank paces the layer), router GEMM and top-k, and the
  token permutation before and after the experts.
* :func:`head_and_loss`: LM-head GEMM (16-bit unless the recipe quantizes it) and the
  cross-entropy over the vocabulary by bytes per logit.
* :func:`kernel_gaps`: the launch floor, kernels x gap per layer (backward launches twice as
  many).
* :func:`optimizer`: Adam over the parameters a GPU updates, by bytes per parameter; under fp16
  the loss scaler's unscale-and-check pass over the gradients (:data:`LOSS_SCALE_BYTES`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clustertwin.perf.flops import Shape
from clustertwin.perf.stacks import StackProfile
from clustertwin.perf.system import System

ACT_BYTES = 2.0  # bf16/fp16 activations
#: HBM elements read+written per token x hidden by a layer's replicated element-wise work: two
#: norms (read, write: 2 each) and two fused bias-dropout-residual adds (read 2, write 1, mask 0.5).
REPLICATED_ELEMS = 11.0
#: backward element-wise traffic over forward (norm, activation, softmax backward read the input
#: and the incoming gradient and write one gradient: 3 elements against 2).
ELEM_BWD = 1.5
#: attention efficiencies are quoted at head dimension 128 and 4,096 keys per query block
ATT_REF_DIM, ATT_REF_KEYS = 128.0, 4096.0
#: busiest expert-parallel rank's tokens over the mean (load imbalance left after balancing)
MOE_IMBALANCE = 1.05
#: HBM bytes per score element of one pass over a materialised s x s score matrix (16-bit
#: scores, 1-byte dropout masks), (forward, backward). Element-wise passes read and write each
#: score once (4); a softmax backward reads the output and its gradient and writes one gradient
#: (6); dropout writes its mask in forward and reads it in backward (5 each); a causal mask
#: applied by masked_fill/where reads and writes the scores (its boolean mask is broadcast and
#: stays in cache), as does a scale not folded into the queries. Megatron's fused
#: scale-mask-softmax kernel is one pass with a softmax's traffic. Counted from the kernels'
#: operands (PyTorch's dropout/softmax/masked_fill, Megatron's FusedScaleMaskSoftmax), not fitted.
SCORE_PASSES: dict[str, tuple[float, float]] = {
    "scale": (4.0, 4.0),
    "mask": (4.0, 4.0),
    "softmax": (4.0, 6.0),
    "scale-mask-softmax": (4.0, 6.0),
    # softmax called without a dtype under torch.autocast runs in fp32 (the autocast op list's
    # fp32 policy for softmax): fp16 scores read, fp32 probabilities written (6), then cast back
    # to 16 bit (6); backward: the cast's gradient (6), an fp32 softmax backward (12) and the
    # cast of its gradient (6). Hugging Face GPT2Attention._attn (2022) runs it this way
    "softmax-fp32": (12.0, 24.0),
    "dropout": (5.0, 5.0),
    # the two batched GEMMs' own passes: QK^T writes the scores and PV reads the probabilities
    # (2 + 2) in forward; in backward dP is written and P read for dV, and dS read for dQ and
    # dK (2 + 2 + 2 + 2). Priced at HBM speed on top of their FLOPs: with a head-sized inner
    # dimension these GEMMs sit at the roofline's ridge, where neither roof is reached
    "score-gemms": (4.0, 8.0),
}
#: One eager element-wise kernel chain, op by op: name -> (width, forward bytes, backward bytes,
#: forward kernels, backward kernels), bytes per element of the width: ``hidden`` (tokens x
#: hidden), ``attn`` (tokens x query width / tp), ``qkv`` (tokens x (q + 2 kv) width / tp),
#: ``ffn`` (tokens x MLP inner width / tp) or ``param`` (the layer's weights per GPU, once per
#: micro-batch). Counted from the operands of the PyTorch ops an eager model under
#: ``torch.autocast`` runs (fp32 weights and residual stream, 16-bit GEMMs; PyTorch 1.13 /
#: transformers 4.24 as the 2022 Hugging Face GPT-2 ran them), not fitted:
ELEMENTWISE_OPS: dict[str, tuple[str, float, float, int, int]] = {
    # LayerNorm runs in fp32 under autocast (its fp32 op list): read x, write y (8). Backward:
    # the input-gradient kernel reads x and dy and writes dx (12), the weight/bias-gradient
    # kernel reads x and dy (8), and dx is added into the residual stream's gradient (12)
    "layernorm-fp32": ("hidden", 8.0, 32.0, 1, 3),
    # autocast's cast of an fp32 activation to 16 bit before a GEMM (read 4, write 2); backward
    # casts the 16-bit gradient back (read 2, write 4)
    "cast-hidden": ("hidden", 6.0, 6.0, 1, 1),
    "cast-ffn": ("ffn", 6.0, 6.0, 1, 1),
    # queries, keys and values made contiguous per head for the batched matmuls (read 2,
    # write 2 each); backward: one cat of their gradients into the fused QKV gradient
    "head-copies": ("qkv", 4.0, 4.0, 3, 1),
    # the heads' outputs permuted back into tokens x width (and the gradient in backward)
    "merge-heads": ("attn", 4.0, 4.0, 1, 1),
    # bias gradients: one reduction over the tokens of each GEMM output's gradient (read 2)
    "bias-grad-qkv": ("qkv", 0.0, 2.0, 0, 1),
    "bias-grad-hidden": ("hidden", 0.0, 2.0, 0, 1),
    "bias-grad-ffn": ("ffn", 0.0, 2.0, 0, 1),
    # dropout on a 16-bit activation: read 2, write 2 and a 1-byte mask; backward reads the
    # gradient and the mask and writes the gradient
    "dropout": ("hidden", 5.0, 5.0, 1, 1),
    # a 16-bit branch added to the fp32 residual stream (type promotion: read 2 + 4, write 4);
    # backward casts the stream's fp32 gradient to 16 bit for the branch (read 4, write 2)
    "residual-add-fp32": ("hidden", 10.0, 6.0, 1, 1),
    # GPT-2's tanh GELU ("gelu_new") written out in Python: 0.5*x*(1+tanh(sqrt(2/pi)*(x +
    # 0.044715*x^3))) on the 16-bit MLP activation, nine kernels: cast for pow (fp32 under
    # autocast, 6), pow (8), scale (8), add with promotion (10), scale (8), tanh (8), add 1
    # (8), 0.5*x (4), final product with promotion (10): 70 bytes, an fp32 output. Backward,
    # op by op through autograd: the product's two gradients and a cast (28), 0.5*x (4),
    # tanh (12), two scales (16), the add's cast (6), pow's x^2, x3 and product (28), the
    # first cast (6), two accumulations of x's three gradients (12): 112 bytes, 14 kernels
    "gelu-tanh-eager": ("ffn", 70.0, 112.0, 9, 14),
    # autocast casts each fp32 weight and bias to 16 bit once per forward (read 4, write 2);
    # backward casts each 16-bit weight gradient to fp32 (6) and accumulates it into .grad
    # (read 4 + 4, write 4): 18. Kernels: a GPT-2 block's four weights and four biases
    "weight-cast": ("param", 6.0, 18.0, 8, 16),
}
#: HF GPT2Block (transformers 4.24) under autocast: ln_1, cast, c_attn (bias gradient), heads
#: made contiguous, attention, heads merged, c_proj (bias gradient), dropout, residual add,
#: ln_2, cast, c_fc (bias gradient), gelu_new, cast, c_proj (bias gradient), dropout, residual
#: add, and the weights' casts
HF_GPT2_BLOCK = (
    "layernorm-fp32", "cast-hidden", "bias-grad-qkv", "head-copies", "merge-heads",
    "bias-grad-hidden", "dropout", "residual-add-fp32", "layernorm-fp32", "cast-hidden",
    "bias-grad-ffn", "gelu-tanh-eager", "cast-ffn", "bias-grad-hidden", "dropout",
    "residual-add-fp32", "weight-cast",
)
#: kernels of one layer besides its element-wise chain and score passes: four dense GEMMs and
#: two batched attention GEMMs in forward, twice as many in backward
GEMM_KERNELS = (6, 12)
#: extra HBM bytes per parameter of an fp16 step's dynamic loss scaling: the fused
#: check-for-inf-and-unscale pass reads and writes every fp32 gradient once (PyTorch
#: GradScaler.unscale_, apex amp); bf16 needs no loss scale
LOSS_SCALE_BYTES = 8.0


@dataclass
class Ctx:
    """A plan array set and the quantities the operators share (arrays over plans)."""

    sys: System
    st: StackProfile
    m: Shape
    precision: str
    seq: float
    tp: np.ndarray
    cp: np.ndarray
    ep: np.ndarray
    T: np.ndarray  #: tokens per GPU per micro-batch
    seq_div: np.ndarray  #: tp where sequence parallelism splits replicated work, else 1

    @property
    def g(self) -> dict[str, float]:
        return self.sys.gen

    @property
    def hbm(self) -> float:
        return self.sys.hbm_bw * self.g["hbm_efficiency"] * self.sys.hbm_hw

    def fp8(self, name: str) -> bool:
        return self.precision == "fp8" and self.st.fp8(name)

    @property
    def etp(self) -> Any:
        """Tensor parallelism of the expert GEMMs: 1 where the stack folds expert parallelism
        over the tensor-parallel ranks (each rank dispatches its own T/tp tokens), else tp."""
        return np.ones_like(self.tp) if self.st.expert_tp_folding else self.tp

    @property
    def dispatch_tokens(self) -> Any:
        """Tokens one GPU sends through the MoE dispatch per micro-batch."""
        return self.T / (self.tp if self.st.expert_tp_folding else self.seq_div)


def _sat(x: Any, half: float) -> Any:
    return x / (x + half) if half > 0 else 1.0


def gemm(
    c: Ctx,
    name: str,
    mkn: tuple[Any, Any, Any],
    count: Any = 1.0,
    kernels: Any = None,
    scale: float = 1.0,
    out_bytes: bool = True,
) -> tuple[Any, Any]:
    """(forward, backward) seconds of ``count`` GEMMs (m x k) @ (k x n), ``mkn = (m, k, n)``,
    run as ``kernels`` kernels (default ``count``; a grouped GEMM is one) at ``scale`` x the
    dense efficiency. ``out_bytes`` False: the m x n operand's traffic is priced elsewhere
    (score passes)."""
    m, k, n = mkn
    g = c.g
    q = c.fp8(name)
    if q:
        peak, eff = c.sys.sustained("fp8"), g["fp8_gemm_efficiency"]
    else:
        prec = "bf16" if c.precision == "fp8" else c.precision
        peak, eff = c.sys.sustained(prec), g["gemm_efficiency"]
    half = g.get("gemm_half_dim", 0.0)
    eff = scale * c.st.gemm_efficiency_scale * eff * _sat(m, half) * _sat(n, half) * _sat(k, half)
    flops = 2.0 * m * k * n
    ob = 1.0 if q else ACT_BYTES
    nbytes = ob * (m * k + k * n) + ACT_BYTES * m * n * out_bytes
    t = np.maximum(flops / (peak * eff), nbytes / c.hbm) * count
    over = (count if kernels is None else kernels) * g["gemm_overhead_us"] * 1e-6
    fwd, bwd = t + over, 2 * t + 2 * over
    if q:
        cb = c.st.fp8_cast_bytes / c.hbm * count
        fwd = fwd + cb * (m * k + k * n)
        bwd = bwd + cb * (m * n + m * k)
    return fwd, bwd


def score_chain(st: StackProfile) -> tuple[str, ...]:
    """The passes over a materialised score matrix: the batched GEMMs', the stack's
    element-wise passes, and dropout where the stack's recipes train with it."""
    return ("score-gemms", *st.score_passes, *(("dropout",) if st.dropout else ()))


def score_passes(c: Ctx) -> tuple[Any, Any]:
    """(forward, backward) seconds of the passes over one layer's materialised score matrices:
    bytes per score x scores / HBM, plus one launch gap per pass. Scores per GPU per
    micro-batch: tokens x keys x heads / tp (seq^2 x heads per sequence)."""
    scores = c.T * c.seq * c.m.heads / c.tp
    chain = score_chain(c.st)
    fb = sum(SCORE_PASSES[p][0] for p in chain)
    bb = sum(SCORE_PASSES[p][1] for p in chain)
    gap = len(chain) * c.st.kernel_gap_us * 1e-6
    return scores * fb / c.hbm + gap, scores * bb / c.hbm + gap


def attention(c: Ctx, cp_eff: Any) -> tuple[Any, Any, Any]:
    """(forward, backward, extra element-wise bytes) of the attention core per layer (the score
    passes of materialised attention are in forward and backward)."""
    m = c.m
    s = c.seq
    if c.st.flash_attention:
        eff = c.st.attention_efficiency or c.g["attention_efficiency"]
        hd_half = c.g.get("attention_half_dim", 0.0)
        key_half = c.g.get("attention_half_keys", 0.0)
        keys = s / (2.0 * c.cp)  # keys a query block sees on average (causal), per ring block
        eff = eff * _sat(m.core_head, hd_half) / _sat(ATT_REF_DIM, hd_half)
        eff = eff * _sat(keys, key_half) / _sat(ATT_REF_KEYS, key_half)
        core = 4.0 * c.T * s * m.heads * m.core_head / c.tp * 0.5
        fwd = core / (c.sys.sustained("bf16") * eff * cp_eff)
        return fwd, 2.5 * fwd, 0.0
    b = c.T * c.cp / s
    s_loc = s / c.cp
    heads = b * m.heads / c.tp
    one, _ = gemm(c, "attn-core", (s_loc, float(m.head_dim), s), out_bytes=False)
    fwd = 2 * one * heads / cp_eff
    pf, pb = score_passes(c)
    return fwd + pf, 2 * fwd + pb, 0.0


def elementwise_bytes(c: Ctx, inner_width: Any) -> Any:
    """HBM bytes of one layer's forward element-wise work for an MLP of ``inner_width`` per GPU
    (gated: read gate and up, write product; else read and write)."""
    m = c.m
    h = float(m.hidden)
    # rotary embedding on queries and keys (read + write) in the swiglu (Llama-style) family
    rope = c.T * 2.0 * (m.q_dim + m.kv_dim) / c.tp * ACT_BYTES if m.swiglu else 0.0
    if c.st.elementwise_ops:  # norms, residual adds and the activation priced op by op
        return rope * c.st.elementwise_passes
    rep = c.T * h * REPLICATED_ELEMS * ACT_BYTES / c.seq_div
    act = c.T * inner_width * (3.0 if m.swiglu else 2.0) * ACT_BYTES
    return (rep + act + rope) * c.st.elementwise_passes


def dense_mlp(c: Ctx) -> tuple[Any, Any]:
    m = c.m
    up_f, up_b = gemm(c, "mlp", (c.T, float(m.hidden), (m.mlp_mats - 1) * m.ffn / c.tp))
    dn_f, dn_b = gemm(c, "mlp", (c.T, m.ffn / c.tp, float(m.hidden)))
    return up_f + dn_f, up_b + dn_b


def moe_compute(c: Ctx) -> tuple[Any, Any, Any]:
    """(forward, backward, element-wise bytes) of an MoE layer's MLP part."""
    m = c.m
    h = float(m.hidden)
    k_act = float(m.active_experts)
    local = m.experts / c.ep
    # tokens per local expert: the TP group's tokens split over expert TP ranks (folded: each
    # rank routes its own T/tp tokens and holds whole experts)
    etp = c.etp
    te = c.T * etp / c.tp * k_act * c.ep / m.experts * MOE_IMBALANCE
    fe = float(m.expert_ffn)
    ge = c.st.grouped_gemm_efficiency
    up_f, up_b = gemm(c, "experts", (te, h, (m.mlp_mats - 1) * fe / etp), local, 1.0, ge)
    dn_f, dn_b = gemm(c, "experts", (te, fe / etp, h), local, 1.0, ge)
    fwd, bwd = up_f + dn_f, up_b + dn_b
    if m.shared_experts:
        w = fe * m.shared_experts
        sf, sb = gemm(c, "mlp", (c.T, h, (m.mlp_mats - 1) * w / c.tp))
        df, db = gemm(c, "mlp", (c.T, w / c.tp, h))
        fwd, bwd = fwd + sf + df, bwd + sb + db
    rf, rb = gemm(c, "router", (c.T, h, float(m.experts)))
    fwd, bwd = fwd + rf, bwd + rb
    # router softmax/top-k over E logits (fp32) and the permutation of k copies of every token
    # into expert order and back (read + write each)
    perm = c.dispatch_tokens * (m.experts * 4.0 * 2 + k_act * h * ACT_BYTES * 4)
    width = te / np.maximum(c.T, 1.0) * local * fe / etp + m.shared_experts * fe / c.tp
    return fwd, bwd, elementwise_bytes(c, width) + perm


def head_and_loss(c: Ctx) -> Any:
    """LM head forward + backward and the cross-entropy over the (tensor-split) vocabulary."""
    m = c.m
    f, b = gemm(c, "head", (c.T, float(m.hidden), m.vocab / c.tp))
    loss = c.T * m.vocab / c.tp * c.st.cross_entropy_bytes / c.hbm
    return f + b + loss


def chain_widths(c: Ctx, inner_width: Any) -> dict[str, Any]:
    """Elements per width kind of :data:`ELEMENTWISE_OPS` for one layer and micro-batch."""
    m = c.m
    h = float(m.hidden)
    params = (h * (2 * m.q_dim + 2 * m.kv_dim) + m.mlp_mats * h * m.ffn) / c.tp
    return {"hidden": c.T * h / c.seq_div, "attn": c.T * m.q_dim / c.tp,
            "qkv": c.T * (m.q_dim + 2 * m.kv_dim) / c.tp, "ffn": c.T * inner_width,
            "param": params}


def elementwise_chain(c: Ctx, inner_width: Any) -> tuple[Any, Any, int, int]:
    """(forward s, backward s, forward kernels, backward kernels) of the stack's explicit
    element-wise chain (``elementwise_ops``): bytes per element x elements / HBM, plus one
    launch gap per kernel. Zero where the stack has none (priced by ``elementwise_bytes``)."""
    widths = chain_widths(c, inner_width)
    f = b = 0.0
    nf = nb = 0
    for name in c.st.elementwise_ops:
        width, fb, bb, kf, kb = ELEMENTWISE_OPS[name]
        f, b = f + widths[width] * fb, b + widths[width] * bb
        nf, nb = nf + kf, nb + kb
    gap = c.st.kernel_gap_us * 1e-6
    return f / c.hbm + nf * gap, b / c.hbm + nb * gap, nf, nb


def host_bound(c: Ctx, gpu_f: Any, gpu_b: Any, nf: int, nb: int,
               comm: Any = 0.0) -> tuple[Any, Any]:
    """Forward and backward of a layer when eager PyTorch must issue every kernel from the
    host: the GPU runs ahead of the Python loop only while its queued work lasts, so a layer's
    kernels take the longer of their GPU time and ``host_launch_us`` per launched kernel (its
    chain, score passes and GEMMs). ``comm``: the exposed communication inside ``gpu_f`` and
    ``gpu_b``, which the floor does not cover. Stacks without the figure: unchanged."""
    us = c.st.host_launch_us * 1e-6
    if us <= 0:
        return gpu_f, gpu_b
    n_score = len(score_chain(c.st)) if not c.st.flash_attention else 1
    host_f = (nf + n_score + GEMM_KERNELS[0]) * us
    host_b = (nb + n_score + GEMM_KERNELS[1]) * us
    return (np.maximum(gpu_f - comm, host_f) + comm,
            np.maximum(gpu_b - comm, host_b) + comm)


def kernel_gaps(c: Ctx) -> float:
    """Seconds of launch gaps of one layer's forward."""
    return c.st.kernels_per_layer * c.st.kernel_gap_us * 1e-6


def optimizer(c: Ctx, params: Any) -> Any:
    """Adam step over ``params`` parameters per GPU (and the fp16 loss scaler's pass)."""
    extra = LOSS_SCALE_BYTES if c.precision == "fp16" else 0.0
    return params * (c.st.optimizer_bytes + extra) / c.hbm
