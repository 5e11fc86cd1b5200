"""What ``track`` hands out: the JSON document (contract section 6) and the measured file
``plan --measured`` reads. The terminal rows, tiles and figures are the run's view
(:mod:`clustertwin.report.views.track`); track.html is drawn by ``clustertwin.cli.track.track_page``."""

from __future__ import annotations

from typing import Any

from clustertwin.track.core import TrackResult
from clustertwin.track.records import iso

#: recalibration: fixed-point rounds matching the re-predicted step time to the observed one
RECAL_ROUNDS = 4
RATIO_BOUNDS = (0.05, 5.0)


def to_doc(res: TrackResult) -> dict[str, Any]:
    """The track document: contract keys first, then the evidence behind them."""
    o, f, p = res.observed, res.forecast, res.plan
    lines_read = sum(s.read for s in res.lines)
    return {
        "scenario": res.scenario_name,
        "as_of": iso(o.as_of), "start": iso(o.start),
        "progress": {"tokens_done": o.tokens_done, "fraction": o.fraction, "tokens_total": p.tokens},
        "observed": {"tokens_per_s": o.tokens_per_s, "step_s": o.step_s, "step_s_recent": o.step_s_recent,
                     "mfu": o.mfu, "interruptions": len(o.interruptions), "lost_days": o.lost_h / 24.0,
                     "ettr": o.ettr, "productive_tokens_per_s": o.productive_tokens_per_s,
                     "elapsed_days": o.elapsed_h / 24.0, "by_cause": o.by_cause,
                     "loss_last": res.history.last_loss, "loss_spikes": res.history.n_spikes,
                     "skipped_iterations": res.history.n_skipped, "nan_iterations": res.history.n_nan},
        "planned": {"tokens_per_s": p.tokens_per_s, "step_s": p.step_time_s, "step_s_low": p.step_time_low_s,
                    "step_s_high": p.step_time_high_s, "mfu": p.mfu, "ettr": p.ettr,
                    "interruptions_by_now": o.expected_interruptions,
                    "interruptions_by_now_p5": o.expected_p5, "interruptions_by_now_p95": o.expected_p95,
                    "interruptions_total": p.interruptions_mean, "by_cause": p.by_cause,
                    "lost_h_per_interruption": p.cost_per_interruption_h, "effective_days": p.effective_days},
        "forecast": {"trained_by_p50": iso(f.trained_by[1]), "trained_by_p90": iso(f.trained_by[2]),
                     "trained_by_p10": iso(f.trained_by[0]),
                     "remaining_days_p50": f.remaining_days[1], "remaining_days_p90": f.remaining_days[2],
                     "remaining_days_p10": f.remaining_days[0],
                     "interruptions_per_day_prior": f.rate_prior_per_h * 24.0,
                     "interruptions_per_day": f.rate_post_per_h * 24.0,
                     "interruptions_per_day_p5": f.rate_post_p5 * 24.0,
                     "interruptions_per_day_p95": f.rate_post_p95 * 24.0,
                     "mtbf_h": f.mtbf_post_h, "checkpoint_interval_min": f.interval_min,
                     "plan_checkpoint_interval_min": f.interval_plan_min, "seed": f.seed},
        "drift": [{"metric": x.metric, "planned": x.planned, "observed": x.observed,
                   "evidence": x.evidence, "action": x.action} for x in res.flags],
        "interruptions": [{"time": iso(x.t), "cause": x.cause, "lost_h": x.lost_h, "nodes": list(x.nodes[:8]),
                           "evidence": x.evidence} for x in o.interruptions],
        "lines": {"read": lines_read, "skipped": sum(s.skipped for s in res.lines),
                  "after_as_of": res.history.dropped_after,
                  "bad": [line for s in res.lines for line in s.named()],
                  "files": [{"file": s.source, "format": fmt, "read": s.read, "skipped": s.skipped}
                            for s, fmt in zip(res.lines, (*res.formats, "sacct"), strict=False)]},
    }


def measured_doc(res: TrackResult, scenario: Any, catalog: Any) -> dict[str, Any]:
    """measured.json: the observed step time as a ``measured`` block ``plan --measured`` reads.

    ``gemm_ratio`` scales the GPU generation's compute efficiencies; it is solved (a few
    fixed-point rounds of the perf stage) so that the re-predicted step time is the observed
    steady one. Suspect nodes are listed, not drained: draining is the operator's call."""
    from clustertwin.acceptance.recalibrate import scaled_catalog
    from clustertwin.deadline import train

    obs = res.observed.step_s
    gpu = catalog.gpu(scenario.cluster.gpu)
    tech = catalog.fabric(scenario.cluster.fabric.technology).technology
    ratio, predicted = 1.0, res.plan.step_time_s
    for _ in range(RECAL_ROUNDS):
        ratio = min(RATIO_BOUNDS[1], max(RATIO_BOUNDS[0], ratio * predicted / obs))
        predicted = train(scenario, scaled_catalog(catalog, gpu.generation, tech, {"gemm_ratio": ratio})).step_time_s
    from clustertwin.track.drift import suspects

    return {"source": "clustertwin track", "as_of": iso(res.observed.as_of),
            "observed_step_time_s": obs, "planned_step_time_s": res.plan.step_time_s,
            "repredicted_step_time_s": predicted,
            "suspect_nodes": [n for n, _, _ in suspects(res.observed, res.plan.nodes)],
            "measured": {"gemm_ratio": ratio, "nvlink_ratio": None, "fabric_ratio": None, "drained_nodes": []}}

