"""Shared by the track tests: the sample files, a reader shortcut, a stand-in plan."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "gpt3-175b-1024-a100.yaml"


def read(path: Path, **acc_kw):
    """(history, stats, format) of one sample through the file readers."""
    from clustertwin.track.core import read_history
    from clustertwin.track.detect import items, open_log
    from clustertwin.track.planview import PlanView

    fmt, stats = open_log(path)
    pv = acc_kw.pop("pv", None) or PlanView(
        tokens=1e12, seq_len=acc_kw.pop("seq_len", 4096), batch_tokens=acc_kw.pop("batch_tokens", 2**21), gpus=64,
        nodes=8, step_time_s=6.0, step_time_low_s=5.0, step_time_high_s=7.0, tokens_per_s=3e5, mfu=0.4,
        peak_tflops_per_gpu=989.0, days=40.0, effective_days=42.0, ettr=0.95, interruptions_mean=20.0,
        interruptions_p5=12.0, interruptions_p95=28.0, mtbf_h=50.0, restart_min=10.0,
        checkpoint_interval_min=30.0, checkpoint_blocking_s=10.0, min_interval_min=0.5,
        lost_per_interruption_min=15.0)
    return read_history([(str(path), fmt, items(path, fmt, stats), stats)], pv, acc_kw.pop("as_of", None)), stats, fmt


def plan_stub():
    """A plan's figures for tests that only read (no pipeline run)."""
    from clustertwin.track.planview import PlanView

    return PlanView(tokens=1e12, seq_len=2048, batch_tokens=1536 * 2048, gpus=64, nodes=8, step_time_s=20.0,
                    step_time_low_s=17.0, step_time_high_s=24.0, tokens_per_s=1.5e5, mfu=0.4,
                    peak_tflops_per_gpu=312.0, days=40.0, effective_days=42.0, ettr=0.95,
                    interruptions_mean=20.0, interruptions_p5=12.0, interruptions_p95=28.0, mtbf_h=50.0,
                    restart_min=10.0, checkpoint_interval_min=30.0, checkpoint_blocking_s=10.0,
                    min_interval_min=0.5, lost_per_interruption_min=15.0)


def at(run, pv, share):
    """The forecast replayed up to the log line where ``share`` of the tokens were trained."""
    from clustertwin.track.core import track_plan

    when = next(t for t, tok in run.checkpoints if tok >= share * pv.tokens)
    return track_plan(pv, [("run.log", run.log)], "job.sacct", as_of=when, sacct_text=run.sacct)
