"""Smoke test: every GPU has a node, and the whole plan runs on every node of the catalog
(a small dense model; no stage may fail or fall back to a warning)."""

from __future__ import annotations

import pytest

from clustertwin.catalog import load_catalog
from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict

CAT = load_catalog()


def test_every_gpu_has_a_node():
    held = {n.gpu for n in CAT.all("node")}
    assert {g.id for g in CAT.all("gpu")} - held == set()


@pytest.mark.parametrize("node_id", CAT.ids("node"))
def test_plan_runs_on_every_node(node_id):
    node = CAT.node(node_id)
    gpu = CAT.gpu(node.gpu)
    precision = "bf16" if "bf16" in gpu.peak_tflops else "fp16"
    fabric = "ib-xdr" if node.compute_nic_gbps >= 800 else "ib-hdr" if node.compute_nic_gbps <= 200 else "ib-ndr"
    doc = {
        "name": f"smoke-{node_id}",
        "model": {"preset": "llama3-8b"},
        "training": {"tokens": 1e11, "seq_len": 4096, "global_batch_seqs": 512, "precision": precision},
        "cluster": {"gpu": node.gpu, "node": node_id, "gpus": node.gpus * (1 if node.rack_scale else 8),
                    "fabric": {"technology": fabric}},
        "reliability": {"trials": 50},
    }
    plan = make_plan(scenario_from_dict(doc, "smoke.yaml", CAT), CAT)
    failed = [w for w in plan.warnings if "stage failed" in w or "not available" in w]
    assert not failed, failed
    assert plan.training.step_time_s > 0 and plan.design.nodes >= 8 or node.rack_scale
    assert plan.economics.capex_usd > 0 and plan.buildout is not None and plan.reliability.ettr_mean > 0
