"""Collective-communication times on a two-level machine: NVLink inside the NVLink domain,
the scale-out fabric across domains. All functions take NumPy arrays (or scalars) and return
seconds per call.

A parallel group of ``n`` ranks whose neighbours are ``stride`` ranks apart (Megatron rank order:
tp innermost, then cp, then dp with ep inside it, then pp) holds ``k = min(n, domain // stride)``
members in each NVLink domain and spans ``n / k`` domains. Collectives are hierarchical as in
NCCL: a reduce-scatter/all-gather inside the domain over NVLink, then a ring (or tree, when
cheaper in latency) across domains carrying 1/k of the data on every GPU's own rail NIC in
parallel. Ring collectives follow the rails, so leaf oversubscription does not slow them;
all-to-all traffic that leaves a leaf does share the uplinks and is divided by the
oversubscription ratio.

Bandwidth terms use the standard bus-bandwidth algebra (NCCL ``PERFORMANCE.md``): all-reduce
moves 2(n-1)/n of the buffer through each GPU's link, reduce-scatter and all-gather (n-1)/n,
all-to-all (n-1)/n.

Pods (``System.pod_gpus``, ``pod_oversubscription``; Meta's 24K RoCE cluster: pods of 3,072 GPUs,
1:7 toward the aggregation layer, Llama 3 arXiv 2407.21783 section 3.3.1). Placement assumed:
the job's ranks fill GPUs in order, pod after pod, starting at a pod boundary, in Megatron-core's
rank order (``tp-cp-ep-dp-pp``: tp innermost and inside the NVLink domain, then cp, then dp with
ep inside it, pp outermost). A group of ``n`` ranks at ``stride`` then occupies ``n * stride``
consecutive ranks and spans ``P = ceil(n * stride / pod_gpus)`` pods (at most ``n``; groups that
fit in a pod are taken as aligned to it). With this order dp groups stay inside a pod while
``dp * tp * cp <= pod_gpus`` and mainly pipeline sends cross pods. Llama 3 itself orders
[TP, CP, PP, DP], DP outermost (section 3.3.3), which keeps each pipeline inside a pod and
stretches the data-parallel groups instead; with pods set, :func:`clustertwin.perf.costmodel.
evaluate` prices both orders (the caller passes the strides) and keeps the faster per plan.

Every pod's GPUs run the same kind of collective at once, so the aggregation uplinks carry the
pod's cross-pod share of that traffic; they offer ``1 / pod_oversubscription`` of the pod's
injection bandwidth, which slows the network part by ``max(1, pod_oversubscription x f)`` where
``f`` is the share of a GPU's network bytes that leave its pod:

* rings (all-reduce, reduce-scatter, all-gather; ordered pod by pod): ``P`` of the ``d`` ring
  hops cross, ``f = P / d`` - a ring with more members per pod than the ratio is not slowed;
* all-to-all with members spread evenly: ``f = (n - n/P) / (n - k)``; whichever of the leaf and
  pod bottlenecks is tighter paces it;
* pipeline sends: the stages at the ``P - 1`` pod boundaries send both ways, ``f = 2 (P-1) / n``.

Crossing pods also costs the aggregation layer's two extra hops (5 switch hops).
"""

from __future__ import annotations

import numpy as np

from clustertwin.perf.system import System


def split(system: System, n: np.ndarray, stride: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(members per NVLink domain, domains spanned) of groups of size ``n`` and ``stride``."""
    n = np.asarray(n, dtype=np.float64)
    stride = np.asarray(stride, dtype=np.float64)
    per_domain = np.maximum(1.0, np.floor(system.nvlink_domain / np.maximum(stride, 1.0)))
    k = np.minimum(n, per_domain)
    return k, np.maximum(1.0, n / k)


def pods(system: System, n: np.ndarray, stride: np.ndarray) -> np.ndarray:
    """Pods spanned by a group of ``n`` ranks ``stride`` apart (1 without pods)."""
    n = np.asarray(n, dtype=np.float64)
    if not system.pod_gpus:
        return np.ones_like(n)
    span = n * np.asarray(stride, dtype=np.float64)
    return np.clip(np.ceil(span / system.pod_gpus), 1.0, np.maximum(n, 1.0))


def pod_factor(system: System, share: np.ndarray) -> np.ndarray:
    """Slowdown of network traffic of which ``share`` leaves the pod (see module docstring)."""
    return np.maximum(1.0, system.pod_oversubscription * np.asarray(share, dtype=np.float64))


def _ring_pod_factor(system: System, n: np.ndarray, stride: np.ndarray, d: np.ndarray):
    p = pods(system, n, stride)
    return np.where(p > 1, pod_factor(system, p / np.maximum(d, 1.0)), 1.0), p


def _nvl_bw(system: System) -> float:
    return system.nvlink_bw * system.gen["nvlink_efficiency"]


def _net_bw(system: System) -> float:
    return system.nic_bw * system.fab["bus_efficiency"]


def _net_step_latency(
    system: System, domains: np.ndarray, n_pods: np.ndarray | float = 1.0
) -> np.ndarray:
    """One network message: software latency plus switch hops (1 leaf, 3 via spine, 5 via core
    or across pods)."""
    nodes_per_leaf = system.nodes_per_leaf
    hops = np.where(
        np.asarray(n_pods) > 1,
        5.0,
        np.where(
            domains <= 1,
            0.0,
            np.where(
                domains <= nodes_per_leaf,
                1.0,
                np.where(domains <= system.switch_radix**2 / 2, 3.0, 5.0),
            ),
        ),
    )
    return system.fab["latency_us"] * 1e-6 + hops * system.hop_latency_s


def all_reduce(system: System, nbytes: np.ndarray, n: np.ndarray, stride: np.ndarray) -> np.ndarray:
    """Seconds for a hierarchical all-reduce of ``nbytes`` per GPU over ``n`` ranks."""
    nbytes = np.asarray(nbytes, dtype=np.float64)
    k, d = split(system, n, stride)
    lat_nvl = system.gen["nvlink_latency_us"] * 1e-6
    intra = np.where(k > 1, 2 * (k - 1) / k * nbytes / _nvl_bw(system) + 2 * (k - 1) * lat_nvl, 0.0)
    slow, p = _ring_pod_factor(system, n, stride, d)
    lat = _net_step_latency(system, d, p)
    ring_lat = 2 * (d - 1) * lat
    tree_lat = 2 * np.log2(np.maximum(d, 1.0)) * lat
    inter = np.where(
        d > 1,
        2 * (d - 1) / d * (nbytes / k) / _net_bw(system) * slow + np.minimum(ring_lat, tree_lat),
        0.0,
    )
    return intra + inter


def reduce_scatter(
    system: System, nbytes: np.ndarray, n: np.ndarray, stride: np.ndarray
) -> np.ndarray:
    """Seconds for a reduce-scatter (or all-gather) of a buffer of ``nbytes`` (whole buffer).

    Half an all-reduce's bandwidth, but NCCL runs reduce-scatter and all-gather as rings only
    (its tree algorithm is for all-reduce), so the network part pays ``d - 1`` step latencies
    across ``d`` domains: at thousands of GPUs and small buffers (ZeRO-3 per-layer gathers,
    gradient buckets) these collectives are latency-bound."""
    nbytes = np.asarray(nbytes, dtype=np.float64)
    k, d = split(system, n, stride)
    lat_nvl = system.gen["nvlink_latency_us"] * 1e-6
    intra = np.where(k > 1, (k - 1) / k * nbytes / _nvl_bw(system) + (k - 1) * lat_nvl, 0.0)
    slow, p = _ring_pod_factor(system, n, stride, d)
    inter = np.where(
        d > 1,
        (d - 1) / d * (nbytes / k) / _net_bw(system) * slow
        + (d - 1) * _net_step_latency(system, d, p),
        0.0,
    )
    return intra + inter


all_gather = reduce_scatter


def all_to_all(system: System, nbytes: np.ndarray, n: np.ndarray, stride: np.ndarray) -> np.ndarray:
    """Seconds for an all-to-all where each GPU sends ``nbytes`` in total spread over ``n`` ranks.

    The NVLink share and the network share proceed at the same time; the network share is
    slowed by oversubscription once the group spans more nodes than one leaf serves."""
    nbytes = np.asarray(nbytes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    k, d = split(system, n, stride)
    lat_nvl = system.gen["nvlink_latency_us"] * 1e-6
    intra = np.where(k > 1, (k - 1) / n * nbytes / _nvl_bw(system) + lat_nvl, 0.0)
    over = np.where(d > system.nodes_per_leaf, system.oversubscription, 1.0)
    p = pods(system, n, stride)
    cross = np.where(p > 1, (n - n / p) / np.maximum(n - k, 1.0), 0.0)
    over = np.maximum(over, pod_factor(system, cross))
    net = system.nic_bw * system.fab["alltoall_efficiency"] / over
    inter = np.where(d > 1, (n - k) / n * nbytes / net + 2 * _net_step_latency(system, d, p), 0.0)
    return np.maximum(intra, inter)


def p2p(
    system: System, nbytes: np.ndarray, stride: np.ndarray, n: np.ndarray | None = None
) -> np.ndarray:
    """Seconds to send ``nbytes`` to a rank ``stride`` away (pipeline neighbours); ``n``: the
    pipeline's stages, which place its NVLink-domain and pod boundaries (None: a single hop).

    A pipeline of ``n`` stages ``stride`` ranks apart occupies ``n * stride`` consecutive ranks.
    It stays on NVLink only if that span fits in one NVLink domain; otherwise the stages at the
    domain boundaries send over the scale-out fabric, and since every stage waits for its
    neighbour's activations (and, interleaved, the last stage feeds the first one's next
    chunk), the slowest hop paces every slot - as the CP ring is paced by its network hop.
    On 8-GPU nodes this changes nothing (any stride >= 8 already leaves the node); on a 72-GPU
    NVL72 rack a tp 4 x dp 4 plan puts pipeline neighbours 16 ranks apart, inside one rack,
    but a 16-stage pipeline spans 256 ranks, four racks."""
    nbytes = np.asarray(nbytes, dtype=np.float64)
    stride = np.asarray(stride, dtype=np.float64)
    span = stride if n is None else stride * np.asarray(n, dtype=np.float64)
    inside = (stride < system.nvlink_domain) & (span <= system.nvlink_domain)
    nvl = nbytes / _nvl_bw(system) + system.gen["nvlink_latency_us"] * 1e-6
    if n is None:
        p = np.ones_like(stride)
        slow = 1.0
    else:
        n = np.asarray(n, dtype=np.float64)
        p = pods(system, n, stride)
        slow = np.where(p > 1, pod_factor(system, 2 * (p - 1) / np.maximum(n, 1.0)), 1.0)
    net = nbytes / _net_bw(system) * slow + _net_step_latency(system, np.full_like(stride, 2.0), p)
    return np.where(inside, nvl, net)


def p2p_on(system: System, nbytes: np.ndarray, over_network: np.ndarray) -> np.ndarray:
    """Seconds to send ``nbytes`` to a neighbour over NVLink, or over the scale-out fabric where
    ``over_network`` (a ring that leaves the NVLink domain is paced by its network hops)."""
    nbytes = np.asarray(nbytes, dtype=np.float64)
    nvl = nbytes / _nvl_bw(system) + system.gen["nvlink_latency_us"] * 1e-6
    net = nbytes / _net_bw(system) + _net_step_latency(system, np.full_like(nbytes, 2.0))
    return np.where(over_network, net, nvl)
