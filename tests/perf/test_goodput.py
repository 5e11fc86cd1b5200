"""Whole-run goodput (issue 20 follow-up): the parts' formulas against direct step-by-step
sums, the plan JSON keys, and the scenario overrides."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from clustertwin.perf import goodput as gp

EXAMPLE = Path(__file__).parents[2] / "examples" / "default.yaml"


def _stepwise_ramp(phi: float, x0: float, ramp: float, tokens: float, n: int = 200_000) -> float:
    """Extra time of a linear ramp-up, summed over many small slices of tokens: a slice at batch
    share x costs (phi / x + 1 - phi) steady-token times (fixed part per step, variable per token)."""
    s = (np.arange(n) + 0.5) / n * ramp
    x = x0 + (1 - x0) * s / ramp
    return float(np.sum(phi / x + 1 - phi - 1.0) * ramp / n / tokens)


@pytest.mark.parametrize("phi,x0,ramp,tokens", [
    (0.08, 0.09375, 2.0e10, 3.66e11),   # BLOOM-176B: 192 -> 2048 sequences over 20e9 tokens
    (0.3, 0.01, 1.2e10, 3.0e11),        # GPT-3: 32K tokens -> full batch over 12e9 tokens
    (0.5, 0.5, 1e9, 5e8),               # the ramp is cut at the run's tokens
])
def test_rampup_closed_form_matches_stepwise_sum(phi, x0, ramp, tokens):
    want = _stepwise_ramp(phi, x0, min(ramp, tokens), tokens)
    assert gp.rampup_overhead(phi, x0, ramp, tokens) == pytest.approx(want, rel=1e-3)


def test_rampup_free_without_fixed_step_time_or_ramp():
    assert gp.rampup_overhead(0.0, 0.1, 1e10, 1e11) == 0.0
    assert gp.rampup_overhead(0.2, 1.0, 1e10, 1e11) == 0.0
    assert gp.rampup_overhead(0.2, 0.1, 0.0, 1e11) == 0.0


@pytest.mark.parametrize("mfu,hfu", [(0.4, 0.4), (0.36, 0.48)])
def test_eval_factor_counts_forward_only_batches(mfu, hfu):
    """Megatron-LM defaults: 100 forward-only batches every 1,000 steps. A training step does
    6 (+2 with full recompute) FLOPs per parameter-token where evaluation does 2."""
    s = gp.GoodputSettings(1000, 100, 0.0, 1.0, 0.0)
    step = 1.0
    eval_batch = step * (2.0 / 6.0) * (mfu / hfu)  # hfu/mfu = (6 + recompute) / 6
    want = 1000 * step / (1000 * step + 100 * eval_batch)
    assert gp.eval_factor(s, mfu, hfu) == pytest.approx(want, rel=1e-12)


def _plan(tmp_path, catalog, goodput=None):
    from clustertwin.plan import make_plan
    from clustertwin.scenario import load_scenario

    doc = yaml.safe_load(EXAMPLE.read_text())
    doc["reliability"] = {**doc.get("reliability", {}), "trials": 100}
    if goodput is not None:
        doc["training"]["goodput"] = goodput
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return make_plan(load_scenario(path, catalog), catalog).to_dict()


def test_plan_goodput_charges_ettr_once(tmp_path, catalog):
    d = _plan(tmp_path, catalog)
    t, r = d["training"], d["reliability"]
    parts = t["goodput_parts"]
    assert set(parts) == {"evaluation", "data_loader", "batch_rampup", "failures_checkpoints"}
    assert all(0 < v <= 1 for v in parts.values())
    assert t["goodput"] == pytest.approx(math.prod(parts.values()), rel=1e-12)
    assert parts["failures_checkpoints"] == pytest.approx(t["days"] / r["effective_days"], rel=1e-12)
    assert t["wall_clock_days"] == pytest.approx(t["days"] / t["goodput"], rel=1e-9)
    assert t["wall_clock_days"] > r["effective_days"] > t["days"]  # contract keys kept as they were


def test_profile_none_is_reliability_only(tmp_path, catalog):
    d = _plan(tmp_path, catalog, {"profile": "none"})
    t = d["training"]
    assert t["goodput_parts"]["evaluation"] == t["goodput_parts"]["data_loader"] == 1.0
    assert t["goodput_parts"]["batch_rampup"] == 1.0
    assert t["wall_clock_days"] == pytest.approx(d["reliability"]["effective_days"], rel=1e-9)


def test_overrides_reach_the_parts(tmp_path, catalog):
    d = _plan(tmp_path, catalog, {"eval_steps": 0, "data_stall_fraction": 0.05,
                                  "rampup_start_fraction": 0.01, "rampup_tokens": 1.5e12})
    parts = d["training"]["goodput_parts"]
    assert parts["evaluation"] == 1.0
    assert parts["data_loader"] == pytest.approx(0.95)
    base = _plan(tmp_path, catalog)["training"]["goodput_parts"]["batch_rampup"]
    assert parts["batch_rampup"] < base  # a ramp over a tenth of the run costs more


@pytest.mark.parametrize("goodput,key", [
    ({"data_stall_fraction": 1.5}, "training.goodput.data_stall_fraction"),
    ({"profile": "nope"}, "training.goodput.profile"),
    ({"eval_steps": -1}, "training.goodput.eval_steps"),
])
def test_bad_goodput_input_is_one_line(tmp_path, goodput, key):
    from clustertwin.cli import app

    doc = yaml.safe_load(EXAMPLE.read_text())
    doc["training"]["goodput"] = goodput
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    res = CliRunner().invoke(app, ["plan", str(path), "--json"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if key in ln]
    assert len(lines) == 1 and str(path) in lines[0]
    assert "Traceback" not in res.output
