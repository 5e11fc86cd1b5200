"""Memory per GPU: model states by ZeRO stage and activations by recompute mode.

Model states (mixed precision with Adam, Rajbhandari et al. 2020 "ZeRO", section 3.1): 2 bytes
of 16-bit weights, the gradient buffer and 12 bytes of fp32 master weights, momentum and
variance per parameter. ZeRO-1 (Megatron's distributed optimizer) shards the 12 optimizer bytes
over the data-parallel group, ZeRO-2 also the gradients, ZeRO-3 (FSDP) also the weights; expert
weights shard over the smaller expert-data-parallel group (dp*cp/ep).

Sharded gradients only stay sharded if every micro-batch's gradients are reduce-scattered as they
are produced (DeepSpeed stage 2; FSDP with gradient sync on every backward). Reducing once per
step instead means accumulating the whole unsharded gradient through the step: PyTorch's
pipeline schedules run FSDP with ``set_requires_gradient_sync(False)`` and
``set_reshard_after_backward(False)`` on every backward but the last
(``torch.distributed.pipelining.stage``, ``backward_maybe_with_nosync``) and Megatron's
distributed optimizer keeps a full fp32 gradient buffer (6 + 12/d bytes per parameter) - at the
activation peak both hold ZeRO-1's memory, so that mode is zero=1 here. ZeRO-2 adds one FSDP
unit (a layer) of unsharded gradient in 16-bit plus its reduce-dtype copy (costmodel).

The gradient buffer holds what the framework accumulates across micro-batches
(:func:`grad_bytes`): fp32 main gradients (4 bytes) for bf16 and fp8 training - Megatron-LM
switches ``accumulate_allreduce_grads_in_fp32`` on whenever bf16 is used, its distributed
optimizer guide lists "bf16 param, fp32 grads" at 6 + 12/d bytes per parameter, and Llama 3
accumulates gradients over micro-batches and reduce-scatters them in fp32 (arXiv 2407.21783,
section 3.3.4); 16-bit gradients (2 bytes) for fp16 training, Megatron's default there (its
guide: 4 + 16/d bytes, the extra 4/d being an fp32 gradient copy made at the optimizer step, when
activations are already freed, so not counted at the activation peak).

Activations per layer per micro-batch follow Korthikanti et al. 2022 (arXiv 2205.05198,
section 4.1, Table 2), bytes per token of a layer, generalised to GQA and swiglu:

* replicated across tensor-parallel ranks unless sequence parallelism splits them: each of the
  two norms keeps its input and its output (the next GEMM's input) - 2h + 2h per norm, 8h; with
  sequence parallelism the GEMM keeps the local shard and all-gathers it again in backward
  (Transformer Engine's LayerNormLinear keeps the norm input for the norm backward and the
  norm output for the weight gradient). Two dropout masks (2h) exist only in models trained with
  dropout: GPT-style gelu models here; swiglu models (Llama, Mistral, DeepSeek and Nemotron
  families) train without dropout and store 8h;
* split across tensor-parallel ranks: Q (2h), K and V (4*g*d: grouped-query attention keeps
  only the kv heads), output-projection input (2h; with fused attention this is the attention
  output that the kernel also keeps, one tensor), MLP inner activations: gelu keeps the first
  GEMM's output and the activation output, 4f (16h at f = 4h, giving the paper's 24h); swiglu
  keeps both first-GEMM outputs (gate and up, 4f) and, on stacks without a fused gated-unit
  kernel, also their product (2f, the second GEMM's input) - 6f. A fused kernel (generation
  constant ``fused_glu``) keeps 4f and recomputes the product inside its backward pass, as
  xFormers' fused SwiGLU does (it saves the input and the two GEMM outputs and rebuilds the
  product in the same kernel that computes the activation gradient);
* attention core: the matrix 5*a*s (scores, softmax, dropout mask) of unfused attention, absent
  with selective recompute; a fused (flash) kernel keeps only its output (counted above) and
  the fp32 log-sum-exp per query head, 4a bytes (Dao 2023, FlashAttention-2, Algorithm 2).

Full recompute keeps only each layer's input (2h) plus one layer's working set. Context
parallelism divides the tokens per GPU by cp. Which pipeline rank holds how many micro-batches
is in :mod:`clustertwin.perf.pipeline`; the last stage also holds fp32 logits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clustertwin.perf.flops import Shape

WEIGHT_BYTES = 2.0
GRAD_BYTES = 2.0  # 16-bit gradients (fp16 training); see grad_bytes()
MAIN_GRAD_BYTES = 4.0  # fp32 main gradients (bf16 / fp8 training)
OPTIMIZER_BYTES = 12.0
DROPOUT_MASKS = 2.0  # bytes per token x hidden: attention-output and MLP-output dropout masks
LSE_BYTES = 4.0  # fused attention: fp32 log-sum-exp per token per query head


def grad_bytes(precision: str) -> float:
    """Bytes per parameter of the gradient accumulation buffer for a training precision."""
    return GRAD_BYTES if precision == "fp16" else MAIN_GRAD_BYTES


def layer_params(m: Shape) -> tuple[float, float, float]:
    """(attention + norms params, dense MLP params, one expert's params) of one layer."""
    h = m.hidden
    attn = 2 * h * m.q_dim + 2 * h * m.kv_dim + 4 * h
    dense = m.mlp_mats * h * m.ffn
    expert = m.mlp_mats * h * m.expert_ffn if m.moe else 0.0
    return attn, dense, expert


def stage_params(
    m: Shape, n_layers: np.ndarray, tp: np.ndarray, ep: np.ndarray, etp: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """(dense-sharded params, expert params) held per GPU for ``n_layers`` layers, taking the
    heavier of a dense and an MoE layer for every layer (a safe bound for mixed stages);
    ``etp``: the experts' tensor parallelism (default tp)."""
    attn, dense, expert = layer_params(m)
    if not m.moe:
        return n_layers * (attn + dense) / tp, np.zeros_like(n_layers, dtype=np.float64)
    shared = m.shared_experts * expert + m.hidden * m.experts
    moe_dense = (attn + shared) / tp
    moe_expert = m.experts / ep * expert / (tp if etp is None else etp)
    heavier_dense = np.maximum((attn + dense) / tp, moe_dense + moe_expert)
    use_moe = (moe_dense + moe_expert) >= (attn + dense) / tp
    d = np.where(use_moe, moe_dense, heavier_dense)
    e = np.where(use_moe, moe_expert, 0.0)
    return n_layers * d, n_layers * e


def state_bytes(
    p_dense: np.ndarray,
    p_expert: np.ndarray,
    zero: np.ndarray,
    shard_dense: np.ndarray,
    shard_expert: np.ndarray,
    grad: float = GRAD_BYTES,
) -> np.ndarray:
    """Weights + gradients + optimizer bytes per GPU for a ZeRO stage (0..3); ``grad`` is the
    gradient buffer's bytes per parameter (:func:`grad_bytes`)."""

    def one(p: np.ndarray, n: np.ndarray) -> np.ndarray:
        w = p * WEIGHT_BYTES * np.where(zero >= 3, 1 / n, 1.0)
        g = p * grad * np.where(zero >= 2, 1 / n, 1.0)
        o = p * OPTIMIZER_BYTES * np.where(zero >= 1, 1 / n, 1.0)
        return w + g + o

    return one(p_dense, shard_dense) + one(p_expert, shard_expert)


@dataclass(frozen=True)
class ActKernels:
    """The kernels that decide what a layer keeps for its backward: ``flash`` attention (a
    log-sum-exp per query head instead of the scores), ``fused_glu`` (a fused gated-unit
    kernel keeps only the first GEMM's two outputs) and ``dropout`` masks (the recipe trains
    with dropout; None: gelu models do, swiglu models not)."""

    flash: bool
    fused_glu: bool = False
    dropout: bool | None = None


def layer_activation_bytes(
    m: Shape,
    tokens: np.ndarray,
    seq_local: np.ndarray,
    tp: np.ndarray,
    sp: np.ndarray,
    recompute: np.ndarray,
    kernels: ActKernels,
) -> np.ndarray:
    """Stored activation bytes of one layer for one micro-batch of ``tokens`` per GPU.

    ``recompute``: 0 none, 1 selective, 2 full; ``sp``: sequence parallelism (0/1)."""
    flash, fused_glu, dropout = kernels.flash, kernels.fused_glu, kernels.dropout
    h = m.hidden
    masks = (not m.swiglu) if dropout is None else dropout
    rep = (8.0 + (DROPOUT_MASKS if masks else 0.0)) * h / np.where(sp > 0, tp, 1)
    inner = (4.0 if fused_glu else 6.0) if m.swiglu else 4.0
    if m.moe:
        per_copy = inner * m.expert_ffn
        mlp = m.active_experts * (2 * h + per_copy) + m.shared_experts * per_copy
        mlp = max(mlp, inner * m.ffn)
    else:
        mlp = inner * m.ffn
    # Q and K at the query/key head size, V and the attention output at the value head size
    qk, v = (m.qk_head or m.head_dim), (m.v_head or m.head_dim)
    attn = 2.0 * (m.heads + m.kv_heads) * qk + 2.0 * (m.kv_heads + m.heads) * v
    split_part = (attn + mlp) / tp
    scores = LSE_BYTES * m.heads / tp if flash else 5.0 * m.heads * seq_local / tp
    none = tokens * (rep + split_part + scores)
    selective = tokens * (rep + split_part + (scores if flash else 0.0))
    full = tokens * 2.0 * h / np.where(sp > 0, tp, 1)
    return np.where(recompute == 0, none, np.where(recompute == 1, selective, full))


def working_bytes(
    m: Shape,
    tokens: np.ndarray,
    seq_local: np.ndarray,
    tp: np.ndarray,
    sp: np.ndarray,
    recompute: np.ndarray,
    kernels: ActKernels,
) -> np.ndarray:
    """Transient bytes while one layer's backward runs: its recomputed activations under
    full recompute (nothing extra otherwise)."""
    one = layer_activation_bytes(m, tokens, seq_local, tp, sp, np.zeros_like(recompute), kernels)
    return np.where(recompute == 2, one, 0.0)


def plan_memory(job: Any, sys: Any, p: Any, busy: np.ndarray, last: np.ndarray) -> dict[str, Any]:
    """Peak bytes per GPU of every plan (first and last pipeline stage, the larger) and the
    parameter counts the data-parallel model needs. ``job``: costmodel.Job; ``p``: its plan."""
    from clustertwin.perf.pipeline import held_layer_batches, inflight_chunks

    m, g, st = job.shape, sys.gen, job.stack
    h = float(m.hidden)
    tp, pp, ep, zero = p.tp, p.pp, p.ep, p.zero
    s_loc = job.seq / p.cp
    T = p.b * s_loc
    single = pp == 1
    etp = p.etp
    p_dense, p_exp = stage_params(m, busy, tp, ep, etp)
    p_dense_last, p_exp_last = stage_params(m, last, tp, ep, etp)
    emb = m.vocab * h / tp
    shard_d = p.dp * p.cp
    # experts replicate over the expert-data-parallel ranks: dp*cp/ep, or tp*cp*dp/ep folded
    shard_e = np.maximum(1.0, p.dp * p.cp * (tp / etp) / ep)
    pd_first = p_dense + emb
    pd_last = p_dense_last + np.where(m.tied, 0.0, emb)
    per_layer = m.layers / np.maximum(busy, 1)
    pd_first = np.where(single, per_layer * p_dense + emb + np.where(m.tied, 0.0, emb), pd_first)
    pe_first = np.where(single, per_layer * p_exp, p_exp)
    gb = job.grad_bytes if job.grad_bytes is not None else grad_bytes(job.precision)
    st_first = state_bytes(pd_first, pe_first, zero, shard_d, shard_e, gb)
    st_last = state_bytes(pd_last, p_exp_last, zero, shard_d, shard_e, gb)
    act_scale = st.fp8_activation_factor if job.precision == "fp8" else 1.0
    args = (m, T, s_loc, tp, p.sp, p.rc, ActKernels(st.flash_attention, st.fused_glu, st.dropout))
    act_layer = layer_activation_bytes(*args) * act_scale
    act_layer = np.where(p.rc == 1, act_layer * st.selective_activation_factor, act_layer)
    work = working_bytes(*args) * act_scale
    logits = T * m.vocab / tp * st.logit_bytes
    one_layer = (p_dense + p_exp) / np.maximum(busy, 1)
    # ZeRO-3 keeps the gathered layer and the prefetched ones in 16-bit
    bufs = np.where(zero >= 3, (1 + max(st.zero3_prefetch, 0)) * one_layer * WEIGHT_BYTES, 0.0)
    # ZeRO-2 (FSDP) computes one unit's (layer's) gradient unsharded in 16-bit and casts it to
    # the reduce dtype for its reduce-scatter, which overlaps the next unit's backward
    bufs = bufs + np.where(zero == 2, one_layer * (WEIGHT_BYTES + gb), 0.0)
    held = held_layer_batches(m.layers, pp, p.n_micro, p.v)
    held_last = last * inflight_chunks(pp, p.n_micro, p.v, pp - 1) / p.v
    act_first = np.where(single, act_layer * m.layers + work + logits, act_layer * held + work)
    act_last = act_layer * held_last + work + logits
    # the caching allocator's fragmentation falls on the activations, allocated and freed every
    # micro-batch; weights, gradients and optimizer states live in buffers allocated once
    frag = 1 + g["fragmentation"]
    tot_first = st_first + act_first * frag + bufs
    tot_last = st_last + act_last * frag + bufs
    reserve = g["reserve_gib"] * 2**30
    use_last = (tot_last > tot_first) & ~single
    return {
        "total": np.maximum(tot_first, tot_last) + reserve,
        "states": np.where(use_last, st_last, st_first),
        "acts": np.where(use_last, act_last, act_first),
        "reserve": reserve,
        "shard_d": shard_d,
        "shard_e": shard_e,
        "pd_first": pd_first,
        "pe_first": pe_first,
        "pd_max": np.maximum(pd_first, pd_last),
        "pe_max": np.maximum(pe_first, p_exp_last),
        "grad_bytes": gb,
    }
