"""Drift flags: each names the metric, the plan's figure, the evidence and an action."""

from __future__ import annotations

from dataclasses import replace

from clustertwin.track.drift import flags, suspects
from clustertwin.track.observe import Interruption
from clustertwin.track.synthetic import generate
from track.helpers import at as _at


def test_slow_run_flags_step_time_with_recalibration(pv):
    """Step time 30% above the plan: beyond its band's top (the days_high of the plan)."""
    assert pv.step_time_high_s < 1.3 * pv.step_time_s
    res = _at(generate(pv, 4, step_factor=1.3), pv, 0.3)
    f = {x.metric: x for x in res.flags}
    assert "step_time_s" in f
    assert f["step_time_s"].observed > pv.step_time_high_s
    assert "plan --measured" in f["step_time_s"].action and "clustertwin check" in f["step_time_s"].action


def test_failure_prone_run_flags_interruptions_and_interval(pv):
    res = _at(generate(pv, 5, rate_factor=3.0), pv, 0.4)
    f = {x.metric: x for x in res.flags}
    assert "interruptions" in f
    assert f["interruptions"].observed > res.observed.expected_p95
    assert f"every {res.forecast.interval_min:.0f} min" in f["interruptions"].action


def test_a_node_failing_again_and_again_is_a_suspect(pv):
    res = _at(generate(pv, 6), pv, 0.5)
    t = res.observed.start
    noise = [Interruption(t + i, "node failure", 0.3, (f"gpu{i:04d}",)) for i in range(10)]
    bad = [Interruption(t + 100 + i, "node failure", 0.3, ("gpu0077",)) for i in range(4)]
    wide = [Interruption(t + 200, "job failed", 0.3, tuple(f"gpu{i:04d}" for i in range(64)))]
    obs = replace(res.observed, interruptions=tuple(noise + bad + wide))
    found = suspects(obs, pv.nodes)
    assert [n for n, _, _ in found] == ["gpu0077"]
    f = [x for x in flags(pv, obs, res.history, res.forecast, pv.nodes) if x.metric == "suspect_nodes"]
    assert f and "drain gpu0077" in f[0].action
    # twice among 14 named failures on 128 nodes is within chance
    obs2 = replace(obs, interruptions=tuple(noise + bad[:2]))
    assert suspects(obs2, pv.nodes) == []


def test_clustered_loss_spikes_are_flagged(pv):
    res = _at(generate(pv, 8), pv, 0.5)
    t = res.observed.as_of - 3600.0
    hist = replace(res.history, spikes=tuple((t + 600.0 * i, 1000 + i, 9.0) for i in range(4)), n_spikes=4)
    f = {x.metric: x for x in flags(pv, res.observed, hist, res.forecast, pv.nodes)}
    assert "loss_spikes" in f and "4 loss spikes" in f["loss_spikes"].evidence
    spread = replace(res.history, spikes=tuple((t - 86400.0 * 2 * i, 1000 + i, 9.0) for i in range(4)))
    assert "loss_spikes" not in {x.metric for x in flags(pv, res.observed, spread, res.forecast, pv.nodes)}
