"""PLACEHOLDER training-time estimate: 6·N·D FLOPs at an assumed MFU.

This is deliberately simple and labelled as such in every output (``method``); the
training-time issue replaces it with the memory / parallelism / step-time model.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from clustertwin.catalog import Catalog
from clustertwin.catalog.params import param_count
from clustertwin.scenario import Scenario

#: MFU assumed by the placeholder; Llama 3 405B reported 38-43% on H100 (arXiv 2407.21783 Table 4).
PLACEHOLDER_MFU = 0.40


class TrainingEstimate(BaseModel):
    model_config = ConfigDict(frozen=True)

    method: str
    gpus: int
    parallelism: dict[str, Any]
    step_time_s: float
    tokens_per_s: float
    model_tflops_per_gpu: float
    mfu: float
    hfu: float
    memory_gib_per_gpu: float | None
    days: float
    params_total: float
    params_active: float
    notes: list[str] = []

    def to_contract(self) -> dict[str, Any]:
        return self.model_dump()

    def summary_rows(self) -> list[tuple[str, str]]:
        p = self.parallelism
        plan = " ".join(f"{k}={p[k]}" for k in ("tp", "pp", "cp", "ep", "dp") if k in p)
        return [
            ("GPUs", f"{self.gpus:,}"),
            ("parallelism", plan or "-"),
            ("step time", f"{self.step_time_s:.2f} s"),
            ("throughput", f"{self.tokens_per_s / 1e6:.2f} M tokens/s"),
            ("MFU", f"{self.mfu:.1%}"),
            ("days to train (no failures)", f"{self.days:.1f}"),
            ("method", self.method),
        ]

    def figures(self) -> list[tuple[str, Any]]:
        return []


def estimate(scenario: Scenario, catalog: Catalog) -> TrainingEstimate:
    gpu = catalog.gpu(scenario.cluster.gpu)
    node = catalog.node(scenario.cluster.node)
    pc = param_count(scenario.model)
    peak = gpu.peak_tflops.get(scenario.training.precision) or gpu.peak_tflops["bf16"]
    flops_per_token = 6 * pc.active
    tflops_per_gpu = peak * PLACEHOLDER_MFU
    if scenario.cluster.gpus is not None:
        gpus = scenario.cluster.gpus
    else:
        need = scenario.training.tokens * flops_per_token / (scenario.cluster.deadline_days * 86400 * tflops_per_gpu * 1e12)
        gpus = max(1, math.ceil(need / node.gpus)) * node.gpus
    tokens_per_s = gpus * tflops_per_gpu * 1e12 / flops_per_token
    step = scenario.training.batch_tokens / tokens_per_s
    return TrainingEstimate(
        method=f"placeholder 6*N*D at {PLACEHOLDER_MFU:.0%} MFU",
        gpus=gpus, parallelism={"dp": gpus}, step_time_s=step, tokens_per_s=tokens_per_s,
        model_tflops_per_gpu=tflops_per_gpu, mfu=PLACEHOLDER_MFU, hfu=PLACEHOLDER_MFU,
        memory_gib_per_gpu=None, days=scenario.training.tokens / tokens_per_s / 86400,
        params_total=pc.total, params_active=pc.active,
        notes=["training time is a 6*N*D placeholder; memory is not modelled"],
    )
