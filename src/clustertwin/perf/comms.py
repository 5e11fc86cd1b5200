"""Exposed communication per kind: the part of each collective that does not hide behind
compute, plus the slowdown the hidden part inflicts on the compute it overlaps.

* tensor parallelism: 2 all-reduces (or reduce-scatter + all-gather with sequence parallelism)
  per layer in forward, 2 in backward, on the group's tier; exposed share ``1 - tp_overlap``
  (the stack's, else the generation's).
* context parallelism: a KV ring overlapped with the attention kernel (on the network once
  tp*cp leaves the NVLink domain).
* expert parallelism: dispatch + combine all-to-all per MoE layer at the stack's dispatcher
  efficiency, exposed share ``1 - ep_overlap``.
* data parallelism (ZeRO 0/1): gradient all-reduce (reduce-scatter + 16-bit weight all-gather
  under ZeRO) in buckets of ``dp_bucket_mb``, hidden behind up to ``dp_overlap`` of the last
  micro-batch's backward. ZeRO-2 (FSDP sharding gradients): every micro-batch reduce-scatters
  its gradients in one-layer units behind its own slot; weights all-gathered once per step.
* ZeRO-3 / FSDP: every layer's weights all-gathered for forward and again for backward, its
  gradients reduce-scattered, each micro-batch, over the dp*cp group; with a prefetch depth of
  at least one the gather of the next layer runs behind this layer's compute (up to the stack's
  ``zero3_overlap`` of it), so per layer only ``max(0, comm - overlap x compute)`` is exposed;
  without prefetch all of it; the first layer's gather of each pass is never hidden.
  Latency grows with the group: NCCL rings pay one step latency per domain crossed
  (:mod:`clustertwin.perf.collectives`).
* Overlap is not free: the hidden part still adds ``interference_nvlink`` (NVLink group) or
  ``interference_network`` of its duration to the concurrent compute.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from clustertwin.perf import collectives as coll
from clustertwin.perf.system import System


def overlap(comm: Any, window: Any, intf: Any) -> Any:
    """Time a communication of ``comm`` seconds adds when it overlaps up to ``window`` seconds
    of compute: the part that does not fit is exposed, and the hidden part still slows the
    compute by the fraction ``intf`` (interference)."""
    hidden = np.minimum(comm, window)
    return comm - hidden + intf * hidden


def interference(sys: System, group_span: Any) -> Any:
    """Interference of a collective whose group spans ``group_span`` GPUs in rank order."""
    g = sys.gen
    return np.where(
        group_span > float(sys.nvlink_domain),
        g.get("interference_network", 0.0),
        g.get("interference_nvlink", 0.0),
    )


def tp_exposed(sys: System, nbytes: Any, tp: Any, tp_overlap: float) -> Any:
    """Exposed seconds of one tensor-parallel all-reduce (or RS + AG) of ``nbytes``."""
    ar = coll.all_reduce(sys, nbytes, tp, 1.0) * (tp > 1)
    return ar * (1 - tp_overlap + interference(sys, tp) * tp_overlap)


def cp_exposed(
    sys: System, kv_bytes: Any, tp: Any, cp: Any, attn_f: Any, attn_b: Any
) -> tuple[Any, Any]:
    """(forward, backward) exposed seconds of the KV ring per layer."""
    step = coll.p2p_on(sys, kv_bytes, tp * cp > sys.nvlink_domain) * (cp > 1)
    intf = interference(sys, tp * cp)
    return overlap((cp - 1) * step, attn_f, intf), overlap(2 * (cp - 1) * step, attn_b, intf)


def ep_exposed(
    sys: System, nbytes: Any, ep: Any, stride: Any, efficiency: float, ep_overlap: float | None
) -> Any:
    """Exposed seconds of one MoE layer's dispatch + combine (per pass)."""
    a2a = coll.all_to_all(sys, nbytes, ep, stride) / efficiency * (ep > 1)
    ov = sys.gen["ep_overlap"] if ep_overlap is None else ep_overlap
    return 2 * a2a * (1 - ov + interference(sys, stride * ep) * ov)


def _buckets(nbytes: Any, unit: Any) -> Any:
    return np.maximum(1.0, np.ceil(nbytes / unit)) if np.any(np.asarray(unit) > 0) else 1.0


def weight_gather(sys: System, wbytes: Any, n: Any, stride: Any) -> Any:
    """All-gather of the updated 16-bit weights in buckets (none where the group holds none)."""
    nw = _buckets(wbytes, sys.gen.get("dp_bucket_mb", 0.0) * 1e6)
    return coll.all_gather(sys, wbytes / nw, n, stride) * nw * ((n > 1) & (wbytes > 0))


class Ranks(NamedTuple):
    """A communicating group: ``n`` ranks, ``stride`` apart in the rank order."""

    n: Any
    stride: Any


def grad_reduce(
    sys: System,
    zero: Any,
    nbytes: Any,
    wbytes: Any,
    ranks: Ranks,
    rs_only: bool = False,
    unit: Any = None,
) -> Any:
    """Gradient reduction over ``ranks`` in buckets of ``unit`` bytes (each pays the
    collective's latency): all-reduce without ZeRO; with it, reduce-scatter of the gradients
    plus all-gather of the updated 16-bit weights (``wbytes``); ``rs_only``: the
    reduce-scatter alone."""
    n, stride = ranks
    unit = sys.gen.get("dp_bucket_mb", 0.0) * 1e6 if unit is None else unit
    nb = _buckets(nbytes, unit)
    live = (n > 1) & (nbytes > 0)
    rs = coll.reduce_scatter(sys, nbytes / nb, n, stride) * nb
    if rs_only:
        return rs * live
    ar = coll.all_reduce(sys, nbytes / nb, n, stride) * nb
    return np.where(zero >= 1, rs + weight_gather(sys, wbytes, n, stride), ar) * live


def zero3_exposed(
    sys: System,
    layer_wbytes: Any,
    ranks: Ranks,
    l_f: Any,
    l_b: Any,
    prefetch: int,
    z3_overlap: float,
) -> Any:
    """Exposed seconds of ZeRO-3 traffic over ``ranks`` for one layer and one micro-batch
    (forward gather, backward gather + reduce-scatter)."""
    n, stride = ranks
    ag = coll.all_gather(sys, layer_wbytes, n, stride) * (n > 1)
    intf = interference(sys, stride * n)
    if prefetch <= 0:
        return 3 * ag
    ov = z3_overlap * sys.gen["dp_overlap"]
    return overlap(ag, ov * l_f, intf) + overlap(2 * ag, ov * l_b, intf)


def zero3_first_gather(sys: System, layer_wbytes: Any, n: Any, stride: Any) -> Any:
    """The first layer's gather of a forward and of a backward pass: nothing to hide behind."""
    return 2 * coll.all_gather(sys, layer_wbytes, n, stride) * (n > 1)
