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
