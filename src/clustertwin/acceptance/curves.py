"""Bus bandwidth against message size, measured beside the twin's expected curve, for every
graded nccl-tests run (``check.json`` ``busbw_curves`` and a chart per run in ``check.html``).

The expected curve is the acceptance model's ``busbw`` at each size the run measured, with the
same op, GPU count and algorithm choice the grade used (NVLink SHARP for an intra-node
all_reduce where the hardware has it, unless the log pinned another algorithm)."""

from __future__ import annotations

from typing import Any

import numpy as np


def busbw_curves(runs: list[Any], graded: tuple[dict, ...], model: Any) -> list[dict[str, Any]]:
    out = []
    for run, g in zip(runs, graded, strict=True):
        if g.get("grade") == "untested" or not run.size.size:
            continue
        n = int(g["gpus"])
        nvls = (n <= model.system.nvlink_domain and run.op == "all_reduce" and model.has_nvls
                and (not run.algo or "nvls" in run.algo))
        order = np.argsort(run.size, kind="stable")
        size = run.size[order]
        best = np.fmax(run.busbw_oop[order], np.nan_to_num(run.busbw_ip[order], nan=0.0))
        exp = np.asarray(model.busbw(run.op, n, size, nvls=nvls), dtype=np.float64)
        out.append({"source": run.source, "op": run.op, "gpus": n,
                    "size_bytes": size.astype(np.int64).tolist(),
                    "busbw_gbps": np.round(best, 3).tolist(),
                    "expected_gbps": np.round(exp, 3).tolist()})
    return out


def figures(curves: list[dict[str, Any]], limit: int = 12) -> list[tuple[str, Any]]:
    """Plotly charts (log message size) of the first ``limit`` curves."""
    if not curves:
        return []
    import plotly.graph_objects as go

    out = []
    for c in curves[:limit]:
        fig = go.Figure()
        fig.add_trace(go.Scatter(x=c["size_bytes"], y=c["busbw_gbps"], mode="lines+markers",
                                 name="measured"))
        fig.add_trace(go.Scatter(x=c["size_bytes"], y=c["expected_gbps"], mode="lines",
                                 name="twin", line={"dash": "dash"}))
        fig.update_layout(title=f"{c['op']} on {c['gpus']} GPUs: bus bandwidth vs message size",
                          xaxis={"type": "log", "title": "message size (bytes)"},
                          yaxis={"title": "busbw (GB/s)"})
        out.append((f"{c['op']} {c['gpus']} GPUs", fig))
    return out
