"""Whole-run goodput: the perf stage's parts (perf.goodput) times the reliability stage's ETTR.

ETTR already charges failures, restarts, lost work and checkpoint stalls, so it enters once, as
the ``failures_checkpoints`` factor: ``training.days / reliability.effective_days`` (the Monte
Carlo's mean wall-clock over the steady-state days). The other parts are what ETTR leaves out.
``training.wall_clock_days = reliability.effective_days / (the other parts)`` = days / goodput.

:func:`row_goodput` prices a published whole-run row (calibration) the same way without a
design: the ETTR is Daly's (complete model, its optimal interval) for the row's GPUs with the
failure profile of the GPU generation and the run's era (catalog.lookup.era_profile_id: a 2021-22
A100 run gets the OPT-175B logbook's profile, whose hours lost per interruption are charged
directly), the checkpoint written at the default file-system rate
(perf.checkpoint; its size from the active parameters, a lower bound for MoE) and the scenario
default restart time.
"""

from __future__ import annotations

from typing import Any

from clustertwin.perf import goodput as gp
from clustertwin.perf.checkpoint import checkpoint_times
from clustertwin.reliability import interval as iv

#: detection + reschedule + init + reload per interruption, minutes (the scenario default,
#: reliability.restart_min)
DEFAULT_RESTART_MIN = 10.0
#: floor of an era profile's ETTR (a run losing more than this was not a training run)
MIN_ETTR = 0.2


def row_year(row: Any) -> int | None:
    """The year a calibration row's run took place, as its source dates it (the first 20xx
    year in the source text, e.g. ``Luccioni et al. 2022``, not an arXiv id such as 2005.14165);
    None where the source names none."""
    import re

    mo = re.search(r"\b(20[0-9]{2})\b(?!\.[0-9])", row.source or "")  # not an arXiv id
    return int(mo.group(1)) if mo else None


def with_ettr(training: Any, reliability: Any) -> Any:
    """The training estimate with the reliability stage's ETTR charged in its goodput."""
    if training is None or reliability is None or not reliability.effective_days:
        return training
    ettr = float(training.days) / float(reliability.effective_days)
    parts = {k: v for k, v in training.goodput_parts.items() if k != "failures_checkpoints"}
    others = gp.product({k: v for k, v in parts.items() if v is not None})
    return training.model_copy(update={
        "goodput": others * ettr,
        "goodput_parts": {**parts, "failures_checkpoints": ettr},
        "wall_clock_days": float(reliability.effective_days) / others,
    })


def daly_ettr(catalog: Any, gpu: str, gpus: int, params: float, precision: str,
              year: int | None = None) -> float:
    """ETTR for ``gpus`` GPUs of ``gpu`` in ``year``, with the failure profile of that GPU
    generation and era (catalog.lookup.era_profile_id; see the module docstring): an era
    profile that publishes the hours lost per interruption charges them directly
    (ETTR = 1 - interruptions per hour x hours lost), else Daly at its optimum interval."""
    from clustertwin.catalog.lookup import era_profile_id

    prof = catalog.get("failure_profile", era_profile_id(catalog, gpu, year))
    nodes = max(1.0, gpus / prof.gpus_per_node)
    per_hour = prof.total_per_1000_node_days * nodes / 1000.0 / 24.0
    if prof.lost_hours_per_interruption:
        return max(MIN_ETTR, 1.0 - per_hour * prof.lost_hours_per_interruption)
    mtbf_min = 60.0 / per_hour
    ck = checkpoint_times(params, precision, gpus, max(1, round(nodes)))
    delta = ck.write_s / 60.0
    tau = iv.numerical_optimum(delta, mtbf_min, DEFAULT_RESTART_MIN)
    return iv.ettr_daly(tau, delta, mtbf_min, DEFAULT_RESTART_MIN)


def row_goodput(catalog: Any, res: Any, profile: str = "default") -> dict[str, float]:
    """Goodput factors of a calibration result (perf.calibration.CalResult) run for its
    published tokens: the default goodput profile's parts and the Daly ETTR."""
    from clustertwin.perf.csvrows import gpu_name
    from clustertwin.perf.flops import model_flops_per_token

    p = catalog.get("goodput", profile)
    s = gp.GoodputSettings(p.eval_interval_steps, p.eval_steps, p.data_stall_fraction,
                           p.rampup_start_fraction, p.rampup_tokens, profile)
    row, m, plan = res.row, res.metrics, res.plan
    per_replica = row.job.batch_seqs / max(1, int(plan.get("dp", 1))) / max(1, int(plan.get("micro_batch", 1)))
    factors = gp.parts(s, mfu=m.get("mfu", 0.0), hfu=m.get("hfu", 0.0), breakdown=m,
                       step_s=res.step_time_s, tokens=row.tokens or 1e12, micro_batches=per_replica)
    gpu = gpu_name(catalog, row.gpu)
    params = model_flops_per_token(row.shape, 1) / 6.0  # active parameters: sizes the checkpoint
    factors["failures_checkpoints"] = daly_ettr(catalog, gpu, row.gpus, params, row.job.precision,
                                                year=row_year(row))
    return factors
