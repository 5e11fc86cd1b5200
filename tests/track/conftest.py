"""Track fixtures: the sample logs and one plan (the GPT-3 175B example on 1,024 A100s) made once."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "gpt3-175b-1024-a100.yaml"


@pytest.fixture(scope="session")
def gpt3_plan(catalog):
    from clustertwin.plan import make_plan
    from clustertwin.scenario import load_scenario

    return make_plan(load_scenario(SCENARIO, catalog), catalog)


@pytest.fixture(scope="session")
def pv(gpt3_plan):
    from clustertwin.track.planview import plan_view

    return plan_view(gpt3_plan)


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
