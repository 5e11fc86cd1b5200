"""Two-tier checkpoint simulator: agreement with the single-tier core, accounting, which tier
survives which failure, and the background-write window of each tier."""

from __future__ import annotations

import numpy as np
import pytest

from clustertwin.reliability.montecarlo import RunSpec, simulate
from clustertwin.reliability.tiers import TierSpec, simulate_tiers


def _spec(**kw):
    base = dict(work_h=300.0, blocking_h=0.05, persist_h=0.2, restart_h=0.2,
                rates_per_h=(0.2, 0.1), needs_repair=(True, False), planned_per_h=0.02,
                repair_h=3.0, spare_nodes=2)
    base.update(kw)
    return RunSpec(**base)


def _rng(seed=0):
    return np.random.default_rng(seed)


def test_file_system_only_schedule_equals_single_tier_core():
    """local_on = False, every = 1 is the single-tier model: same numbers to rounding."""
    spec = _spec()
    a = simulate(spec, [0.5, 1.0, 2.0], 300, _rng(), count_causes=True, record=True)
    b = simulate_tiers(spec, TierSpec(0.01, 0.1, 0.05), [0.5, 1.0, 2.0], 1, 300, _rng(),
                       local_on=False, count_causes=True, record=True)
    for f in ("wall_h", "work_h", "stall_h", "lost_h", "restart_h", "waiting_h"):
        np.testing.assert_allclose(getattr(b, f), getattr(a, f), rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(a.interruptions, b.interruptions)
    np.testing.assert_array_equal(a.counts, b.counts)
    np.testing.assert_allclose(np.array(b.timeline), np.array(a.timeline), atol=1e-9)
    assert b.local_restores.sum() == 0


def test_wall_time_splits_exactly_into_categories():
    out = simulate_tiers(_spec(spare_nodes=0), TierSpec(0.01, 0.05, 0.1, 0),
                         [0.25, 0.5, 0.5], [4, 2, 1], 200, _rng(1))
    total = out.work_h + out.stall_h + out.lost_h + out.restart_h + out.waiting_h
    np.testing.assert_allclose(total, out.wall_h, rtol=1e-12, atol=1e-9)
    assert np.all(out.work_h == 300.0)


def test_no_failures_only_the_blocking_copies_stall():
    spec = _spec(rates_per_h=(0.0, 0.0), planned_per_h=0.0, persist_h=0.9)
    out = simulate_tiers(spec, TierSpec(0.01, 0.6, 0.1), 1.0, 3, 5, _rng())
    # 299 checkpoints; every 3rd (99 of them) goes to the file system with the longer stall;
    # the background writes (0.6 h local, 0.9 h file system) add nothing
    np.testing.assert_allclose(out.stall_h, 200 * 0.01 + 99 * 0.05)


def test_node_local_copies_without_replicas_equal_file_system_only():
    """Every failure takes a node and there are no peer copies: the local tier never helps, so
    with free local checkpoints the run is file-system-only at every x local."""
    spec = _spec(rates_per_h=(0.3,), needs_repair=(True,), planned_per_h=0.0, spare_nodes=50)
    two = simulate_tiers(spec, TierSpec(0.0, 0.0, 0.05, replicas=0), 0.25, 4, 200, _rng(2))
    one = simulate(spec, 1.0, 200, _rng(2))
    np.testing.assert_allclose(two.wall_h, one.wall_h, rtol=1e-9)
    np.testing.assert_allclose(two.lost_h, one.lost_h, rtol=1e-9, atol=1e-9)
    assert two.local_restores.sum() == 0


def test_peer_replica_survives_node_loss():
    spec = _spec(rates_per_h=(0.3,), needs_repair=(True,), planned_per_h=0.0, spare_nodes=50)
    rep = simulate_tiers(spec, TierSpec(0.0, 0.0, 0.2, replicas=1), 0.25, 4, 200, _rng(2))
    nor = simulate_tiers(spec, TierSpec(0.0, 0.0, 0.2, replicas=0), 0.25, 4, 200, _rng(2))
    assert rep.local_restores.sum() > 0.9 * rep.interruptions.sum()
    assert rep.lost_h.mean() < 0.4 * nor.lost_h.mean()


def test_software_failures_keep_node_local_copies():
    spec = _spec(rates_per_h=(0.3,), needs_repair=(False,), planned_per_h=0.0)
    out = simulate_tiers(spec, TierSpec(0.0, 0.0, 0.2, replicas=0), 0.25, 4, 200, _rng(3))
    assert out.local_restores.sum() > 0.9 * out.interruptions.sum()


def test_local_write_window_loses_the_inflight_local_copy():
    spec = _spec(work_h=1000.0, rates_per_h=(0.3,), needs_repair=(False,), planned_per_h=0.0,
                 persist_h=0.0)
    fast = simulate_tiers(spec, TierSpec(0.0, 0.0, 0.2), 0.5, 2, 200, _rng(4))
    slow = simulate_tiers(spec, TierSpec(0.0, 0.4, 0.2), 0.5, 2, 200, _rng(4))
    assert slow.lost_h.mean() > 1.3 * fast.lost_h.mean()


def test_file_system_write_window_matters_only_when_the_local_tier_is_lost():
    spec = _spec(work_h=1000.0, rates_per_h=(0.3,), needs_repair=(True,), planned_per_h=0.0,
                 spare_nodes=50, persist_h=0.0)
    late = RunSpec(**{**spec.__dict__, "persist_h": 1.5})
    a = simulate_tiers(spec, TierSpec(0.0, 0.0, 0.2, replicas=0), 0.5, 4, 200, _rng(5))
    b = simulate_tiers(late, TierSpec(0.0, 0.0, 0.2, replicas=0), 0.5, 4, 200, _rng(5))
    assert b.lost_h.mean() > 1.2 * a.lost_h.mean()
    c = simulate_tiers(spec, TierSpec(0.0, 0.0, 0.2, replicas=1), 0.5, 4, 200, _rng(5))
    d = simulate_tiers(late, TierSpec(0.0, 0.0, 0.2, replicas=1), 0.5, 4, 200, _rng(5))
    assert d.lost_h.mean() == pytest.approx(c.lost_h.mean(), rel=0.02)


def test_same_seed_same_numbers():
    a = simulate_tiers(_spec(), TierSpec(0.01, 0.05, 0.1), 0.5, 3, 100, _rng(9), count_causes=True)
    b = simulate_tiers(_spec(), TierSpec(0.01, 0.05, 0.1), 0.5, 3, 100, _rng(9), count_causes=True)
    np.testing.assert_array_equal(a.wall_h, b.wall_h)
    np.testing.assert_array_equal(a.counts, b.counts)
