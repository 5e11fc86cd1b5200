"""Hand-built cases with known answers, one or more per policy feature."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sched_helpers import wl

from clustertwin.scheduling import SimConfig, simulate, uniform
from clustertwin.scheduling.engine import CANCELLED, DONE, TIMEOUT, Reservation
from clustertwin.scheduling.policies import parse_policy
from clustertwin.scheduling.registry import Registry

C2 = uniform(2, 8)  # two 8-GPU nodes


def test_gang_never_starts_partially():
    # a 1-GPU job holds node 0 until t=100; the 16-GPU job needs both nodes whole
    w = wl([(0, 1, 100), (1, 16, 50)])
    for pol in ("fifo", "fifo+greedy", "fifo+backfill", "sjf", "multifactor"):
        r = simulate(w, C2, pol)
        assert r.first_start_s[1] == 100, pol
        assert r.alloc_gpus[1] == 16


def test_fifo_blocks_greedy_skips():
    # head (16 GPUs) blocked by a running job; a later 1-GPU job waits under strict FIFO
    w = wl([(0, 8, 100), (1, 16, 50), (2, 1, 10)])
    assert simulate(w, C2, "fifo").first_start_s[2] == 150
    assert simulate(w, C2, "fifo+greedy").first_start_s[2] == 2


def test_sjf_uses_requested_time_oracle_uses_duration():
    # one GPU; two waiting jobs: B is short but asks for a long limit
    w = wl([(0, 8, 10), (1, 8, 100, 100), (2, 8, 5, 1000)], )
    c = uniform(1, 8)
    sjf = simulate(w, c, "sjf")
    ora = simulate(w, c, "sjf-oracle")
    assert sjf.first_start_s[1] < sjf.first_start_s[2]
    assert ora.first_start_s[2] < ora.first_start_s[1]


def test_priority_orders_by_qos_then_priority():
    w = wl([(0, 8, 10), (1, 8, 10), (1, 8, 10), (1, 8, 10)], qos=[1, 1, 2, 1],
           priority=[0, 5, 0, 9])
    r = simulate(w, uniform(1, 8), "priority")
    assert list(np.argsort(r.first_start_s)) == [0, 2, 3, 1]


def test_backfill_fills_without_delaying_head():
    # node A busy to 100 (limit 100); head needs both nodes -> shadow 100.
    # short job (limit 50) backfills at t=2; long job (limit 500) must not use the head's nodes.
    w = wl([(0, 8, 100), (1, 16, 10), (2, 8, 40, 50), (3, 8, 400, 500)])
    r = simulate(w, C2, "fifo+backfill")
    assert r.first_start_s[1] == 100  # head not delayed
    assert r.first_start_s[2] == 2  # backfilled
    assert r.first_start_s[3] >= 110  # waited for the head
    assert any(h == 1 and t == 100 for h, _, t in r.reserved_head_checks)


def test_backfill_head_start_never_after_its_reservation():
    rng = np.random.default_rng(3)
    n = 300
    rows = [(float(t), float(g), float(d), float(d * f)) for t, g, d, f in zip(
        np.cumsum(rng.exponential(20, n)), rng.choice([1, 2, 4, 8, 16, 32], n),
        rng.uniform(10, 1000, n), rng.uniform(1, 3, n), strict=True)]
    w = wl(rows)
    r = simulate(w, uniform(4, 8), "fifo+backfill")
    first = {}
    for h, _, t in r.reserved_head_checks:
        first.setdefault(h, t)
    assert first
    for h, t in first.items():
        assert r.first_start_s[h] <= t + 1e-9


def test_preemption_requeues_and_loses_at_most_since_checkpoint():
    # low-QoS job uses the whole node from t=0, checkpoints every 30 s; high-QoS job at t=100
    w = wl([(0, 8, 1000), (100, 8, 50)], qos=[0, 2], checkpoint_s=[30.0, math.inf])
    r = simulate(w, uniform(1, 8), "priority+preempt")
    assert r.first_start_s[1] == 100
    assert r.preemptions[0] == 1
    lost_s = r.lost_preempt_gpu_s[0] / 8
    assert 0 <= lost_s <= 30 + 1e-9
    assert lost_s == pytest.approx(10)  # ran 100 s, kept 90 s
    assert r.status[0] == DONE
    assert r.end_s[0] == pytest.approx(150 + 1000 - 90)
    # without preemption the high-QoS job waits
    assert simulate(w, uniform(1, 8), "priority").first_start_s[1] == 1000


def test_preemption_never_hits_equal_or_higher_rank():
    w = wl([(0, 8, 1000), (100, 8, 50)], qos=[2, 2])
    r = simulate(w, uniform(1, 8), "priority+preempt")
    assert r.preemptions.sum() == 0


def test_dependencies_afterok_afterany():
    deps = {1: (("afterok", 0),), 2: (("afterany", 3),), 4: (("afterok", 3),)}
    # job 3 exceeds its time limit -> TIMEOUT: afterany (2) runs, afterok (4) is cancelled
    w = wl([(0, 1, 50), (0, 1, 10), (0, 1, 10), (0, 1, 100, 20), (0, 1, 10)], deps=deps)
    r = simulate(w, C2, "fifo")
    assert r.first_start_s[1] == 50
    assert r.status[3] == TIMEOUT and r.end_s[3] == 20
    assert r.first_start_s[2] == 20 and r.status[2] == DONE
    assert r.status[4] == CANCELLED


def test_fair_share_converges_to_configured_shares():
    # two teams flood a 16-GPU cluster with 1-GPU, 600-s jobs; shares 3:1
    n = 2000
    rows = [(0.0, 1, 600.0)] * n
    teams = ["a" if i % 2 == 0 else "b" for i in range(n)]
    w = wl(rows, teams=teams)
    cfg = SimConfig(shares={"a": 3, "b": 1}, horizon_s=10 * 3600)
    r = simulate(w, C2, "multifactor:half_life_s=3600", cfg)
    share_a = r.team_gpu_s[0] / r.team_gpu_s.sum()
    assert share_a == pytest.approx(0.75, abs=0.03)
    fifo = simulate(w, C2, "fifo", cfg)
    assert fifo.team_gpu_s[0] / fifo.team_gpu_s.sum() == pytest.approx(0.5, abs=0.03)


def test_team_gpu_limit_holds():
    w = wl([(0, 1, 100)] * 10 + [(0, 1, 100)] * 2, teams=["a"] * 10 + ["b"] * 2)
    r = simulate(w, C2, "fifo", SimConfig(team_limits_gpus={"a": 3}))
    starts = r.first_start_s[:10]
    assert (starts == 0).sum() == 3
    assert (r.first_start_s[10:] == 0).all()  # team b not blocked by a's held jobs


def test_reservation_holds_nodes_and_runs_member():
    # reserve 8 GPUs (one node) from t=100 to t=400; member job starts at 100
    rsv = (Reservation("big", 100.0, 400.0, 8),)
    w = wl([(0, 8, 500), (0, 8, 50), (0, 8, 300)], reservation=[-1, -1, 0])
    r = simulate(w, C2, "fifo+greedy", SimConfig(reservations=rsv))
    assert r.first_start_s[2] == 100
    assert r.first_start_s[0] == 0 and r.first_start_s[1] in (0.0, 400.0)
    # the long job cannot be on the reserved node, so the short one (ends by 100) may be
    assert r.first_start_s[1] == 0


def test_failures_requeue_and_everything_finishes():
    rng = np.random.default_rng(0)
    rows = [(float(t), 8, float(d)) for t, d in zip(np.arange(40) * 10, rng.uniform(500, 3000, 40),
                                                   strict=True)]
    w = wl(rows, checkpoint_s=[300.0] * 40)
    cfg = SimConfig(failure_rate_per_node_day=20.0, repair_s=600.0)
    r = simulate(w, uniform(4, 8), "fifo", cfg, seed=1)
    assert r.failures > 0 and r.interruptions.sum() > 0
    assert (r.status == DONE).all()
    per = r.lost_gpu_s / np.maximum(r.interruptions, 1) / 8
    assert (per <= 300 + 1e-6).all()
    again = simulate(w, uniform(4, 8), "fifo", cfg, seed=1)
    assert np.array_equal(again.end_s, r.end_s)  # same seed, same answer


def test_topology_placement_packs_into_fewest_units():
    c = uniform(16, 8, nodes_per_su=4)
    # fragment: single-node jobs on nodes 0, 4, 8 (first-fit would spread the big job)
    w = wl([(0, 8, 1000)] * 3 + [(1, 32, 100)])
    busy = np.zeros(16, dtype=bool)
    r = simulate(w, c, "fifo", SimConfig(placement="topology"))
    assert r.scalable_units[3] == 1
    del busy


def test_best_fit_packs_fractional_jobs():
    w = wl([(0, 0.5, 100), (1, 0.5, 100), (2, 1, 100)])
    c = uniform(1, 2)
    bf = simulate(w, c, "fifo", SimConfig(placement="best-fit"))
    assert (bf.first_start_s == [0, 1, 2]).all()  # halves share GPU 0; GPU 1 stays whole


def test_policy_strings_and_registry():
    p = parse_policy("multifactor:fairshare=5000+backfill+preempt")
    assert p.backfill and p.preempt and p.params == {"fairshare": 5000.0}
    assert parse_policy("easy").order == "fifo" and parse_policy("easy").backfill
    from clustertwin.errors import UsageError

    with pytest.raises(UsageError):
        parse_policy("fifo+turbo")
    with pytest.raises(UsageError):
        parse_policy("lottery")
    reg: Registry[int] = Registry("thing")
    reg.add("a", 1)
    with pytest.raises(ValueError):
        reg.add("a", 2)


def test_too_large_job_cancelled_not_hung():
    w = wl([(0, 64, 10), (0, 1, 10)])
    r = simulate(w, C2, "fifo")
    assert r.status[0] == CANCELLED and r.status[1] == DONE


def test_run_ends_when_queued_jobs_can_never_start_under_failures():
    """A reservation member that arrives after its window can never start; with node failures
    on, failure events alone must not keep the run going for ever (no horizon given)."""
    rsv = (Reservation("late", 0.0, 50.0, 8),)
    w = wl([(0, 8, 100), (100, 8, 30)], reservation=[-1, 0])
    cfg = SimConfig(reservations=rsv, failure_rate_per_node_day=5.0, repair_s=600.0)
    r = simulate(w, C2, "fifo", cfg, seed=1)
    assert np.isnan(r.first_start_s[1]) and r.end_time_s < 1e7


@pytest.mark.parametrize("text", ["multifactor:age=-1", "multifactor:fairshare=1e12",
                                  "multifactor:age=nan", "multifactor:age=inf",
                                  "multifactor:bogus=1", "multifactor:keys=1", "fifo:age=1",
                                  "multifactor:calc_period_s=0", "multifactor:half_life_s=1e30"])
def test_policy_parameters_are_known_finite_and_bounded(text):
    """issue 19: weights were taken as given (negative, 1e12, unknown keys)."""
    from clustertwin.errors import UsageError
    from clustertwin.scheduling.policies import parse_policy

    with pytest.raises(UsageError) as info:
        parse_policy(text)
    assert all("--policy" in ln and "\n" not in ln for ln in info.value.lines())


def test_policy_parameters_within_bounds_are_kept():
    from clustertwin.scheduling.policies import parse_policy

    spec = parse_policy("multifactor:fairshare=5000, age=100,half_life_s=86400+backfill")
    assert spec.params == {"fairshare": 5000.0, "age": 100.0, "half_life_s": 86400.0}
    assert spec.build().fairshare == 5000.0
