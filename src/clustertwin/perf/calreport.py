"""Summaries of predicted-vs-published results: by class of run, and how far the plan the
search picks is from the plan the run published.

Classes (first that applies): ``MoE`` (experts), ``FP8``, ``FSDP`` (ZeRO-3 pinned or an
FSDP-family stack), ``small dense`` (under 20B parameters), ``large dense``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clustertwin.perf.calibration import CalResult, run_row

CLASSES = ("small dense", "FP8", "MoE", "FSDP", "large dense")
FSDP_STACKS = ("fsdp", "torchtitan", "torchtitan-compile", "llm-foundry", "deepspeed")
SMALL_PARAMS = 20e9
PLAN_FIELDS = ("tp", "pp", "cp", "ep", "dp", "micro_batch", "virtual_stages", "recompute", "zero")


def dense_params(shape: Any) -> float:
    """Parameters of a dense shape (layers x (attention + MLP) + embeddings)."""
    h = shape.hidden
    layer = 2 * h * h + 2 * h * shape.kv_dim + shape.mlp_mats * h * shape.ffn
    return shape.layers * layer + 2 * shape.vocab * h


def row_class(res: CalResult) -> str:
    row = res.row
    if row.shape.moe:
        return "MoE"
    if row.job.precision == "fp8":
        return "FP8"
    if row.pinned.get("zero") == 3 or row.stack in FSDP_STACKS:
        return "FSDP"
    return "small dense" if dense_params(row.shape) < SMALL_PARAMS else "large dense"


def _stats(errs: list[float]) -> dict[str, float]:
    e = np.asarray(errs, dtype=float)
    return {
        "rows": int(e.size),
        "median_abs_error": float(np.median(np.abs(e))),
        "mean_abs_error": float(np.mean(np.abs(e))),
        "mean_signed_error": float(np.mean(e)),
        "max_abs_error": float(np.max(np.abs(e))),
    }


def time_error(res: CalResult) -> float:
    """Predicted over measured training time, minus one: positive = the model is slower than
    the run (throughput figures, such as TFLOP/s per GPU, are inverted)."""
    if res.row.kind == "tflops":
        return res.published / res.predicted - 1.0
    return res.error


def by_class(results: list[CalResult]) -> dict[str, dict[str, float]]:
    """Time-error statistics (:func:`time_error`) per class of run, and over all rows."""
    groups: dict[str, list[float]] = {}
    for r in results:
        groups.setdefault(row_class(r), []).append(time_error(r))
    out = {c: _stats(groups[c]) for c in CLASSES if c in groups}
    if results:
        out["all"] = _stats([time_error(r) for r in results])
    return out


def free_vs_published(catalog: Any, res: CalResult) -> dict[str, Any]:
    """Leave every key to the search and compare its plan with the published one under the
    same model: speed-up the model predicts for the searched plan, and the keys that differ."""
    free, _ = run_row(catalog, res.row, pinned={})
    changed = {
        k: [res.plan[k], free.plan[k]] for k in PLAN_FIELDS if res.plan.get(k) != free.plan.get(k)
    }
    return {
        "plan": free.plan,
        "fits": free.fits,
        "step_time_s": free.step_time_s,
        "published_plan_step_time_s": res.step_time_s,
        "speedup": res.step_time_s / free.step_time_s,
        "changed": changed,
    }


def fmt_changed(changed: dict[str, list[Any]]) -> str:
    return ", ".join(f"{k} {a}->{b}" for k, (a, b) in changed.items()) or "same plan"


def published_rows() -> list[Any]:
    """Rows of the packaged published-runs table and of the packaged calibration CSV (package
    data: the same rows from any working directory)."""
    from clustertwin.perf import calibration as cal

    return cal.packaged_rows(cal.PUBLISHED_NAME) + cal.packaged_rows()


def _same_job(row: Any, job: Any, gpu: str, gpus: int) -> bool:
    a, b = row.shape, job.shape
    keys = ("layers", "hidden", "ffn", "heads", "kv_heads", "experts")
    return (
        all(getattr(a, k) == getattr(b, k) for k in keys)
        and abs(a.vocab - b.vocab) <= 0.02 * b.vocab  # vocabularies padded to a multiple
        and row.job.seq == job.seq
        and row.job.batch_seqs == job.batch_seqs
        and row.job.precision == job.precision
        and row.gpu == gpu
        and row.gpus == gpus
        and {"tp", "pp", "dp"} <= set(row.pinned)
    )


def published_plans(scenario: Any, catalog: Any, gpus: int, best_step_s: float) -> list[dict]:
    """Published plans for the scenario's job (same model shape, sequence, batch, precision,
    GPU and GPU count), priced by the same model: how much faster the search's plan is, and
    how many evaluated plans rank ahead of the published one."""
    from dataclasses import replace

    from clustertwin.perf.search import search
    from clustertwin.perf.stage import job_of, system_of

    job, sys = job_of(scenario, catalog), system_of(scenario, catalog)
    out, seen = [], set()
    for row in published_rows():
        if not _same_job(row, job, scenario.cluster.gpu, gpus):
            continue
        key = tuple(sorted(row.pinned.items()))
        if key in seen:
            continue
        seen.add(key)
        job_r = replace(job, grad_bytes=row.job.grad_bytes)
        res = search(job_r, sys, gpus, row.pinned)
        ranked = res.ranked()
        if not ranked.size:
            out.append({"id": row.id, "source": row.source, "pinned": row.pinned, "fits": False})
            continue
        i = int(ranked[0])
        step = float(res.metrics["step_time_s"][i])
        out.append(
            {
                "id": row.id,
                "source": row.source,
                "pinned": row.pinned,
                "plan": res.plan(i),
                "fits": True,
                "step_time_s": step,
                "search_speedup": step / best_step_s,
            }
        )
    return out
