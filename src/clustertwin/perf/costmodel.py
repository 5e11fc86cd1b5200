"""Vectorized step-time and memory model: one NumPy pass over an array of parallelism plans.

A plan is a set of equal-length integer arrays (see :data:`PLAN_KEYS`). :func:`evaluate`
returns arrays of seconds and bytes for every plan at once; nothing loops over plans.

Time of one optimizer step = pipeline slots x (busiest stage's forward + backward + recompute of
one micro-batch, plus its exposed tensor/context/expert-parallel communication and pipeline
sends) + exposed data-parallel communication + optimizer step.

* GEMMs: roofline per matrix product — max(FLOPs / (peak x achievable fraction), bytes / (HBM
  bandwidth x achievable fraction)) + a fixed per-kernel overhead; backward = 2 x forward.
* Attention core: fused (flash) kernels at an attention efficiency, causal half, backward 2.5 x
  forward (the kernel recomputes the probabilities); or, for stacks without them, two batched
  GEMMs on the full s x s matrix plus the softmax/dropout traffic.
* Element-wise work (norms, residual adds, dropout, activation functions, softmax): HBM bytes
  read and written / achievable HBM bandwidth.
* Tensor parallelism: 2 all-reduces (or reduce-scatter + all-gather with sequence parallelism)
  in forward, 2 in backward, 2 more under full recompute, on the group's tier; the exposed
  share is (1 - tp_overlap). Context parallelism: a KV ring (on the network once tp*cp leaves
  the NVLink domain) overlapped with the attention kernel, whose efficiency falls for short
  ring blocks (``cp_chunk_half_tokens``). Expert parallelism: dispatch + combine all-to-all per
  MoE layer, exposed share (1 - ep_overlap). Data parallelism: gradient all-reduce
  (reduce-scatter + all-gather under ZeRO) in buckets of ``dp_bucket_mb``, each paying the
  ring latency, hidden behind up to ``dp_overlap`` of the last micro-batch's backward; the
  updated weights are all-gathered in 16-bit. ZeRO-2 (FSDP sharding gradients, as Llama 3 ran)
  reduce-scatters every micro-batch's gradients in one-layer FSDP units (sharded gradients
  cannot accumulate unreduced; a once-per-step reduction needs an unsharded accumulation buffer
  for the whole step, which is ZeRO-1's memory and timing, i.e. zero=1); ZeRO-3 gathers each
  layer's weights for forward and backward of every micro-batch and reduce-scatters its
  gradients, each prefetched behind one layer's compute (latency-bound at large dp).
* Overlap is not free: the hidden part of every overlapped collective still adds
  ``interference_nvlink`` (NVLink group) or ``interference_network`` (group leaving the NVLink
  domain) of its duration to the compute it overlaps — NCCL kernels occupy SMs and their
  copies compete for HBM bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clustertwin.perf import collectives as coll
from clustertwin.perf import memory as mem
from clustertwin.perf.flops import Shape, model_flops_per_token, recompute_flops_per_token
from clustertwin.perf.pipeline import held_layer_batches, inflight_chunks, schedule, stage_layers
from clustertwin.perf.system import System

PLAN_KEYS = (
    "tp",
    "pp",
    "cp",
    "ep",
    "dp",
    "micro_batch",
    "virtual_stages",
    "recompute",
    "sequence_parallel",
    "zero",
)
RECOMPUTE = ("none", "selective", "full")
ACT_BYTES = 2.0  # bf16/fp16 activations
#: HBM elements read+written per token x hidden by a layer's replicated element-wise work: two
#: norms (read, write: 2 each) and two fused bias-dropout-residual adds (read 2, write 1, mask 0.5).
REPLICATED_ELEMS = 11.0
#: backward element-wise traffic over forward (norm, gelu, softmax backward read the input and
#: the incoming gradient and write one gradient: 3 elements against 2).
ELEM_BWD = 1.5
#: stored activations under fp8 training relative to 16-bit: GEMM inputs are cached in fp8
#: (Transformer Engine; DeepSeek-V3 section 3.3), the rest stays 16-bit.
FP8_ACTIVATION_FACTOR = 0.6


@dataclass(frozen=True)
class Job:
    """What is trained: architecture, sequence length, global batch and precision."""

    shape: Shape
    seq: int
    batch_seqs: int
    precision: str = "bf16"
    #: bytes per parameter of the gradient buffer; None: by precision (memory.grad_bytes)
    grad_bytes: float | None = None


def _gemm(
    sys: System,
    peak: float,
    eff: float,
    m: np.ndarray,
    k: np.ndarray,
    n: np.ndarray,
    count: float | np.ndarray = 1.0,
) -> np.ndarray:
    """Seconds for ``count`` GEMMs of (m x k) @ (k x n), 16-bit operands."""
    flops = 2.0 * m * k * n
    nbytes = 2.0 * (m * k + k * n + m * n)
    # smaller products fill fewer waves of tiles: efficiency saturates with size
    eff = eff * flops / (flops + sys.gen.get("gemm_half_gflop", 0.0) * 1e9)
    t = np.maximum(flops / (peak * eff), nbytes / (sys.hbm_bw * sys.gen["hbm_efficiency"]))
    return count * (t + sys.gen["gemm_overhead_us"] * 1e-6)


def _overlap(comm: np.ndarray, window: np.ndarray, intf: np.ndarray | float) -> np.ndarray:
    """Time a communication of ``comm`` seconds adds when it overlaps up to ``window`` seconds
    of compute: the part that does not fit is exposed, and the hidden part still slows the
    compute by the fraction ``intf`` (interference)."""
    hidden = np.minimum(comm, window)
    return comm - hidden + intf * hidden


#: rank orders (innermost first) a plan's ranks can be laid out in. Megatron-core's default,
#: used by NeMo / Megatron-Bridge recipes, keeps pp outermost; Meta's Llama 3 (arXiv 2407.21783
#: section 3.3.3) orders [TP, CP, PP, DP], DP outermost, which keeps pipeline neighbours close
#: (inside a pod, or inside an NVL72 rack) and stretches the data-parallel groups instead.
RANK_ORDERS = ("tp-cp-ep-dp-pp", "tp-cp-pp-dp")


def evaluate(job: Job, sys: System, plan: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Step time, its breakdown and memory per GPU for every plan (arrays of equal length).

    Without pods every plan is laid out in Megatron-core's rank order (``RANK_ORDERS[0]``). With
    pods (``System.pod_gpus``) the order decides which traffic crosses the oversubscribed
    aggregation layer, so both orders of :data:`RANK_ORDERS` are evaluated (one more vectorized
    pass) and each plan takes the faster; ``rank_order`` in the result is the index chosen.
    Memory does not depend on the order."""
    a = _evaluate(job, sys, plan, pp_inner=False)
    if not sys.pod_gpus:
        a["rank_order"] = np.zeros_like(a["step_time_s"])
        return a
    b = _evaluate(job, sys, plan, pp_inner=True)
    use_b = b["step_time_s"] < a["step_time_s"]
    out = {k: np.where(use_b, b[k], a[k]) for k in a}
    out["rank_order"] = use_b.astype(np.float64)
    return out


def _evaluate(
    job: Job, sys: System, plan: dict[str, np.ndarray], pp_inner: bool
) -> dict[str, np.ndarray]:
    """:func:`evaluate` for one rank order: ``pp_inner`` False is tp-cp-ep-dp-pp (pp
    outermost), True tp-cp-pp-dp (dp, with ep inside it, outermost)."""
    m = job.shape
    g = sys.gen
    f64 = np.float64
    tp = plan["tp"].astype(f64)
    pp = plan["pp"].astype(f64)
    cp = plan["cp"].astype(f64)
    ep = plan["ep"].astype(f64)
    dp = plan["dp"].astype(f64)
    b = plan["micro_batch"].astype(f64)
    v = plan["virtual_stages"].astype(f64)
    rc = plan["recompute"]
    sp = plan["sequence_parallel"]
    zero = plan["zero"]
    flash = bool(g["flash_attention"])
    h = float(m.hidden)
    s = float(job.seq)

    bf16_peak = sys.peak("bf16")
    if job.precision == "fp8":
        gemm_peak, gemm_eff = sys.peak("fp8"), g["fp8_gemm_efficiency"]
    else:
        gemm_peak, gemm_eff = sys.peak(job.precision), g["gemm_efficiency"]
    hbm = sys.hbm_bw * g["hbm_efficiency"]

    s_loc = s / cp
    T = b * s_loc  # tokens per GPU per micro-batch
    # share of overlapped communication time that slows the concurrent compute: NCCL kernels
    # occupy SMs and the transfers compete for HBM bandwidth (0 = overlap is free). NVLink
    # collectives move data ~10x faster than the NICs, so they take more SMs and HBM bandwidth
    # per second of overlap than collectives paced by the scale-out fabric.
    intf_nvl = g.get("interference_nvlink", 0.0)
    intf_net = g.get("interference_network", 0.0)
    domain = float(sys.nvlink_domain)

    def intf_of(group_span: np.ndarray) -> np.ndarray:
        """Interference of a collective whose group spans ``group_span`` GPUs in rank order."""
        return np.where(group_span > domain, intf_net, intf_nvl)

    # ring attention (load-balanced causal split: two half-chunks of s/(2 cp) tokens per rank)
    # runs one block kernel per ring step; short blocks fill the GPU poorly
    chunk = s / (2.0 * cp)
    cp_eff = np.where(cp > 1, chunk / (chunk + g.get("cp_chunk_half_tokens", 0.0)), 1.0)
    n_micro = job.batch_seqs / (dp * b)
    seq_div = np.where(sp > 0, tp, 1.0)
    # strides of the groups whose placement depends on the rank order. pp outermost: pipeline
    # neighbours tp*cp*dp ranks apart, the dp*cp group contiguous from stride tp. dp outermost:
    # pipeline neighbours tp*cp apart; every data-parallel (and expert) group is stretched by pp
    # (the dp*cp group is taken at the mean stride of its span, tp*pp, exact for cp 1).
    stretch = pp if pp_inner else 1.0
    pp_stride = tp * cp if pp_inner else tp * cp * dp
    ep_stride = tp * cp * stretch
    dp_stride = tp * stretch

    # ---- compute, one layer, one micro-batch, forward --------------------------------
    qkv = _gemm(sys, gemm_peak, gemm_eff, T, h, (h + 2 * m.kv_dim) / tp)
    proj = _gemm(sys, gemm_peak, gemm_eff, T, h / tp, h)
    up_n = (m.mlp_mats - 1) * m.ffn / tp
    dense_mlp = _gemm(sys, gemm_peak, gemm_eff, T, h, up_n) + _gemm(
        sys, gemm_peak, gemm_eff, T, m.ffn / tp, h
    )
    if flash:
        core_flops = 4.0 * T * s * h / tp * 0.5
        attn_f = core_flops / (bf16_peak * g["attention_efficiency"] * cp_eff)
        attn_b = 2.5 * attn_f
        soft_bytes = 0.0
    else:
        heads_local = b * m.heads / tp
        hd = float(m.head_dim)
        one = _gemm(sys, bf16_peak, gemm_eff, s_loc, hd, s) * heads_local
        attn_f = 2 * one / cp_eff
        attn_b = 2 * attn_f
        soft_bytes = T * s * m.heads / tp * 9.0
    elem_rep = T * h * REPLICATED_ELEMS * ACT_BYTES / seq_div
    act_elems = 3.0 if m.swiglu else 2.0
    elem_dense = (elem_rep + T * m.ffn / tp * act_elems * ACT_BYTES + soft_bytes) / hbm
    soft_t = soft_bytes / hbm

    if m.moe:
        k_act = float(m.active_experts)
        local_experts = m.experts / ep
        tok_per_expert = T * k_act * ep / m.experts
        fe = float(m.expert_ffn)
        experts_t = _gemm(
            sys, gemm_peak, gemm_eff, tok_per_expert, h, (m.mlp_mats - 1) * fe / tp, local_experts
        ) + _gemm(sys, gemm_peak, gemm_eff, tok_per_expert, fe / tp, h, local_experts)
        shared_t = 0.0
        if m.shared_experts:
            shared_t = _gemm(
                sys, gemm_peak, gemm_eff, T, h, (m.mlp_mats - 1) * fe * m.shared_experts / tp
            ) + _gemm(sys, gemm_peak, gemm_eff, T, fe * m.shared_experts / tp, h)
        router = _gemm(sys, bf16_peak, gemm_eff, T, h, float(m.experts))
        moe_mlp = experts_t + shared_t + router
        elem_moe = (
            elem_rep + T * (k_act + m.shared_experts) * fe / tp * act_elems * ACT_BYTES + soft_bytes
        ) / hbm
        a2a_bytes = T / seq_div * k_act * h * (1.5 if job.precision == "fp8" else ACT_BYTES)
        a2a = coll.all_to_all(sys, a2a_bytes, ep, ep_stride) * (ep > 1)
        ep_exposed = 2 * a2a * (1 - g["ep_overlap"] + intf_of(ep_stride * ep) * g["ep_overlap"])
    else:
        moe_mlp = dense_mlp
        elem_moe = elem_dense
        ep_exposed = np.zeros_like(tp)

    # ---- tensor- and context-parallel communication per layer ------------------------
    tp_ar = coll.all_reduce(sys, T * h * ACT_BYTES, tp, 1.0) * (tp > 1)
    tp_exp = tp_ar * (1 - g["tp_overlap"] + intf_of(tp) * g["tp_overlap"])
    kv_bytes = 2 * T * m.kv_dim / tp * ACT_BYTES
    # the KV ring leaves the NVLink domain once tp*cp exceeds it; its slowest hop paces it
    cp_step = coll.p2p_on(sys, kv_bytes, tp * cp > sys.nvlink_domain) * (cp > 1)
    cp_f = _overlap((cp - 1) * cp_step, attn_f, intf_of(tp * cp))
    cp_b = _overlap(2 * (cp - 1) * cp_step, attn_b, intf_of(tp * cp))

    def layer(mlp_t: np.ndarray, elem_t: np.ndarray, ep_t: np.ndarray) -> tuple[np.ndarray, ...]:
        gemm_f = qkv + proj + mlp_t
        fwd = gemm_f + attn_f + elem_t + 2 * tp_exp + cp_f + ep_t
        bwd = 2 * gemm_f + attn_b + ELEM_BWD * elem_t + 2 * tp_exp + cp_b + ep_t
        sel = attn_f + soft_t
        rec = np.where(rc == 2, fwd, np.where(rc == 1, sel, 0.0))
        return fwd, bwd, rec, gemm_f + attn_f + elem_t

    d_f, d_b, d_r, d_c = layer(dense_mlp, elem_dense, 0.0)
    if m.moe:
        m_f, m_b, m_r, m_c = layer(moe_mlp, elem_moe, ep_exposed)
        wd, wm = (m.layers - m.moe_layers) / m.layers, m.moe_layers / m.layers
        l_f, l_b, l_r = wd * d_f + wm * m_f, wd * d_b + wm * m_b, wd * d_r + wm * m_r
    else:
        l_f, l_b, l_r = d_f, d_b, d_r
    layer_t = l_f + l_b + l_r

    head_g = _gemm(sys, gemm_peak, gemm_eff, T, h, m.vocab / tp)
    head_e = T * m.vocab / tp * 4.0 * 3 / hbm
    head_t = 3 * head_g + 2 * head_e

    busy, last = stage_layers(m.layers, pp, v)
    held = held_layer_batches(m.layers, pp, n_micro, v)
    stage_t = np.maximum(busy * layer_t, last * layer_t + head_t)
    stage_t = np.where(pp == 1, m.layers * layer_t + head_t, stage_t)
    p2p_bytes = T * h * ACT_BYTES / tp
    p2p_t = np.where(pp > 1, 2 * v * coll.p2p(sys, p2p_bytes, pp_stride, pp), 0.0)
    slots, _ = schedule(pp, n_micro, v)
    pipeline_t = slots * (stage_t + p2p_t)
    bubble_t = (slots - n_micro) * (stage_t + p2p_t)

    # ---- memory ------------------------------------------------------------------------
    p_dense, p_exp = mem.stage_params(m, busy, tp, ep)
    p_dense_last, p_exp_last = mem.stage_params(m, last, tp, ep)
    emb = m.vocab * h / tp
    first_emb = emb
    last_emb = np.where(m.tied, 0.0, emb)
    shard_d = dp * cp
    shard_e = np.maximum(1.0, dp * cp / ep)
    pd_first = p_dense + first_emb
    pd_last = p_dense_last + last_emb
    single = pp == 1
    pd_first = np.where(
        single, m.layers / np.maximum(busy, 1) * p_dense + first_emb + last_emb, pd_first
    )
    pe_first = np.where(single, m.layers / np.maximum(busy, 1) * p_exp, p_exp)
    gb = job.grad_bytes if job.grad_bytes is not None else mem.grad_bytes(job.precision)
    st_first = mem.state_bytes(pd_first, pe_first, zero, shard_d, shard_e, gb)
    st_last = mem.state_bytes(pd_last, p_exp_last, zero, shard_d, shard_e, gb)
    act_scale = FP8_ACTIVATION_FACTOR if job.precision == "fp8" else 1.0
    fused_glu = bool(g.get("fused_glu", 0))
    act_layer = mem.layer_activation_bytes(m, T, s_loc, tp, sp, rc, flash, fused_glu) * act_scale
    work = mem.working_bytes(m, T, s_loc, tp, sp, rc, flash, fused_glu) * act_scale
    logits = T * m.vocab / tp * mem.LOGIT_BYTES
    # ZeRO-3 keeps two gathered layers (current + prefetched) in 16-bit
    z3_buf = np.where(
        zero >= 3, 2 * (p_dense + p_exp) / np.maximum(busy, 1) * mem.WEIGHT_BYTES, 0.0
    )
    # ZeRO-2 (FSDP) computes one unit's (layer's) gradient unsharded in 16-bit and casts it to
    # the reduce dtype for its reduce-scatter, which overlaps the next unit's backward
    z2_buf = np.where(
        zero == 2,
        (p_dense + p_exp) / np.maximum(busy, 1) * (mem.WEIGHT_BYTES + gb),
        0.0,
    )
    z3_buf = z3_buf + z2_buf
    held_last = last * inflight_chunks(pp, n_micro, v, pp - 1) / v
    act_first = act_layer * held + work
    act_last = act_layer * held_last + work + logits
    act_first = np.where(single, act_layer * m.layers + work + logits, act_first)
    # the caching allocator's fragmentation falls on the activations, allocated and freed every
    # micro-batch; weights, gradients and optimizer states live in buffers allocated once
    # (Megatron-core's contiguous param/grad buffers, FSDP flat parameters)
    frag = 1 + g["fragmentation"]
    tot_first = st_first + act_first * frag + z3_buf
    tot_last = st_last + act_last * frag + z3_buf
    reserve = g["reserve_gib"] * 2**30
    use_last = (tot_last > tot_first) & ~single
    total = np.maximum(tot_first, tot_last) + reserve
    states = np.where(use_last, st_last, st_first)
    acts = np.where(use_last, act_last, act_first)

    # ---- data parallelism, ZeRO, optimizer -------------------------------------------
    # gradients are reduced in the dtype they are accumulated in (fp32 for bf16 / fp8 training)
    grad_d = np.maximum(pd_first, pd_last) * gb
    grad_e = np.maximum(pe_first, p_exp_last) * gb
    stride_e = tp * cp * ep * stretch
    bucket = g.get("dp_bucket_mb", 0.0) * 1e6

    # the updated weights are all-gathered in 16-bit (Megatron's distributed optimizer gathers
    # bf16 params; FSDP gathers in its param dtype), whatever the gradients are reduced in
    w_d = np.maximum(pd_first, pd_last) * mem.WEIGHT_BYTES
    w_e = np.maximum(pe_first, p_exp_last) * mem.WEIGHT_BYTES

    def buckets(nbytes: np.ndarray, unit: np.ndarray | float) -> np.ndarray | float:
        return np.maximum(1.0, np.ceil(nbytes / unit)) if np.any(np.asarray(unit) > 0) else 1.0

    def dp_coll(
        nbytes: np.ndarray,
        wbytes: np.ndarray,
        n: np.ndarray,
        stride: np.ndarray,
        rs_only: bool = False,
        unit: np.ndarray | float = bucket,
    ) -> np.ndarray:
        """Gradient reduction in buckets of ``unit`` bytes (each pays the collective's latency):
        all-reduce without ZeRO; with it, reduce-scatter of the gradients plus all-gather of the
        updated 16-bit weights (``wbytes``)."""
        nb = buckets(nbytes, unit)
        rs = coll.reduce_scatter(sys, nbytes / nb, n, stride) * nb
        if rs_only:
            return rs * ((n > 1) & (nbytes > 0))
        ar = coll.all_reduce(sys, nbytes / nb, n, stride) * nb
        return np.where(zero >= 1, rs + dp_ag(wbytes, n, stride), ar) * ((n > 1) & (nbytes > 0))

    def dp_ag(wbytes: np.ndarray, n: np.ndarray, stride: np.ndarray) -> np.ndarray:
        """All-gather of the updated 16-bit weights (none where the group holds none)."""
        nw = buckets(wbytes, bucket)
        return coll.all_gather(sys, wbytes / nw, n, stride) * nw * ((n > 1) & (wbytes > 0))

    dp_t = dp_coll(grad_d, w_d, shard_d, dp_stride) + dp_coll(grad_e, w_e, shard_e, stride_e)
    intf = intf_of(dp_stride * shard_d)
    mb_bwd = np.where(single, m.layers, busy) * l_b
    window = g["dp_overlap"] * mb_bwd
    # ZeRO-0/1: one reduction per step, hidden behind the last micro-batch's backward
    dp01 = _overlap(dp_t, window, intf)
    # ZeRO-2: gradients are sharded in memory, so every micro-batch reduce-scatters what it
    # produced (behind that micro-batch's slot) and adds it to the fp32 shard; the updated
    # weights are all-gathered once per step. The reduction runs per FSDP unit (one layer, as
    # Llama 3 wraps each transformer block; DeepSpeed's stage-2 buckets are as large), not in
    # Megatron's small DDP buckets: a few latency-bound ring passes per micro-batch, not ~100.
    # A once-per-step reduction would need an unsharded accumulation buffer for the whole step
    # (PyTorch's pipeline schedules run FSDP with requires_gradient_sync off until the last
    # backward): that is ZeRO-1's memory and timing, so it is zero=1 here.
    layers_here = np.where(single, m.layers, busy)
    unit_d = np.maximum(bucket, grad_d / layers_here)
    unit_e = np.maximum(bucket, grad_e / layers_here)
    rs_micro = dp_coll(grad_d, w_d, shard_d, dp_stride, True, unit_d) + dp_coll(
        grad_e, w_e, shard_e, stride_e, True, unit_e
    )
    ag_step = dp_ag(w_d, shard_d, dp_stride) + dp_ag(w_e, shard_e, stride_e)
    dp2 = n_micro * _overlap(rs_micro, g["dp_overlap"] * stage_t, intf) + _overlap(
        ag_step, window, intf
    )
    dp_exposed = np.where(zero >= 3, 0.0, np.where(zero == 2, dp2, dp01))
    # ZeRO-3: every layer's weights are all-gathered for forward and again for backward, and
    # its gradients reduce-scattered, for every micro-batch, over the whole dp*cp group; each
    # is prefetched behind the previous layer's compute
    w_layer = (pd_first + pe_first) / layers_here * mem.WEIGHT_BYTES
    ag = coll.all_gather(sys, w_layer, shard_d, dp_stride) * (shard_d > 1)
    z3_f = _overlap(ag, g["dp_overlap"] * l_f, intf)
    z3_b = _overlap(2 * ag, g["dp_overlap"] * l_b, intf)
    z3_exposed = np.where(zero >= 3, n_micro * layers_here * (z3_f + z3_b), 0.0)
    opt_params = np.where(zero >= 1, pd_first / shard_d + pe_first / shard_e, pd_first + pe_first)
    optim_t = opt_params * 30.0 / hbm

    step = pipeline_t + dp_exposed + z3_exposed + optim_t

    # ---- FLOPs, utilisation --------------------------------------------------------------
    gpus = tp * pp * cp * dp
    tokens = job.batch_seqs * s
    mf = model_flops_per_token(m, s) * tokens
    rec_fl = (
        np.select(
            [rc == 0, rc == 1, rc == 2], [recompute_flops_per_token(m, s, r) for r in RECOMPUTE]
        )
        * tokens
    )
    peak = sys.peak(job.precision if job.precision != "fp8" else "bf16")
    mfu = mf / (step * gpus * peak)
    return {
        "step_time_s": step,
        "pipeline_s": pipeline_t,
        "bubble_s": bubble_t,
        "tp_comm_s": n_micro * layers_here * (4 + 2 * (rc == 2)) * tp_exp,
        "ep_comm_s": n_micro
        * layers_here
        * (2 + (rc == 2))
        * ep_exposed
        * (m.moe_layers / m.layers),
        "cp_comm_s": n_micro * layers_here * (cp_f + cp_b),
        "pp_comm_s": slots * p2p_t,
        "dp_comm_s": dp_t,
        "dp_exposed_s": dp_exposed,
        "zero3_exposed_s": z3_exposed,
        "optimizer_s": optim_t,
        "micro_batches": n_micro,
        "compute_s": n_micro * stage_t
        - n_micro
        * layers_here
        * (
            (4 + 2 * (rc == 2)) * tp_exp
            + (cp_f + cp_b)
            + (2 + (rc == 2)) * ep_exposed * (m.moe_layers / max(m.layers, 1))
        ),
        "memory_bytes": total,
        "state_bytes": states,
        "activation_bytes": acts,
        "reserve_bytes": np.full_like(total, reserve),
        "fits": total <= sys.hbm_bytes,
        "model_flops": np.full_like(step, mf),
        "recompute_flops": rec_fl,
        "mfu": mfu,
        "hfu": (mf + rec_fl) / (step * gpus * peak),
        "tokens_per_s": tokens / step,
    }
