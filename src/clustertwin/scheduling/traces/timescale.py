"""Fitting a trace to a cluster: ``--load`` (time compression) and ``--scale`` (job sizes).

A real trace replayed on a cluster of another size offers that cluster the load it offered
its own: the shipped traces give 0.2-6 % utilization at their native size, where every policy
gives the same answer. ``--load L`` rescales the gaps between submit times so that the offered
load while jobs arrive (GPU-seconds asked inside the arrival window / (GPUs x window)) is
``L``; job sizes and durations are kept, so queueing comes from the trace's own mix. ``--scale K`` asks K times the GPUs per job (whole
GPUs), for a trace from a cluster K times smaller.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from clustertwin.errors import Problem, UsageError
from clustertwin.scheduling.jobs import Workload

MAX_SCALE = 1024


def _load_at(w: Workload, cluster_gpus: int, factor: np.ndarray) -> np.ndarray:
    """Offered load while jobs arrive with submit gaps scaled by each ``factor``: GPU-seconds
    the jobs ask inside the arrival window / (GPUs x window). Work running past the last
    arrival does not count, so one months-long job cannot stand for a busy cluster."""
    t0, t1 = float(w.submit_s.min()), float(w.submit_s.max())
    left = (t1 - w.submit_s)[None, :]                   # time to the last arrival, native
    g = (w.gpus_milli / 1000.0)[None, :]
    f = np.asarray(factor, dtype=float)[:, None]
    inside = np.minimum(w.duration_s[None, :], f * left)
    return np.sum(g * inside, axis=1) / (cluster_gpus * f[:, 0] * (t1 - t0))


def offered_load(w: Workload, cluster_gpus: int) -> float:
    """Offered load while the jobs arrive, as recorded; NaN for < 2 distinct submit times."""
    if len(w) < 2 or cluster_gpus <= 0 or float(w.submit_s.max() - w.submit_s.min()) <= 0:
        return math.nan
    return float(_load_at(w, cluster_gpus, np.array([1.0]))[0])


def compress_to_load(w: Workload, cluster_gpus: int, load: float, source: str) -> tuple[Workload, str]:
    """Scale submit gaps so the offered load while jobs arrive is ``load`` (the load falls as
    the gaps grow, so a log-space bisection finds the factor); returns (workload, note)."""
    native = offered_load(w, cluster_gpus)
    if not math.isfinite(native) or native <= 0:
        raise UsageError([Problem(source, "--load", "cannot set the load of this trace: its jobs "
                                  "do not arrive over a time window (fewer than two distinct submit "
                                  "times); replay it without --load")])
    lo, hi = -30.0, 30.0                                # log factor; load(lo) is the most reachable
    top = float(_load_at(w, cluster_gpus, np.array([math.exp(lo)]))[0])
    if top < load:
        raise UsageError([Problem(source, "--load", f"this trace cannot offer {load:g} on "
                                  f"{cluster_gpus:,} GPUs (at most {top:.3g} with every gap closed); "
                                  "use a smaller cluster, --scale or a lower --load")])
    for _ in range(6):                                  # 6 x 24 points: factor to ~1e-7 relative
        grid = np.linspace(lo, hi, 24)
        vals = _load_at(w, cluster_gpus, np.exp(grid))
        k = int(np.searchsorted(-vals, -load))          # vals fall with the factor
        lo, hi = grid[max(k - 1, 0)], grid[min(k, len(grid) - 1)]
    factor = math.exp(0.5 * (lo + hi))
    t0 = float(w.submit_s.min())
    new = t0 + (w.submit_s - t0) * factor
    note = (f"--load {load:g}: submit gaps scaled by {factor:.4g} (offered load while jobs arrive, "
            f"as recorded: {native:.3g} on {cluster_gpus:,} GPUs)")
    return replace(w, submit_s=new), note


def scale_sizes(w: Workload, k: float) -> tuple[Workload, str]:
    """Every job asks ``k`` times its GPUs (``k`` a whole number 1..MAX_SCALE)."""
    if not math.isfinite(k) or k != int(k) or not 1 <= k <= MAX_SCALE:
        raise UsageError([Problem("command line", "--scale",
                                  f"expected a whole number from 1 to {MAX_SCALE} (GPUs per job are "
                                  f"multiplied; fractions of GPUs would not stay whole), got {k!r}")])
    k = int(k)
    return (replace(w, gpus_milli=w.gpus_milli * k),
            f"--scale {k}: every job asks {k}x its GPUs")
