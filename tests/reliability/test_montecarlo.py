"""Monte Carlo core: accounting identities, determinism, spares, async windows, windows."""

from __future__ import annotations

import numpy as np
import pytest

from clustertwin.reliability import interval as iv
from clustertwin.reliability.montecarlo import RunawayError, RunSpec, simulate


def _spec(**kw):
    base = dict(work_h=200.0, blocking_h=0.05, persist_h=0.0, restart_h=0.2,
                rates_per_h=(0.2, 0.1), needs_repair=(True, False), planned_per_h=0.02,
                repair_h=3.0, spare_nodes=2)
    base.update(kw)
    return RunSpec(**base)


def _rng(seed=0):
    return np.random.default_rng(seed)


def test_wall_time_splits_exactly_into_categories():
    """GP-DEF (ml-goodput-measurement): wall = useful + stalls + lost + restart + waiting."""
    out = simulate(_spec(spare_nodes=0), [0.5, 1.0, 2.0], 300, _rng())
    total = out.work_h + out.stall_h + out.lost_h + out.restart_h + out.waiting_h
    np.testing.assert_allclose(total, out.wall_h, rtol=1e-12, atol=1e-9)
    assert np.all(out.work_h == 200.0)
    assert np.all(out.waiting_h > 0)


def test_same_seed_same_numbers_other_seed_differs():
    a = simulate(_spec(), 0.7, 200, _rng(5), count_causes=True)
    b = simulate(_spec(), 0.7, 200, _rng(5), count_causes=True)
    c = simulate(_spec(), 0.7, 200, _rng(6), count_causes=True)
    np.testing.assert_array_equal(a.wall_h, b.wall_h)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert not np.array_equal(a.wall_h, c.wall_h)


def test_no_failures_is_deterministic():
    out = simulate(_spec(rates_per_h=(0.0, 0.0), planned_per_h=0.0), 1.0, 10, _rng())
    # 200 h of work in 1 h pieces: 199 checkpoints of 0.05 h, none at the end
    np.testing.assert_allclose(out.wall_h, 200.0 + 199 * 0.05)
    assert out.interruptions.sum() == 0


def test_matches_daly_complete_model():
    """Poisson failures, failures also during restarts: the mean equals Daly's expectation."""
    spec = _spec(work_h=2000.0, rates_per_h=(0.3,), needs_repair=(False,), planned_per_h=0.0)
    out = simulate(spec, 0.6, 400, _rng(1))
    expect = iv.ettr_daly(0.6, 0.05, 1 / 0.3, 0.2)
    assert abs(out.work_h.sum() / out.wall_h.sum() - expect) < 0.003


def test_enough_spares_remove_waiting_none_means_waiting_for_each_repair():
    spec = _spec(work_h=2000.0, rates_per_h=(0.02, 0.01))
    plenty = simulate(spec.__class__(**{**spec.__dict__, "spare_nodes": 50}), 0.7, 100, _rng())
    assert plenty.waiting_h.max() == 0.0
    none = simulate(spec.__class__(**{**spec.__dict__, "spare_nodes": 0}), 0.7, 100, _rng(),
                    count_causes=True)
    # every repair-needing failure waits the full repair time, unless a later failure lands
    # inside the wait (then the waits overlap): bounded above by count x repair_h
    bound = none.counts[:, 0] * 3.0
    assert np.all(none.waiting_h[0] <= bound + 1e-9)
    assert none.waiting_h[0].mean() > 0.8 * bound.mean()


def test_async_window_loses_the_inflight_checkpoint():
    sync = _spec(work_h=1000.0, planned_per_h=0.0, spare_nodes=50, blocking_h=0.0)
    late = sync.__class__(**{**sync.__dict__, "persist_h": 0.4})
    a = simulate(sync, 0.5, 200, _rng(2))
    b = simulate(late, 0.5, 200, _rng(2))
    assert np.all(b.stall_h == 0.0)            # only the blocking part stalls training
    assert b.lost_h.mean() > a.lost_h.mean() * 1.3


def test_wall_limit_counts_arrivals_in_the_window():
    spec = _spec(work_h=1e9, rates_per_h=(2.0,), needs_repair=(False,), planned_per_h=0.0,
                 wall_limit_h=100.0)
    out = simulate(spec, 1.0, 400, _rng(3))
    assert np.all(out.wall_h == 100.0)
    assert abs(out.interruptions.mean() - 200.0) < 4 * np.sqrt(200.0 / 400)


def test_runaway_is_reported():
    spec = _spec(work_h=100.0, rates_per_h=(60.0,), needs_repair=(False,), restart_h=1.0)
    with pytest.raises(RunawayError):
        simulate(spec, 1.0, 4, _rng(), max_events=1000)
