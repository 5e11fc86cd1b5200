"""Synthetic workloads that follow a trace's published statistics, scaled to any cluster.

Job sizes come from the profile's GPU mix (sizes above the cluster are capped at the largest
power of two that fits), durations from a lognormal with the profile's median and mean (capped
at its maximum), QoS from its mix, teams uniformly from ``teams`` names. Arrivals are Poisson
with the rate that offers ``load`` x cluster GPUs of work:
rate = load x GPUs / mean(GPUs x min(duration, window / 2)), with the window the arrival span:
with heavy-tailed durations most of a long job's work falls after the last arrival, so the
plain mean would leave the cluster under-loaded while jobs arrive.
"""

from __future__ import annotations

import numpy as np

from clustertwin.scheduling.jobs import QOS_LEVELS, TraceReport, Workload, make_workload
from clustertwin.scheduling.traces.common import lognormal_sample, profile


def generate(profile_name: str, jobs: int, cluster_gpus: int, rng: np.random.Generator, *,
             load: float = 0.9, teams: int = 4, max_node_gpus: int = 8) -> Workload:
    prof = profile(profile_name)
    mix = {int(k): float(v) for k, v in prof["gpu_mix"].items()}
    sizes = np.array(sorted(mix))
    p = np.array([mix[s] for s in sizes])
    g = rng.choice(sizes, size=jobs, p=p / p.sum()).astype(np.int64)
    cap = 1 << int(np.floor(np.log2(max(cluster_gpus, 1))))
    g = np.minimum(g, cap)
    # multi-node jobs must be whole nodes of this cluster
    big = g > max_node_gpus
    g[big] = np.ceil(g[big] / max_node_gpus).astype(np.int64) * max_node_gpus
    milli = g * 1000
    frac = float(prof.get("fraction_share", 0.0))
    if frac > 0:
        one = np.flatnonzero(g == 1)
        part = one[rng.random(one.size) < frac / max(mix.get(1, 1.0), 1e-9)]
        milli[part] = (rng.integers(2, 19, size=part.size) * 50).astype(np.int64)
    dur = lognormal_sample(rng, jobs, prof["run_median_s"], prof["run_mean_s"], prof["run_max_s"])
    dur = np.maximum(dur, 1.0)
    gpus = milli / 1000.0
    rate = load * cluster_gpus / max(float(np.mean(gpus) * np.mean(dur)), 1e-9)
    for _ in range(5):  # count only work that falls inside the arrival window (heavy tails)
        span = jobs / rate
        work = float(np.mean(gpus * np.minimum(dur, span / 2)))
        rate = load * cluster_gpus / max(work, 1e-9)
    submit = np.cumsum(rng.exponential(1.0 / rate, size=jobs))
    submit -= submit[0]
    qmix = prof.get("qos_mix", {"normal": 1.0})
    qnames = list(qmix)
    qp = np.array([float(qmix[k]) for k in qnames])
    qidx = rng.choice(len(qnames), size=jobs, p=qp / qp.sum())
    qos = np.array([QOS_LEVELS.get(qnames[i], 1) for i in range(len(qnames))])[qidx]
    tnames = [f"team{i}" for i in range(max(1, teams))]
    team = [tnames[i] for i in rng.integers(len(tnames), size=jobs)]
    notes = (f"synthetic from profile {profile_name!r}: sizes {prof['gpu_mix_source']}; "
             f"durations {prof['run_source']}; load {load:g} of {cluster_gpus} GPUs",)
    rep = TraceReport(f"synthetic:{profile_name}", jobs, jobs, notes=notes)
    names = [f"s{i}" for i in range(jobs)]
    return make_workload(names, submit, milli, dur, teams=team, qos=qos, report=rep)
