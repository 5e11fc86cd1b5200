"""Pods joined by an oversubscribed aggregation layer (cluster.fabric.pod_gpus and
pod_oversubscription; Meta's 24K RoCE cluster: pods of 3,072 GPUs, 1:7 above them, Llama 3 arXiv
2407.21783 section 3.3.1), and ZeRO-2's per-micro-batch gradient reduction."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from clustertwin.perf import collectives as coll
from clustertwin.perf.costmodel import PLAN_KEYS, Job, evaluate
from clustertwin.perf.flops import Shape

LLAMA = Shape(layers=126, hidden=16384, ffn=53248, heads=128, kv_heads=8, vocab=128256, swiglu=True)
LLAMA8B = Shape(layers=32, hidden=4096, ffn=14336, heads=32, kv_heads=8, vocab=128256, swiglu=True)
MOE = Shape(
    layers=32,
    hidden=4096,
    ffn=14336,
    heads=32,
    kv_heads=8,
    vocab=32000,
    swiglu=True,
    experts=64,
    active_experts=8,
    expert_ffn=1408,
)


def _sys(catalog, pod_gpus=None, ratio=1.0):
    from clustertwin.perf.system import system_from_catalog

    return system_from_catalog(
        catalog, "h100-sxm-80gb", "dgx-h100", "roce-400g", 1.0, pod_gpus, ratio
    )


def _plan(**kw: int) -> dict[str, np.ndarray]:
    base = dict(tp=8, pp=16, cp=1, ep=1, dp=64, micro_batch=1, virtual_stages=4, recompute=0)
    base.update(sequence_parallel=1, zero=1)
    base.update(kw)
    return {k: np.array([base[k]]) for k in PLAN_KEYS}


def test_pod_span_follows_rank_order(catalog):
    sys = replace(_sys(catalog), pod_gpus=3072, pod_oversubscription=7.0)
    # dp 64 at stride tp = 8: 512 consecutive ranks, inside one pod
    assert float(coll.pods(sys, np.array(64.0), np.array(8.0))) == 1.0
    # pp 16 at stride tp*dp = 512 spans 8,192 ranks: three pods
    assert float(coll.pods(sys, np.array(16.0), np.array(512.0))) == 3.0
    # never more pods than members
    assert float(coll.pods(sys, np.array(2.0), np.array(8192.0))) == 2.0


def test_dp_over_eight_pods_slower_at_1_to_7(catalog):
    """1:7 aggregation layer: a data-parallel ring spanning 8 pods with 4 members in each (fewer
    than the ratio: pods of four 8-GPU nodes, tp 8) is slowed; the same at 1:1 is not."""
    job = Job(LLAMA8B, 8192, 256)
    plan = _plan(tp=8, pp=1, dp=32, virtual_stages=1, zero=1)
    thin_sys = _sys(catalog, 32, 7.0)
    assert float(coll.pods(thin_sys, np.array(32.0), np.array(8.0))) == 8.0
    flat = evaluate(job, _sys(catalog, 32, 1.0), plan)
    thin = evaluate(job, thin_sys, plan)
    assert thin["dp_comm_s"][0] > 1.5 * flat["dp_comm_s"][0]
    assert thin["step_time_s"][0] > flat["step_time_s"][0]


def test_ring_with_many_members_per_pod_keeps_its_bandwidth(catalog):
    """Pods of 3,072 GPUs at 1:7: a ring with 384 members in each of 8 pods crosses pods on 8 of
    its 3,072 hops; the uplinks carry far less than 1/7 of the pod's traffic."""
    sys7 = _sys(catalog, 3072, 7.0)
    sys1 = _sys(catalog, 3072, 1.0)
    n, stride, nbytes = np.array(3072.0), np.array(8.0), np.array(1e9)
    assert float(coll.pods(sys7, n, stride)) == 8.0
    t7 = float(coll.reduce_scatter(sys7, nbytes, n, stride))
    t1 = float(coll.reduce_scatter(sys1, nbytes, n, stride))
    assert t7 == t1


def test_plan_inside_one_pod_is_unaffected(catalog):
    """A 2,048-GPU job on pods of 3,072: nothing crosses a pod, so 1:7 changes nothing, plan
    for plan."""
    from clustertwin.perf.search import search

    job = Job(LLAMA, 8192, 512)
    a = search(job, _sys(catalog, 3072, 7.0), 2048)
    b = search(job, _sys(catalog, None, 1.0), 2048)
    assert a.size == b.size > 0
    np.testing.assert_array_equal(a.metrics["step_time_s"], b.metrics["step_time_s"])


def test_expert_all_to_all_across_pods_is_throttled(catalog):
    job = Job(MOE, 4096, 4096)
    # ep 64 at stride tp = 8 spans 512 GPUs: 4 pods of 128
    plan = _plan(tp=8, pp=1, dp=512, ep=64, virtual_stages=1, zero=1)
    flat = evaluate(job, _sys(catalog, 128, 1.0), plan)
    thin = evaluate(job, _sys(catalog, 128, 7.0), plan)
    assert thin["ep_comm_s"][0] > 3 * flat["ep_comm_s"][0]


def test_scenario_pods_reach_the_perf_model(catalog):
    from clustertwin.perf.stage import system_of
    from clustertwin.scenario import load_scenario, with_updates

    scen = load_scenario(None, catalog)
    fab = {**scen.cluster.fabric.model_dump(), "pod_gpus": 3072, "pod_oversubscription": 7.0}
    sys = system_of(with_updates(scen, cluster={"fabric": fab}), catalog)
    assert (sys.pod_gpus, sys.pod_oversubscription) == (3072, 7.0)


def test_zero2_shards_gradients_and_reduces_every_micro_batch(catalog):
    """ZeRO-2 (FSDP sharding gradients): less memory than ZeRO-1 by the sharded gradient buffer
    less one unsharded FSDP unit, and more data-parallel traffic: one gradient reduce-scatter
    per micro-batch."""
    job = Job(LLAMA, 8192, 2048)
    sys = _sys(catalog)
    z1 = evaluate(job, sys, _plan(zero=1))
    z2 = evaluate(job, sys, _plan(zero=2))
    assert z2["state_bytes"][0] < z1["state_bytes"][0]
    assert z2["memory_bytes"][0] < z1["memory_bytes"][0]
    assert z2["dp_exposed_s"][0] > z1["dp_exposed_s"][0]


def _nvl72(catalog):
    from clustertwin.perf.system import system_from_catalog

    return system_from_catalog(catalog, "gb200", "gb200-nvl72", "ib-ndr")


def test_pipeline_spanning_nvl72_racks_is_paced_by_the_network(catalog):
    """GB200 NVL72 (72-GPU NVLink domain), tp 4 x dp 4: pipeline neighbours are 16 ranks apart,
    inside one rack, but a 16-stage pipeline spans 256 ranks, four racks: its rack-boundary
    hops go over the NICs and pace every slot (Megatron-Bridge 25.11 GB200 Llama 3.1 405B row).
    Four stages (64 ranks) stay on NVLink; on 8-GPU DGX nodes nothing changes."""
    sys = _nvl72(catalog)
    nbytes, stride = np.array(64e6), np.array(16.0)
    nvl = float(coll.p2p(sys, nbytes, stride, np.array(4.0)))
    net = float(coll.p2p(sys, nbytes, stride, np.array(16.0)))
    assert nvl == float(coll.p2p(sys, nbytes, stride))
    assert net > 5 * nvl
    dgx = _sys(catalog)
    assert float(coll.p2p(dgx, nbytes, np.array(8.0), np.array(16.0))) == float(
        coll.p2p(dgx, nbytes, np.array(8.0))
    )


def test_rank_order_dp_outermost_keeps_pipeline_inside_pods(catalog):
    """Meta-like pods (3,072 GPUs, 1:7): Llama 3's [TP, CP, PP, DP] order keeps each 16-stage
    pipeline (16 x 8 = 128 ranks) inside a pod, where Megatron's pp-outermost order spreads it
    over pods 1,024 ranks apart. evaluate() takes the faster order per plan and reports it;
    without pods every plan keeps Megatron's order."""
    from clustertwin.perf.costmodel import RANK_ORDERS, _evaluate

    job = Job(LLAMA, 8192, 2048)
    plan = _plan(tp=8, pp=16, dp=128, zero=2)
    sys = _sys(catalog, 3072, 7.0)
    meg = _evaluate(job, sys, plan, pp_inner=False)
    meta = _evaluate(job, sys, plan, pp_inner=True)
    best = evaluate(job, sys, plan)
    assert meta["pp_comm_s"][0] < meg["pp_comm_s"][0]
    assert meta["step_time_s"][0] < meg["step_time_s"][0]
    assert best["rank_order"][0] == 1 and RANK_ORDERS[1] == "tp-cp-pp-dp"
    assert best["step_time_s"][0] == meta["step_time_s"][0]
    flat = evaluate(job, _sys(catalog), plan)
    assert flat["rank_order"][0] == 0
    assert flat["step_time_s"][0] == _evaluate(job, _sys(catalog), plan, False)["step_time_s"][0]


def test_estimate_reports_rank_order(catalog):
    from clustertwin.perf.costmodel import RANK_ORDERS
    from clustertwin.perf.stage import estimate
    from clustertwin.scenario import load_scenario, with_updates

    scen = load_scenario(None, catalog)
    fab = {**scen.cluster.fabric.model_dump(), "pod_gpus": 3072, "pod_oversubscription": 7.0}
    est = estimate(with_updates(scen, cluster={"fabric": fab}), catalog)
    assert est.rank_order in RANK_ORDERS
    assert est.to_contract()["rank_order"] == est.rank_order
    from clustertwin.report import views

    assert ("rank order (innermost first)", est.rank_order) in views.rows(est)
    assert estimate(scen, catalog).rank_order == RANK_ORDERS[0]
