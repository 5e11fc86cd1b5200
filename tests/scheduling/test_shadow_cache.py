"""EASY backfill keeps the blocked head's shadow (earliest start, nodes held for it) between
passes while it stays valid. Job ends never move it: the engine knows when each running job
ends (``run_ends``), so the cached time already counts every end. A node coming back from
repair does: its GPUs may let the head start earlier, so the cache is dropped then, as it is
when a node fails."""

from __future__ import annotations

import numpy as np

from clustertwin.scheduling import SimConfig, simulate, uniform
from clustertwin.scheduling import failures as failures_mod
from clustertwin.scheduling.jobs import make_workload
from clustertwin.scheduling.simtypes import FAIL, REPAIR


def test_a_repaired_node_moves_the_head_earlier(monkeypatch) -> None:
    """3 nodes of 8 GPUs. Node 1 is down from t=0 to t=100. A (8 GPUs) holds node 0 until
    1000 and D (4 GPUs) half of node 2 until 5000; at t=1 the head H needs two idle nodes:
    shadow 5000 on nodes 0 and 2. Once node 1 is back the head can start at 1000 on nodes 0
    and 1, so C (8 GPUs, limit 2000, queued at 150) runs past it and may not take node 1.
    With the shadow of t=1 kept, C took node 1 and H waited until 2150."""

    def next_failure(self):
        if not getattr(self, "_test_failed", False):
            self._test_failed = True
            self.push(0.0, FAIL, None)

    def fail(self):
        self.failures += 1
        self.st.fail(1)
        self.push(100.0, REPAIR, 1)
        self.shadow = None

    monkeypatch.setattr(failures_mod.Failures, "_next_failure", next_failure)
    monkeypatch.setattr(failures_mod.Failures, "_fail", fail)
    w = make_workload(["A", "D", "H", "C"], np.array([0.0, 0.0, 1.0, 150.0]),
                      np.array([8000, 4000, 16000, 8000]),
                      np.array([1000.0, 5000.0, 100.0, 2000.0]),
                      requested_s=np.array([1000.0, 5000.0, 100.0, 2000.0]))
    cfg = SimConfig(placement="first-fit", failure_rate_per_node_day=1e-6)
    o = simulate(w, uniform(3, 8), "fifo+backfill", cfg)
    start = dict(zip(w.names, o.first_start_s.tolist(), strict=True))
    assert start == {"A": 0.0, "D": 0.0, "H": 1000.0, "C": 1100.0}
    # shadows computed: at t=1 (5000, nodes 0 and 2), again at the repair (1000), then C's
    assert [(w.names[h], t, s) for h, t, s in o.reserved_head_checks][:2] == \
        [("H", 1.0, 5000.0), ("H", 100.0, 1000.0)]
