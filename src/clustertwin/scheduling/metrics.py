"""Metrics of one run, from the engine's raw output.

* utilization (allocated) = allocated GPU-seconds / (GPUs x span), span from the first submit
  to the last event; (useful) subtracts work thrown away by failures and preemptions;
  (while arriving) counts only the window from the first to the last submission, so the long
  drain of heavy-tailed traces does not hide how busy the cluster was under load;
* JCT = end - submit for jobs that ended (completed or timed out); queueing delay = first
  start - submit;
* bounded slowdown = max(1, JCT / max(run time, 10 s)), the 10 s bound of Feitelson et al.,
  "Theory and practice in parallel job scheduling" (JSSPP 1997);
* fragmentation = time-average share of free whole GPUs that sit on partly busy nodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clustertwin.scheduling.cluster import ClusterSpec
from clustertwin.scheduling.engine import (
    CANCELLED,
    DONE,
    HELD,
    QUEUED,
    RUNNING,
    TIMEOUT,
    RunOutput,
)
from clustertwin.scheduling.jobs import Workload

SLOWDOWN_BOUND_S = 10.0


def _stats(x: np.ndarray) -> dict[str, float]:
    if x.size == 0:
        return {"mean": float("nan"), "median": float("nan"), "p95": float("nan")}
    return {"mean": float(x.mean()), "median": float(np.median(x)),
            "p95": float(np.percentile(x, 95))}


def time_average(t: np.ndarray, v: np.ndarray, end: float) -> float:
    """Average of a step function that holds v[i] from t[i] to t[i+1] (the last to ``end``)."""
    if t.size == 0:
        return 0.0
    dt = np.diff(np.append(t, max(end, t[-1])))
    tot = dt.sum()
    return float((v * dt).sum() / tot) if tot > 0 else float(v[-1])


def integral(t: np.ndarray, v: np.ndarray, end: float) -> float:
    if t.size == 0:
        return 0.0
    return float((v * np.diff(np.append(t, max(end, t[-1])))).sum())


def integral_between(t: np.ndarray, v: np.ndarray, a: float, b: float) -> float:
    """Integral over [a, b] of the step function that holds v[i] from t[i] to t[i+1]."""
    if t.size == 0 or b <= a:
        return 0.0
    edges = np.append(t, max(b, t[-1]))
    lo = np.clip(edges[:-1], a, b)
    hi = np.clip(edges[1:], a, b)
    return float((v * (hi - lo)).sum())


def compute(w: Workload, spec: ClusterSpec, r: RunOutput) -> dict[str, Any]:
    st = r.status
    ended = (st == DONE) | (st == TIMEOUT)
    jct = (r.end_s - w.submit_s)[ended]
    started = ~np.isnan(r.first_start_s)
    wait = (r.first_start_s - w.submit_s)[started]
    run = r.run_s[ended]
    bsd = np.maximum(1.0, jct / np.maximum(run, SLOWDOWN_BOUND_S))
    t0 = float(w.submit_s.min()) if len(w) else 0.0
    span = max(r.end_time_s - t0, 1e-9)
    tl = r.timeline
    alloc_gs = integral(tl["t"], tl["alloc_gpus"], r.end_time_s)
    cap_gs = spec.gpus * span
    # while jobs are still arriving: the steady-state figure, free of the drain of heavy tails
    t_last = float(w.submit_s.max()) if len(w) else t0
    window_gs = integral_between(tl["t"], tl["alloc_gpus"], t0, t_last)
    window_cap = spec.gpus * (t_last - t0)
    lost_f = float(r.lost_gpu_s.sum())
    lost_p = float(r.lost_preempt_gpu_s.sum())
    team_total = r.team_gpu_s.sum()
    teams = {}
    for i, name in enumerate(w.teams):
        teams[name] = {"share": float(r.team_gpu_s[i] / team_total) if team_total > 0 else 0.0,
                       "fair_share": float(r.shares[i]),
                       "gpu_hours": float(r.team_gpu_s[i] / 3600.0)}
    multi = r.leaf_groups > 1
    return {
        "policy": r.policy,
        "placement": r.placement,
        "jobs": int(len(w)),
        "completed": int((st == DONE).sum()),
        "timeout": int((st == TIMEOUT).sum()),
        "cancelled": int((st == CANCELLED).sum()),
        "queued_at_end": int(((st == QUEUED) | (st == HELD)).sum()),
        "running_at_end": int((st == RUNNING).sum()),
        "not_submitted": int((st == 0).sum()),
        "makespan_s": float(span),
        "gpu_util_allocated": alloc_gs / cap_gs if cap_gs > 0 else 0.0,
        "gpu_util_useful": max(0.0, alloc_gs - lost_f - lost_p) / cap_gs if cap_gs > 0 else 0.0,
        "gpu_util_arrivals": window_gs / window_cap if window_cap > 0 else 0.0,
        "jct_s": _stats(jct),
        "queue_delay_s": _stats(wait),
        "bounded_slowdown": _stats(bsd),
        "fragmentation": time_average(tl["t"], tl["fragmentation"], r.end_time_s),
        "queue_length_mean": time_average(tl["t"], tl["queue"], r.end_time_s),
        "queue_length_max": int(tl["queue"].max()) if tl["queue"].size else 0,
        "preemptions": int(r.preemptions.sum()),
        "failure_interruptions": int(r.interruptions.sum()),
        "node_failures": int(r.failures),
        "gpu_hours_lost_failures": lost_f / 3600.0,
        "gpu_hours_lost_preemption": lost_p / 3600.0,
        "gpu_hours_down": r.down_gpu_s / 3600.0,
        "jobs_spanning_leaf_groups": int(multi.sum()),
        "teams": teams,
        "events": int(r.events),
    }
