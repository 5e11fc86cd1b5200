"""Helpers shared by the scheduling tests (a plain module, not a conftest)."""

from __future__ import annotations

import numpy as np


def wl(rows, **kw):
    """rows: (submit_s, gpus, duration_s[, requested_s]) tuples."""
    from clustertwin.scheduling.jobs import make_workload

    sub = [r[0] for r in rows]
    gpus = [int(round(r[1] * 1000)) for r in rows]
    dur = [r[2] for r in rows]
    req = [r[3] if len(r) > 3 else r[2] for r in rows]
    return make_workload([f"j{i}" for i in range(len(rows))], sub, gpus, dur,
                         requested_s=np.asarray(req, dtype=float), **kw)


def multifactor_states(policy: str, jobs: int, seed: int, teams: int, steps: int):
    """A multifactor order over a synthetic Philly workload of ``jobs`` jobs in ``teams``
    teams on 16 nodes, and its run context through ``steps`` fair-share usage states (idle
    teams, tiny and huge usage; none at the first): yields ``(order, ctx, workload, now)``."""
    from clustertwin.scheduling import uniform
    from clustertwin.scheduling.policies import parse_policy
    from clustertwin.scheduling.runstate import _Ctx
    from clustertwin.scheduling.traces import generate

    spec = uniform(16, 8)
    w = generate("philly", jobs, spec.gpus, np.random.default_rng(seed), load=0.9, teams=teams)
    order = parse_policy(policy).build()
    rng = np.random.default_rng(teams)
    shares = rng.uniform(0.1, 1.0, len(w.teams))
    ctx = _Ctx(w, shares / shares.sum(), spec.gpus * 1000)
    for step in range(steps):
        usage = rng.uniform(0, 1e6, len(w.teams)) * rng.choice([1e-3, 1.0, 1e4], len(w.teams))
        usage[rng.uniform(size=len(w.teams)) < 0.3] = 0.0
        ctx.usage = (usage * (step > 0)).tolist()  # the engine replaces the list each time
        yield order, ctx, w, float(w.submit_s.max()) * rng.uniform(0.2, 1.5)
