"""The twin's expected acceptance figures against published ones (shared/research/ops-bridge.md
section 6). Each case: the plan's figure for a DGX H100 / NDR cluster, the published range and
its source in the id."""

from __future__ import annotations

import pytest

CASES = [
    # (test id in the plan, low, high, source)
    ("nvlink_allreduce_nvls", 460.0, 480.0,
     "8xH100 all_reduce busbw with NVLink SHARP: Azure NHC nd96isr_h100_v5 threshold 460, nccl-tests#212 peak ~480"),
    ("nvlink_allreduce_ring", 370.0 * 0.95, 370.0 * 1.05,
     "8xH100 all_reduce busbw NCCL_ALGO=Ring ~370 GB/s (nccl-tests#212, sjeaugey), +-5%"),
    ("nic_gpudirect", 46.0, 48.0, "per NDR 400G NIC 46-48 GB/s in nccl-tests (nccl-tests#290, AddyLaddy)"),
]


@pytest.mark.parametrize("cid,low,high,source", CASES, ids=[f"{c[0]}: {c[3]}" for c in CASES])
def test_expected_within_published_range(plan, cid, low, high, source):
    check = plan.find(cid)
    assert check is not None
    assert low <= check.expected <= high, f"{cid}: twin {check.expected:.1f} outside {low}-{high} ({source})"


OTHER_GPUS = [
    ("h800", "hgx-h800", "nvlink_allreduce_nvls", 215 * 0.95, 215 * 1.05,
     "8xH800 all_reduce NVLS busbw 215 GB/s measured (NVIDIA/nccl#1374), +-5%"),
    ("a100-sxm-80gb", "dgx-a100", "nvlink_allreduce_ring", 230 * 0.95, 230 * 1.05,
     "DGX A100 all_reduce busbw ~230 GB/s (perf-ampere calibration prior), +-5%"),
]


@pytest.mark.parametrize("gpu,node,cid,low,high,source", OTHER_GPUS, ids=[f"{c[0]} {c[2]}: {c[5]}" for c in OTHER_GPUS])
def test_other_generations_within_published_range(catalog, gpu, node, cid, low, high, source):
    from clustertwin.acceptance.plan import build_plan
    from clustertwin.scenario import scenario_from_dict

    from .conftest import SMALL

    doc = {**SMALL, "cluster": {**SMALL["cluster"], "gpu": gpu, "node": node, "gpus": 64}}
    doc.pop("model"), doc.pop("training")  # a design-only scenario is enough for the plan
    p = build_plan(scenario_from_dict(doc, "x.yaml", catalog), catalog)
    assert low <= p.find(cid).expected <= high, source


def test_published_thresholds_sit_in_the_bands(plan):
    """Azure's 460 GB/s NVLS threshold is at or above the warn edge of the twin's band, and its
    IB loopback threshold (40 GB/s per NIC) at or above the network fail edge."""
    nvls = plan.find("nvlink_allreduce_nvls")
    nic = plan.find("nic_gpudirect")
    assert nvls.warn_min <= 460.0 <= nvls.expected
    assert nic.warn_min <= 40.0 + 0.5 and nic.pass_min > 40.0


def test_crosschecks_reported(plan):
    ids = {x["id"]: x for x in plan.crosschecks}
    assert set(ids) == {"nvls-allreduce-8xh100", "ring-allreduce-8xh100", "ndr-per-nic"}
    assert all(x["within"] for x in ids.values())


def test_multinode_allreduce_is_nic_bound(plan, model):
    """At large messages a multi-node ring all_reduce is paced by the NICs: busbw tends to
    NICs-per-node x per-NIC bandwidth (8 x 47 = 376 GB/s); the ~370-390 GB/s figure the research
    notes derive for NDR all_reduce."""
    per_node = model.nic_busbw() * model.nics_per_node
    big = [c for c in plan.checks if c.op == "all_reduce" and c.scope == "whole cluster" and c.size_bytes >= 2**33]
    assert big and abs(big[0].expected / per_node - 1) < 0.03


def test_busbw_grows_with_message_size(plan):
    for scope in ("2 nodes", "one SU", "whole cluster"):
        for op in ("all_reduce", "all_gather", "alltoall"):
            vals = [c.expected for c in plan.checks if c.op == op and c.scope == scope]
            assert vals == sorted(vals) and len(vals) == 4


def test_plan_lists_commands_and_levels(plan):
    assert plan.dcgm_level == 3 and plan.burnin_hours == 48
    cmds = {c.command for c in plan.checks}
    assert any(c.startswith("dcgmi diag -r 3 -j") for c in cmds)
    assert any("all_reduce_perf" in c and "-np 16 -N 8" in c for c in cmds)
    gemm = plan.find("gemm_bf16")
    assert gemm.expected == pytest.approx(989 * 0.75)
