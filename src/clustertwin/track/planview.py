"""The figures of a plan the tracker compares against, read once from the plan's results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clustertwin.errors import Problem, UsageError


@dataclass(frozen=True)
class PlanView:
    """What the plan says about the run: steady state (perf), failures (reliability)."""

    tokens: float
    seq_len: int
    batch_tokens: float          #: tokens per optimizer step (global batch actually trained)
    gpus: int
    nodes: int
    step_time_s: float
    step_time_low_s: float       #: the step-time band, from the plan's days band
    step_time_high_s: float
    tokens_per_s: float
    mfu: float
    peak_tflops_per_gpu: float
    days: float                  #: failure-free
    effective_days: float        #: wall clock with failures and checkpoints
    ettr: float
    interruptions_mean: float
    interruptions_p5: float
    interruptions_p95: float
    mtbf_h: float
    restart_min: float
    checkpoint_interval_min: float
    checkpoint_blocking_s: float
    min_interval_min: float
    lost_per_interruption_min: float
    by_cause: dict[str, float] = field(default_factory=dict)

    @property
    def interruptions_per_h(self) -> float:
        """Interruptions per wall-clock hour the plan expects (planned ones included)."""
        return self.interruptions_mean / max(self.effective_days * 24.0, 1e-9)

    @property
    def cost_per_interruption_h(self) -> float:
        """Wall-clock hours one interruption costs in the plan: restart + work redone."""
        return (self.restart_min + self.lost_per_interruption_min) / 60.0


def plan_view(plan: Any, source: str = "scenario") -> PlanView:
    """The :class:`PlanView` of a :class:`clustertwin.plan.Plan` (training and reliability run)."""
    t, r = plan.training, plan.reliability
    if t is None or r is None:
        raise UsageError([Problem(source, "training", "a scenario with a training run (model and training "
                                  "sections) whose plan has training and reliability results")])
    s = plan.scenario.training
    seq = int(s.seq_len)
    batch = float(t.global_batch_seqs or 0) * seq or float(t.tokens_per_s * t.step_time_s)
    lo = t.days_low / t.days if t.days_low and t.days else 1.0
    hi = t.days_high / t.days if t.days_high and t.days else 1.0
    return PlanView(
        tokens=float(s.tokens), seq_len=seq, batch_tokens=batch, gpus=int(t.gpus), nodes=int(r.nodes),
        step_time_s=float(t.step_time_s), step_time_low_s=float(t.step_time_s) * lo,
        step_time_high_s=float(t.step_time_s) * hi, tokens_per_s=float(t.tokens_per_s),
        mfu=float(t.mfu), peak_tflops_per_gpu=float(t.peak_tflops_per_gpu or 0.0), days=float(t.days),
        effective_days=float(r.effective_days), ettr=float(r.ettr_mean),
        interruptions_mean=float(r.interruptions_mean), interruptions_p5=float(r.interruptions_p5),
        interruptions_p95=float(r.interruptions_p95), mtbf_h=float(r.mtbf_h),
        restart_min=float(r.restart_min), checkpoint_interval_min=float(r.checkpoint_interval_min),
        checkpoint_blocking_s=float(r.checkpoint_blocking_s), min_interval_min=float(r.min_interval_min),
        lost_per_interruption_min=float(r.lost_progress_per_interruption_min or r.checkpoint_interval_min / 2),
        by_cause=dict(r.by_cause))
