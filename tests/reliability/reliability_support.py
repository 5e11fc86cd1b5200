"""Builders shared by the reliability tests: a scenario on the test hardware and an estimate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clustertwin.catalog import load_catalog
from clustertwin.perf.stage import TrainingEstimate
from clustertwin.scenario import scenario_from_dict

DATA = Path(__file__).parent / "data"

#: Llama 3 405B architecture (arXiv 2407.21783 Table 3)
LLAMA3_405B = {"layers": 126, "hidden": 16384, "ffn_hidden": 53248, "heads": 128, "kv_heads": 8,
               "vocab": 128256, "mlp": "swiglu"}


def catalog():
    return load_catalog([DATA])


def scenario(cat, gpus: int = 16384, reliability: dict[str, Any] | None = None,
             spare_nodes: int = 0, price: float = 3.0, source: str = "test.yaml"):
    doc = {
        "name": "reliability-test",
        "model": dict(LLAMA3_405B),
        "training": {"tokens": 15.6e12, "seq_len": 8192, "global_batch_tokens": 16777216},
        "cluster": {"gpu": "rt-gpu", "node": "rt-node", "gpus": gpus, "spare_nodes": spare_nodes,
                    "fabric": {"technology": "rt-fabric"}},
        "reliability": reliability or {},
        "economics": {"costs": "rt-costs", "cloud_usd_per_gpu_hour": price},
    }
    return scenario_from_dict(doc, source, cat)


def estimate(gpus: int = 16384, days: float = 54.0, step_time_s: float = 6.0,
             params: float = 405e9) -> TrainingEstimate:
    tokens_per_s = 16777216 / step_time_s
    return TrainingEstimate(method="test", gpus=gpus, parallelism={"dp": gpus},
                            step_time_s=step_time_s, tokens_per_s=tokens_per_s,
                            model_tflops_per_gpu=400.0, mfu=0.4, hfu=0.4,
                            memory_gib_per_gpu=None, days=days, params_total=params,
                            params_active=params)


def mc_spec(**kw: Any):
    """A Monte Carlo job spec (``reliability.runspec.RunSpec``) with three causes, planned
    interruptions, repairs and two spares; ``kw`` overrides any field."""
    from clustertwin.reliability.runspec import RunSpec

    base = dict(work_h=150.0, blocking_h=0.05, persist_h=0.0, restart_h=0.2,
                rates_per_h=(0.2, 0.1, 0.05), needs_repair=(True, False, True),
                planned_per_h=0.02, repair_h=3.0, spare_nodes=2)
    base.update(kw)
    return RunSpec(**base)
