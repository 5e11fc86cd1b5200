"""The figures a health report hands to recalibration (``check.json`` ``measured``).

Ratios are measured / expected, medians over what stays in service: GEMM over the GPUs of
nodes that are not drained, NVLink over single-node nccl-tests runs of those nodes, fabric over
every multi-node nccl-tests run (a fabric-wide shortfall fails them all, and still counts).
A ratio with nothing measured is None and recalibration leaves that part of the model alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _median(values: list[float]) -> float | None:
    v = [x for x in values if x is not None and np.isfinite(x) and x > 0]
    return float(np.median(v)) if v else None


def measured_figures(rep: Any, plan: Any) -> dict[str, Any]:
    drained = set(rep.drain())
    g = rep.gpus
    gemm = None
    if g is not None:
        keep = ~np.isin(g.node, list(drained)) if drained else np.ones(g.node.size, bool)
        gemm = _median(g.ratio[keep].tolist())
    single = [r for r in rep.nccl if r.get("ratio") is not None and len(r["hosts"]) <= 1
              and r["gpus"] <= plan.gpus_per_node and not (set(r["hosts"]) & drained)]
    multi = [r for r in rep.nccl if r.get("ratio") is not None and r["gpus"] > plan.gpus_per_node]
    return {"gemm_ratio": gemm, "gemm_precision": rep.precision,
            "nvlink_ratio": _median([r["ratio"] for r in single]),
            "fabric_ratio": _median([r["ratio"] for r in multi]),
            "drained_nodes": sorted(drained), "gpus_per_node": plan.gpus_per_node,
            "scenario": plan.scenario}
