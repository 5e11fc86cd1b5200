"""The training estimate's view: its rows, the step-time and memory figures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clustertwin.quoting import html_text
from clustertwin.report import figures as figs

if TYPE_CHECKING:
    from clustertwin.perf.stage import TrainingEstimate
    from clustertwin.report.views.base import Where


def _days(x: float) -> str:
    return f"{x:.1f}" if x >= 1 else f"{x:.3g}"


def _goodput_text(est: TrainingEstimate) -> str:
    parts = ", ".join(f"{k.replace('_', ' ')} {v:.3f}" for k, v in est.goodput_parts.items() if v is not None)
    ettr = "" if est.goodput_parts.get("failures_checkpoints") is not None else "; failures not charged"
    return f"{_days(est.wall_clock_days)} at goodput {est.goodput:.3f} ({parts}{ettr})"


def rows(res: TrainingEstimate) -> list[tuple[str, str]]:
    p = res.parallelism
    plan = " ".join(f"{k}={p[k]}" for k in ("tp", "pp", "cp", "ep", "dp") if k in p)
    extra = ""
    if "micro_batch" in p:
        extra = (
            f", mb={p['micro_batch']} v={p['virtual_stages']} {p['recompute']} recompute"
            f"{' +SP' if p['sequence_parallel'] else ''} ZeRO-{p['zero']}"
        )
    mem = "-" if res.memory_gib_per_gpu is None else f"{res.memory_gib_per_gpu:.1f} GiB"
    gpus = f"{res.gpus:,}"
    if res.idle_gpus:
        gpus += f" of {res.installed_gpus:,} installed ({res.idle_gpus:,} idle)"
    peak = f"{res.peak_tflops_per_gpu:,.0f} TFLOP/s " if res.peak_tflops_per_gpu else ""
    return [
        ("GPUs", gpus),
        ("global batch", f"{res.global_batch_seqs:,} sequences"),
        ("parallelism", (plan or "-") + extra),
        ("rank order (innermost first)", res.rank_order),
        ("step time", f"{res.step_time_s:.2f} s"),
        ("throughput", f"{res.tokens_per_s / 1e6:.2f} M tokens/s"),
        ("model TFLOP/s per GPU", f"{res.model_tflops_per_gpu:.0f}"),
        ("MFU / HFU", f"{res.mfu:.1%} / {res.hfu:.1%} of the {peak}dense {res.precision} peak"),
        ("memory per GPU", mem),
        ("days to train (no failures)", _days(res.days) + (
            f" (band {_days(res.days_low)}-{_days(res.days_high)} from the {res.stack} stack's "
            "calibration residuals)" if res.days_high > res.days_low else "")),
        ("wall-clock days (goodput)", _goodput_text(res)),
        ("software stack", res.stack),
        ("plans evaluated", f"{res.plans_evaluated:,} ({res.plans_feasible:,} fit)"),
    ]


def gpu_capacity(where: Where) -> tuple[float | None, str]:
    """The GPU's HBM (GiB) and its short name, from the catalog the plan was made with."""
    from clustertwin.catalog import load_catalog

    try:
        catalog = where.catalog if where.catalog is not None else load_catalog()
        gpu = catalog.gpu(where.scenario.cluster.gpu)
        # plotly reads tags in trace names: a catalog name is escaped to show as written
        return float(gpu.hbm_gib), html_text(gpu.name.split(" (")[0])
    except (KeyError, LookupError, ValueError, AttributeError):
        return None, "GPU"


def figures(res: TrainingEstimate, where: Where) -> list[tuple[str, Any]]:
    """Where a step's time goes, and the memory per GPU against the GPU's capacity."""
    cap, gpu = gpu_capacity(where)
    return [("step time", figs.step_time_figure(res)), ("memory", figs.memory_figure(res, cap, gpu))]
