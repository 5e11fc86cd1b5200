"""Scheduling benchmark: replay speed per policy on the openb trace and on 100,000 synthetic
jobs over a 10,000-GPU cluster, plus peak memory. Targets (issue 7): openb < 5 s per policy,
100 k synthetic < 30 s per policy, memory < 2 GiB. Prints figures; asserts nothing."""

from __future__ import annotations

import resource
import sys
import time

import numpy as np

POLICIES = ["fifo", "fifo+backfill", "sjf+backfill", "sjf-oracle", "priority+preempt",
            "multifactor+backfill"]


def _row(label: str, policy: str, jobs: int, wall: float, m: dict) -> None:
    print(f"{label:<34} {policy:<24} {wall:7.2f} s {jobs / wall:>10,.0f} jobs/s  "
          f"JCT {m['jct_s']['mean']:>10,.0f} s  wait {m['queue_delay_s']['mean']:>10,.0f} s  "
          f"util {m['gpu_util_allocated']:.1%} (while arriving {m['gpu_util_arrivals']:.1%})")


def main() -> None:
    from clustertwin.scheduling import SimConfig, load_cluster, pooled, schedule, uniform
    from clustertwin.scheduling.jobs import with_time_limits
    from clustertwin.scheduling.traces import generate, load_trace
    from clustertwin.scheduling.traces.locate import find_file
    from clustertwin.scheduling.traces.openb import load_openb, pai_sim_input

    tr = find_file("alibaba-gpu-v2023-openb/openb_pod_list_default.csv")  # packaged
    if tr is None:
        print("openb not found (an incomplete install): openb rows skipped")
    else:
        t0 = time.perf_counter()
        w = load_trace("openb")
        print(f"openb load: {time.perf_counter() - t0:.2f} s, {w.report.rows_read} rows, "
              f"{len(w)} GPU jobs")
        spec = load_cluster(str(find_file("alibaba-gpu-v2023-openb/openb_node_list_gpu_node.csv")))
        res = schedule(w, spec, POLICIES)
        for r in res.runs:
            _row("openb on its 1,213 nodes", r.policy, len(w), r.wall_s, r.metrics)
        base = load_openb(tr,
                          cpu_only="keep", max_duration_s=7 * 86400)
        for jobs, gpus in ((7000, 6500), (2000, 256), (7000, 64)):
            wp = with_time_limits(pai_sim_input(base, jobs), np.random.default_rng(0))
            res = schedule(wp, pooled(gpus), ["fifo+greedy", "sjf-oracle+greedy"],
                           SimConfig(scan_depth=None))
            for r in res.runs:
                _row(f"openb PAI input {jobs} jobs/{gpus} GPUs", r.policy, jobs, r.wall_s,
                     r.metrics)
    rng = np.random.default_rng(7)
    spec = uniform(1250, 8, nvlink_domain_gpus=8)
    ws = generate("philly", 100_000, spec.gpus, rng, load=0.95)
    for pol in POLICIES:
        res = schedule(ws, spec, [pol], SimConfig(placement="topology"))
        r = res.runs[0]
        _row("synthetic 100k jobs / 10,000 GPUs", r.policy, len(ws), r.wall_s, r.metrics)
        sys.stdout.flush()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"peak memory: {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
