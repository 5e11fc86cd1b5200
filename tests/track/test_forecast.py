"""The forecast on synthetic runs from the twin's own step-time and failure models (truth known),
and the conjugate update of the interruption rate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from clustertwin.track.forecast import PRIOR_HOURS
from clustertwin.track.synthetic import generate
from track.helpers import at as _at

SEEDS = 40


def test_forecast_at_25_percent_p50_within_5_percent_and_p90_covers(pv):
    """40 runs generated from the plan's step time (5% slower than planned: the rate is learnt
    from the log) and its failure model; forecast at 25% of the tokens. Issue 35: the P50 within
    5% of the true finish (as a share of the run's duration), the P90 at or after it in >= 90% of
    the runs. A calibrated P90 covers 90% of runs on average (measured: 90 of 100 seeds), so 40
    seeds are held to >= 80%: below that (p < 0.05 for a true 90%) the fan is too narrow."""
    errors, covered = [], 0
    for seed in range(SEEDS):
        run = generate(pv, seed, step_factor=1.05)
        f = _at(run, pv, 0.25).forecast
        errors.append((f.trained_by[1] - run.finish) / (run.finish - run.start))
        covered += f.trained_by[2] >= run.finish
    assert max(abs(e) for e in errors) < 0.05, errors
    assert covered >= 0.8 * SEEDS, (covered, errors)


def test_interruption_rate_learns_from_the_run(pv):
    """Ten runs failing three times as often as planned: the learnt rate moves from the plan's
    toward the truth as the run goes on (at 75% of the tokens its median is within 15% of the
    truth), and the recommended checkpoint interval shortens (Daly at the learnt MTBF)."""
    truth = 3.0 * pv.interruptions_per_h
    early, late = [], []
    for seed in range(10):
        run = generate(pv, seed, rate_factor=3.0)
        e, f = _at(run, pv, 0.1).forecast, _at(run, pv, 0.75).forecast
        assert e.rate_prior_per_h == pytest.approx(pv.interruptions_per_h)
        assert f.interval_min < pv.checkpoint_interval_min
        assert f.rate_post_p5 < f.rate_post_per_h < f.rate_post_p95
        early.append(e.rate_post_per_h / truth)
        late.append(f.rate_post_per_h / truth)
    assert sum(abs(b - 1) < abs(a - 1) for a, b in zip(early, late, strict=True)) >= 8, (early, late)
    assert abs(float(np.median(late)) - 1) < 0.15, late


def test_conjugate_update_prior_weight(pv):
    """The plan-centred part of the prior is Gamma(lambda0 x H, H) (H = PRIOR_HOURS): after H hours
    with n events its mean is halfway between the plan's rate and n / H. The vague part takes
    over when the count contradicts the plan."""
    from clustertwin.track.forecast import PRIOR_TRUST, rate_posterior

    lam0 = pv.interruptions_per_h
    agree = round(lam0 * PRIOR_HOURS)
    (w, a, b), _ = rate_posterior(lam0, agree, PRIOR_HOURS)
    assert a / b == pytest.approx((lam0 + agree / PRIOR_HOURS) / 2)
    assert a == pytest.approx(lam0 * PRIOR_HOURS + agree)
    assert w > PRIOR_TRUST  # data that agree with the plan raise its weight
    (w_far, _, _), _ = rate_posterior(lam0, 4 * agree, PRIOR_HOURS)
    assert w_far < 0.01  # four times the plan's count: the plan-centred part is dropped
    (w0, _, _), _ = rate_posterior(lam0, 0, 0.0)
    assert w0 == pytest.approx(PRIOR_TRUST)  # no data: the prior as set


def test_forecast_is_seeded_and_ordered(pv):
    run = generate(pv, 2)
    a, b = _at(run, pv, 0.4).forecast, _at(run, pv, 0.4).forecast
    assert a.trained_by == b.trained_by
    assert a.trained_by[0] <= a.trained_by[1] <= a.trained_by[2]
    fan = np.array(a.fan)
    assert np.all(np.diff(fan[:, 0]) > 0) and np.all(np.diff(fan[:, 2]) > 0)
    assert fan[-1, 0] == pytest.approx(pv.tokens)
    assert math.isclose(fan[-1, 2], a.trained_by[1], rel_tol=1e-9)


def test_observed_against_planned(pv):
    """A run exactly on the plan's models: step time, throughput and MFU as planned; the
    interruptions and their cost inside the plan's range."""
    run = generate(pv, 3)
    res = _at(run, pv, 0.6)
    o = res.observed
    assert o.step_s == pytest.approx(pv.step_time_s, rel=0.02)
    assert o.tokens_per_s == pytest.approx(pv.tokens_per_s, rel=0.02)
    assert o.mfu == pytest.approx(pv.mfu, rel=0.02)
    assert o.fraction == pytest.approx(0.6, abs=0.01)
    assert o.expected_p5 <= len(o.interruptions) <= o.expected_p95
    assert set(o.by_cause) <= {"node failure", "job failed"}
    assert o.lost_h / len(o.interruptions) == pytest.approx(pv.cost_per_interruption_h, rel=0.5)
    assert o.ettr == pytest.approx(pv.ettr, abs=0.02)
    assert not res.flags


def test_logbook_like_run_from_halfway(pv):
    """A run unlike its plan, as published logbooks read: failing twice as often, a 72-hour
    outage at 30% of the tokens, 20% slower from 40% on. From the halfway point the P50 is
    within 10% of the true finish and the P90 covers it (issue 35's back-test criterion), in
    each of ten runs."""
    for seed in range(10):
        run = generate(pv, seed, rate_factor=2.0, slowdown=(0.4, 1.2), outage=(0.3, 72.0))
        f = _at(run, pv, 0.5).forecast
        assert abs(f.trained_by[1] - run.finish) < 0.1 * (run.finish - run.start)
        assert f.trained_by[2] >= run.finish, seed
