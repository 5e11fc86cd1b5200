"""Fitting a trace to a cluster: ``--load`` (time compression) and ``--scale`` (job sizes).

A real trace replayed on a cluster of another size offers that cluster the load it offered
its own: the shipped traces give 0.2-6 % utilization at their native size, where every policy
gives the same answer. ``--load L`` rescales the gaps between submit times so that the offered
load, GPU-seconds asked / (GPUs x arrival window), is ``L``; job sizes and durations are kept,
so queueing comes from the trace's own mix. ``--scale K`` asks K times the GPUs per job (whole
GPUs), for a trace from a cluster K times smaller.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from clustertwin.errors import Problem, UsageError
from clustertwin.scheduling.jobs import Workload

#: Largest --load: beyond ~10 every job arrives at once in any real trace.
MAX_LOAD = 10.0
MAX_SCALE = 1024


def offered_load(w: Workload, cluster_gpus: int) -> float:
    """GPU-seconds the jobs ask for / (cluster GPUs x arrival window); NaN for < 2 submit times."""
    if len(w) < 2 or cluster_gpus <= 0:
        return math.nan
    span = float(w.submit_s.max() - w.submit_s.min())
    if span <= 0:
        return math.nan
    work = float(np.sum(w.gpus_milli / 1000.0 * w.duration_s))
    return work / (cluster_gpus * span)


def check_load(load: float) -> float:
    if not math.isfinite(load) or not 0 < load <= MAX_LOAD:
        raise UsageError([Problem("command line", "--load",
                                  f"expected an offered load above 0 and at most {MAX_LOAD:g} (0.9 = 90%), got {load!r}")])
    return load


def compress_to_load(w: Workload, cluster_gpus: int, load: float, source: str) -> tuple[Workload, str]:
    """Rescale submit gaps so the offered load is ``load``; returns (workload, note)."""
    native = offered_load(w, cluster_gpus)
    if not math.isfinite(native) or native <= 0:
        raise UsageError([Problem(source, "--load", "cannot set the load of this trace: its jobs "
                                  "do not arrive over a time window (fewer than two distinct submit "
                                  "times); replay it without --load")])
    factor = native / load
    t0 = float(w.submit_s.min())
    new = t0 + (w.submit_s - t0) * factor
    note = (f"--load {load:g}: submit gaps scaled by {factor:.4g} (native offered load "
            f"{native:.3g} on {cluster_gpus:,} GPUs)")
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
