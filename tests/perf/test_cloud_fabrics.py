"""Cloud fabrics as catalog ids (issue 20): per-GPU scale-out bandwidth of the instance, EFA's
own collective constants, and plans end to end on them."""

from __future__ import annotations

import pytest

from clustertwin.perf import estimate
from clustertwin.perf.stage import system_of
from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict


def doc(fabric, gpu="h100-sxm-80gb", node="dgx-h100", gpus=64):
    return {"name": "c", "model": {"preset": "llama3-8b"},
            "training": {"tokens": 1e11, "seq_len": 8192, "global_batch_tokens": 2**22, "stack": "fsdp"},
            "cluster": {"gpu": gpu, "node": node, "gpus": gpus, "fabric": {"technology": fabric}},
            "reliability": {"trials": 20}}


@pytest.mark.parametrize("fabric, gpu, node, gbps", [
    ("aws-efa-v1", "a100-sxm-80gb", "dgx-a100", 50),    # p4d: 400 Gb/s per 8 GPUs
    ("aws-efa-v2", "h100-sxm-80gb", "dgx-h100", 400),   # p5: 3,200 Gb/s per 8 GPUs
    ("gcp-a3-mega", "h100-sxm-80gb", "dgx-h100", 200),
    ("azure-nd-ib-ndr", "h100-sxm-80gb", "dgx-h100", 400),
])
def test_per_gpu_bandwidth(fabric, gpu, node, gbps, catalog):
    sys = system_of(scenario_from_dict(doc(fabric, gpu, node), catalog=catalog), catalog)
    assert sys.nic_bw == pytest.approx(gbps * 1e9 / 8)


def test_efa_has_its_own_collective_constants(catalog):
    efa = system_of(scenario_from_dict(doc("aws-efa-v2"), catalog=catalog), catalog)
    roce = system_of(scenario_from_dict(doc("roce-400g"), catalog=catalog), catalog)
    assert "perf-aws-efa-v2" in efa.calibration_ids
    assert efa.fab["bus_efficiency"] < roce.fab["bus_efficiency"]
    assert efa.fab["latency_us"] > roce.fab["latency_us"]


def test_a100_on_efa_v1_is_slower_than_on_ib_hdr(catalog):
    efa = estimate(scenario_from_dict(doc("aws-efa-v1", "a100-sxm-80gb", "dgx-a100", 128), catalog=catalog), catalog)
    ib = estimate(scenario_from_dict(doc("ib-hdr", "a100-sxm-80gb", "dgx-a100", 128), catalog=catalog), catalog)
    assert efa.tokens_per_s < ib.tokens_per_s


@pytest.mark.parametrize("fabric", ["aws-efa-v2", "gcp-a3-ultra", "azure-nd-ib-ndr"])
def test_plan_end_to_end(fabric, catalog):
    p = make_plan(scenario_from_dict(doc(fabric), catalog=catalog), catalog)
    assert p.training.tokens_per_s > 0 and p.design is not None
