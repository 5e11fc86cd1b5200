"""Vectorized step-time and memory model: one NumPy pass over an array of parallelism plans.

A plan is a set of equal-length integer arrays (see :data:`PLAN_KEYS`). :func:`evaluate`
returns arrays of seconds and bytes for every plan at once; nothing loops over plans.

Time of one optimizer step = pipeline slots x (busiest stage's forward + backward + recompute of
one micro-batch, plus its exposed tensor/context/expert-parallel communication and pipeline
sends) + exposed data-parallel / ZeRO communication + optimizer step.

The pieces are small named functions: per operator in :mod:`clustertwin.perf.ops` (GEMMs by
their three dimensions and dtype, attention by head dimension / keys / causality, element-wise
work by bytes, MoE grouped GEMMs, router and permutation, LM head and cross-entropy, kernel
launch gaps, optimizer) and per communication kind in :mod:`clustertwin.perf.comms`; memory per
GPU in :mod:`clustertwin.perf.memory` (:func:`clustertwin.perf.memory.plan_memory`). What a
software stack changes (flash attention, fusion, FP8 recipe, FSDP prefetch, pipeline
schedules) comes from the ``Job``'s :class:`clustertwin.perf.stacks.StackProfile`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clustertwin.perf import collectives as coll
from clustertwin.perf import comms, ops
from clustertwin.perf import memory as mem
from clustertwin.perf.flops import Shape, model_flops_per_token, recompute_flops_per_token
from clustertwin.perf.pipeline import schedule, stage_layers
from clustertwin.perf.stacks import NEUTRAL, StackProfile
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
ACT_BYTES = ops.ACT_BYTES


@dataclass(frozen=True)
class Job:
    """What is trained: architecture, sequence length, global batch, precision and stack."""

    shape: Shape
    seq: int
    batch_seqs: Any  #: int, or an array over plans
    precision: str = "bf16"
    #: bytes per parameter of the gradient buffer; None: by precision (memory.grad_bytes)
    grad_bytes: float | None = None
    #: the software stack's kernels and behaviours (training.stack); default Megatron-core's
    stack: StackProfile = field(default=NEUTRAL)


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


@dataclass
class _Plan:
    """Plan arrays as floats and what the rank order and batch make of them."""

    tp: np.ndarray
    pp: np.ndarray
    cp: np.ndarray
    ep: np.ndarray
    dp: np.ndarray
    b: np.ndarray
    v: np.ndarray
    rc: np.ndarray
    sp: np.ndarray
    zero: np.ndarray
    n_micro: np.ndarray
    pp_stride: np.ndarray
    ep_stride: np.ndarray
    dp_stride: np.ndarray
    stretch: Any
    #: expert-data-parallel stride (ranks between the holders of the same experts)
    edp_stride: Any
    #: tensor parallelism of the expert weights (1 where the stack folds ep over tp)
    etp: Any


def _plan(job: Job, plan: dict[str, np.ndarray], pp_inner: bool) -> _Plan:
    f64 = np.float64
    tp, pp, cp = (plan[k].astype(f64) for k in ("tp", "pp", "cp"))
    dp, b = plan["dp"].astype(f64), plan["micro_batch"].astype(f64)
    # strides of the groups whose placement depends on the rank order. pp outermost: pipeline
    # neighbours tp*cp*dp ranks apart, the dp*cp group contiguous from stride tp. dp outermost:
    # pipeline neighbours tp*cp apart; every data-parallel (and expert) group is stretched by pp
    # (the dp*cp group is taken at the mean stride of its span, tp*pp, exact for cp 1).
    stretch = pp if pp_inner else 1.0
    ep = plan["ep"].astype(f64)
    if job.stack.expert_tp_folding:
        # MoE parallel folding: the ep group is ep consecutive ranks of the tp-cp-dp block
        # (stretched by pp once it leaves the tp*cp block under dp-outermost order); experts
        # unsplit, replicated over the tp*cp*dp/ep expert-data-parallel ranks ep apart
        ep_stride = np.where(ep <= tp * cp, 1.0, stretch)
        edp_stride, etp = ep * stretch, np.ones_like(tp)
    else:
        ep_stride, edp_stride, etp = tp * cp * stretch, tp * cp * ep * stretch, tp
    return _Plan(
        tp=tp,
        pp=pp,
        cp=cp,
        ep=ep,
        dp=dp,
        b=b,
        v=plan["virtual_stages"].astype(f64),
        rc=plan["recompute"],
        sp=plan["sequence_parallel"],
        zero=plan["zero"],
        n_micro=job.batch_seqs / (dp * b),
        pp_stride=tp * cp if pp_inner else tp * cp * dp,
        ep_stride=ep_stride,
        dp_stride=tp * stretch,
        stretch=stretch,
        edp_stride=edp_stride,
        etp=etp,
    )


def _layers(job: Job, sys: System, p: _Plan) -> dict[str, Any]:
    """Forward, backward and recompute seconds of one (average) layer and one micro-batch,
    with its exposed tensor/context/expert-parallel communication."""
    m, g, st = job.shape, sys.gen, job.stack
    h = float(m.hidden)
    T = p.b * job.seq / p.cp
    c = ops.Ctx(sys, st, m, job.precision, float(job.seq), p.tp, p.cp, p.ep, T,
                np.where(p.sp > 0, p.tp, 1.0))
    # ring attention runs one block kernel per ring step; short blocks fill the GPU poorly
    chunk = job.seq / (2.0 * p.cp)
    cp_eff = np.where(p.cp > 1, chunk / (chunk + g.get("cp_chunk_half_tokens", 0.0)), 1.0)
    qkv_f, qkv_b = ops.gemm(c, "qkv", (T, h, (m.q_dim + 2 * m.kv_dim) / p.tp))
    prj_f, prj_b = ops.gemm(c, "proj", (T, m.q_dim / p.tp, h))
    attn_f, attn_b, soft_bytes = ops.attention(c, cp_eff)
    soft_t = soft_bytes / c.hbm
    tp_ov = st.tp_overlap if st.tp_overlap is not None else g["tp_overlap"]
    tp_exp = comms.tp_exposed(sys, T * h * ACT_BYTES, p.tp, tp_ov)
    cp_f, cp_b = comms.cp_exposed(sys, 2 * T * m.kv_dim / p.tp * ACT_BYTES, p.tp, p.cp,
                                  attn_f, attn_b)
    gap = ops.kernel_gaps(c)
    ch_f, ch_b, n_f, n_b = ops.elementwise_chain(c, m.ffn / p.tp)

    def layer(mlp_f: Any, mlp_b: Any, elem: Any, ep_t: Any) -> tuple[Any, Any, Any]:
        elem_t = elem / c.hbm + soft_t
        comm = 2 * tp_exp + ep_t
        fwd = qkv_f + prj_f + mlp_f + attn_f + elem_t + comm + cp_f + gap + ch_f
        bwd = qkv_b + prj_b + mlp_b + attn_b + ops.ELEM_BWD * elem_t + comm + cp_b + 2 * gap + ch_b
        fwd, bwd = ops.host_bound(c, fwd, bwd, n_f, n_b, comm)
        # selective: the attention core (Megatron); stacks with op-level selective
        # checkpointing also recompute a share of the GEMMs and the element-wise work
        share = st.selective_gemm_recompute
        sel = attn_f + soft_t + share * (qkv_f + prj_f + mlp_f) + (share > 0) * elem / c.hbm
        rec = np.where(p.rc == 2, fwd, np.where(p.rc == 1, sel, 0.0))
        return fwd, bwd, rec

    mf, mb = ops.dense_mlp(c)
    d = layer(mf, mb, ops.elementwise_bytes(c, m.ffn / p.tp), 0.0)
    out = {"tp_exp": tp_exp, "cp_f": cp_f, "cp_b": cp_b, "ep_exp": np.zeros_like(p.tp), "c": c}
    if not m.moe:
        out.update(zip(("l_f", "l_b", "l_r"), d, strict=True))
        return out
    ef, eb, e_elem = ops.moe_compute(c)
    tok_bytes = 1.5 if job.precision == "fp8" and st.fp8("experts") else ACT_BYTES
    a2a_bytes = c.dispatch_tokens * m.active_experts * h * tok_bytes
    ep_exp = comms.ep_exposed(
        sys, a2a_bytes, p.ep, p.ep_stride, st.moe_dispatch_efficiency, st.ep_overlap
    )
    e = layer(ef, eb, e_elem, ep_exp)
    wd, wm = (m.layers - m.moe_layers) / m.layers, m.moe_layers / m.layers
    out.update(zip(("l_f", "l_b", "l_r"), (wd * x + wm * y for x, y in zip(d, e, strict=True)), strict=True))
    out["ep_exp"] = ep_exp
    return out


def _pipeline(job: Job, sys: System, p: _Plan, lay: dict[str, Any]) -> dict[str, Any]:
    """Busiest stage's time per micro-batch, pipeline sends, slots and bubble."""
    m = job.shape
    layer_t = lay["l_f"] + lay["l_b"] + lay["l_r"]
    head_t = ops.head_and_loss(lay["c"])
    busy, last = stage_layers(m.layers, p.pp, p.v)
    stage_t = np.maximum(busy * layer_t, last * layer_t + head_t)
    stage_t = np.where(p.pp == 1, m.layers * layer_t + head_t, stage_t)
    T = p.b * job.seq / p.cp
    p2p_t = np.where(
        p.pp > 1,
        2 * p.v * coll.p2p(sys, T * m.hidden * ACT_BYTES / p.tp, p.pp_stride, p.pp),
        0.0,
    )
    # the interleaved schedule can overlap its sends with the next chunk's compute
    p2p_t = p2p_t * np.where(p.v > 1, 1.0 - job.stack.pp_overlap, 1.0)
    slots, _ = schedule(p.pp, p.n_micro, p.v)
    layers_here = np.where(p.pp == 1, m.layers, busy)
    return {
        "stage_t": stage_t,
        "p2p_t": p2p_t,
        "slots": slots,
        "busy": busy,
        "last": last,
        "layers_here": layers_here,
        "pipeline_t": slots * (stage_t + p2p_t),
        "bubble_t": (slots - p.n_micro) * (stage_t + p2p_t),
    }


def _data_parallel(
    job: Job, sys: System, p: _Plan, lay: dict[str, Any], pipe: dict[str, Any], mm: dict[str, Any]
) -> dict[str, Any]:
    """Exposed data-parallel (ZeRO 0/1/2) and ZeRO-3 communication, and the optimizer step."""
    g, st = sys.gen, job.stack
    shard_d, shard_e = mm["shard_d"], mm["shard_e"]
    pd, pe = mm["pd_max"], mm["pe_max"]
    gb = mm["grad_bytes"]
    grad_d, grad_e = pd * gb, pe * gb
    # the updated weights are all-gathered in 16-bit (Megatron's distributed optimizer gathers
    # bf16 params; FSDP gathers in its param dtype), whatever the gradients are reduced in
    w_d, w_e = pd * mem.WEIGHT_BYTES, pe * mem.WEIGHT_BYTES
    stride_e = p.edp_stride
    z = p.zero
    dense, expert = comms.Ranks(shard_d, p.dp_stride), comms.Ranks(shard_e, stride_e)
    dp_t = comms.grad_reduce(sys, z, grad_d, w_d, dense) + comms.grad_reduce(sys, z, grad_e, w_e, expert)
    intf = comms.interference(sys, p.dp_stride * shard_d)
    layers = pipe["layers_here"]
    window = g["dp_overlap"] * layers * lay["l_b"]
    ag_step = comms.weight_gather(sys, w_d, shard_d, p.dp_stride) + comms.weight_gather(
        sys, w_e, shard_e, stride_e
    )
    # ZeRO-0/1: one reduction per step, hidden behind the last micro-batch's backward; under
    # ZeRO-1 the stack may gather the updated weights behind the next step's first forward
    fwd_window = g["dp_overlap"] * layers * lay["l_f"] * st.param_gather_overlap
    ag01 = np.where(z >= 1, ag_step, 0.0)
    dp01 = comms.overlap(dp_t - ag01, window, intf) + comms.overlap(ag01, fwd_window, intf)
    # ZeRO-2: every micro-batch reduce-scatters its gradients in one-layer units behind its own
    # slot (sharded gradients cannot accumulate unreduced); weights all-gathered once per step
    bucket = g.get("dp_bucket_mb", 0.0) * 1e6
    rs_micro = comms.grad_reduce(
        sys, z, grad_d, w_d, dense, True, np.maximum(bucket, grad_d / layers)
    ) + comms.grad_reduce(
        sys, z, grad_e, w_e, expert, True, np.maximum(bucket, grad_e / layers)
    )
    dp2 = p.n_micro * comms.overlap(rs_micro, g["dp_overlap"] * pipe["stage_t"], intf)
    dp2 = dp2 + comms.overlap(ag_step, window, intf)
    dp_exposed = np.where(z >= 3, 0.0, np.where(z == 2, dp2, dp01))
    w_layer = (mm["pd_first"] + mm["pe_first"]) / layers * mem.WEIGHT_BYTES
    per_layer = comms.zero3_exposed(
        sys, w_layer, dense, lay["l_f"], lay["l_b"], st.zero3_prefetch, st.zero3_overlap,
    )
    first = comms.zero3_first_gather(sys, w_layer, shard_d, p.dp_stride)
    z3 = np.where(z >= 3, p.n_micro * (layers * per_layer + first), 0.0)
    opt_params = np.where(
        z >= 1, mm["pd_first"] / shard_d + mm["pe_first"] / shard_e, mm["pd_first"] + mm["pe_first"]
    )
    return {
        "dp_t": dp_t,
        "dp_exposed": dp_exposed,
        "z3_exposed": z3,
        "optim_t": ops.optimizer(lay["c"], opt_params),
    }


def _evaluate(
    job: Job, sys: System, plan: dict[str, np.ndarray], pp_inner: bool
) -> dict[str, np.ndarray]:
    """:func:`evaluate` for one rank order: ``pp_inner`` False is tp-cp-ep-dp-pp (pp
    outermost), True tp-cp-pp-dp (dp, with ep inside it, outermost)."""
    p = _plan(job, plan, pp_inner)
    lay = _layers(job, sys, p)
    pipe = _pipeline(job, sys, p, lay)
    mm = mem.plan_memory(job, sys, p, pipe["busy"], pipe["last"])
    dpx = _data_parallel(job, sys, p, lay, pipe, mm)
    return _metrics(job, sys, p, lay, pipe, mm, dpx)


def _metrics(
    job: Job, sys: System, p: _Plan, lay: dict[str, Any], pipe: dict[str, Any],
    mm: dict[str, Any], dpx: dict[str, Any],
) -> dict[str, np.ndarray]:
    """The result arrays: step time, whether the plan fits, breakdowns, memory, FLOPs and
    utilisation."""
    step = pipe["pipeline_t"] + dpx["dp_exposed"] + dpx["z3_exposed"] + dpx["optim_t"]
    fits = mm["total"] <= sys.hbm_bytes
    if not job.stack.interleaved:  # the stack has no interleaved pipeline schedule
        fits = fits & (p.v <= 1)
    m, s, rc = job.shape, float(job.seq), p.rc
    layers, n_micro = pipe["layers_here"], p.n_micro
    gpus = p.tp * p.pp * p.cp * p.dp
    tokens = job.batch_seqs * s
    ones = np.ones_like(step)
    mf = model_flops_per_token(m, s) * tokens * ones
    rec_fl = np.select(
        [rc == 0, rc == 1, rc == 2], [recompute_flops_per_token(m, s, r) for r in RECOMPUTE]
    ) * tokens
    # one MFU everywhere: model FLOPs (no recompute) over the dense peak of the precision used
    peak = sys.peak(job.precision)
    passes = 4 + 2 * (rc == 2)
    ep_share = m.moe_layers / max(m.layers, 1)
    tp_c = n_micro * layers * passes * lay["tp_exp"]
    ep_c = n_micro * layers * (2 + (rc == 2)) * lay["ep_exp"] * ep_share
    cp_c = n_micro * layers * (lay["cp_f"] + lay["cp_b"])
    return {
        "step_time_s": step,
        "pipeline_s": pipe["pipeline_t"],
        "bubble_s": pipe["bubble_t"],
        "tp_comm_s": tp_c,
        "ep_comm_s": ep_c,
        "cp_comm_s": cp_c,
        "pp_comm_s": pipe["slots"] * pipe["p2p_t"],
        "dp_comm_s": dpx["dp_t"],
        "dp_exposed_s": dpx["dp_exposed"],
        "zero3_exposed_s": dpx["z3_exposed"],
        "optimizer_s": dpx["optim_t"],
        "micro_batches": n_micro * ones,
        "compute_s": n_micro * pipe["stage_t"] - tp_c - cp_c - ep_c,
        "memory_bytes": mm["total"],
        "state_bytes": mm["states"],
        "activation_bytes": mm["acts"],
        "reserve_bytes": np.full_like(step, mm["reserve"]),
        "fits": fits,
        "model_flops": mf,
        "recompute_flops": rec_fl,
        "mfu": mf / (step * gpus * peak),
        "hfu": (mf + rec_fl) / (step * gpus * peak),
        "tokens_per_s": tokens / step,
    }
