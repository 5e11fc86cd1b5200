"""Conservation properties (hypothesis): every job ends completed, timed out or cancelled, or
is still queued/running at the horizon; allocated GPUs never exceed the GPUs that are up."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_helpers import wl

from clustertwin.scheduling import SimConfig, simulate, uniform
from clustertwin.scheduling.engine import FUTURE, RUNNING

POLICIES = ["fifo", "fifo+greedy", "fifo+backfill", "sjf+backfill", "priority+preempt",
            "multifactor+backfill+preempt", "sjf-oracle"]

job = st.tuples(st.floats(0, 5000), st.sampled_from([0.25, 0.5, 1, 2, 4, 8, 16, 24, 64]),
                st.floats(1, 3000), st.floats(1, 3))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=st.lists(job, min_size=1, max_size=40), pol=st.sampled_from(POLICIES),
       placement=st.sampled_from(["first-fit", "best-fit", "topology"]),
       fail=st.sampled_from([0.0, 30.0]), horizon=st.sampled_from([np.inf, 3000.0]),
       seed=st.integers(0, 3))
def test_conservation(jobs, pol, placement, fail, horizon, seed):
    rows = [(t, g, d, d * f) for t, g, d, f in jobs]
    n = len(rows)
    w = wl(rows, qos=[i % 3 for i in range(n)], checkpoint_s=[200.0] * n,
           teams=[f"t{i % 2}" for i in range(n)])
    spec = uniform(3, 8, nodes_per_su=2)
    cfg = SimConfig(placement=placement, failure_rate_per_node_day=fail, repair_s=500.0,
                    horizon_s=horizon)
    r = simulate(w, spec, pol, cfg, seed=seed)
    # every job accounted for exactly once
    assert len(r.status) == n
    if np.isinf(horizon):
        assert (r.status >= 4).all()  # completed, timeout or cancelled
        cancelled = r.status == 6
        big = w.gpus_milli > spec.gpus * 1000
        assert (cancelled == big).all()
    else:
        assert ((r.status >= 1) | (w.submit_s > horizon) | (r.status == FUTURE)).all()
    tl = r.timeline
    assert (tl["alloc_gpus"] <= tl["up_gpus"] + 1e-9).all()
    assert (tl["alloc_gpus"] >= -1e-9).all()
    # GPU-seconds handed out never exceed capacity x time
    used = float((r.run_s * r.alloc_gpus).sum())
    span = max(r.end_time_s - float(w.submit_s.min()), 0.0)
    assert used <= spec.gpus * span + 1e-6
    # a job never runs longer in total than its work plus what it lost
    ended = r.status >= 4
    assert (r.run_s[ended] <= w.requested_s[ended] * (1 + r.preemptions[ended]
                                                     + r.interruptions[ended]) + 1e-6).all()
    assert ((r.status == RUNNING) <= ~np.isnan(r.first_start_s)).all()
