"""Scheduler queue benchmark (issue 25): jobs replayed per CPU-second at 100,000 synthetic
Philly-like jobs on 10,000 GPUs (load 0.95, topology placement), per policy, with the fast
paths (scan behind the EASY head: plain Python for a tail of up to 256 entries, else one
vector test per try; one-job multifactor keys) and, for the policies they
serve, with the per-entry loop they replace (``fast_fill = False``). Target: multifactor+backfill
>= 20,000 jobs/CPU-s. Same results either way (tests/scheduling/test_fast_paths.py). Prints
figures; asserts nothing."""

from __future__ import annotations

import os
import time

import numpy as np

JOBS = int(os.environ.get("BENCH_SCHED_JOBS", "100000"))
POLICIES = ["fifo", "fifo+backfill", "multifactor", "multifactor+backfill"]


def _run(ws, spec, policy, cfg) -> float:
    from clustertwin.scheduling import simulate

    t0 = time.process_time()
    simulate(ws, spec, policy, cfg)
    return time.process_time() - t0


def main() -> dict[str, float]:
    from clustertwin.scheduling import SimConfig, uniform
    from clustertwin.scheduling.dispatch import Dispatch
    from clustertwin.scheduling.jobs import with_time_limits
    from clustertwin.scheduling.traces import generate

    spec = uniform(1250, 8, nvlink_domain_gpus=8)
    ws = generate("philly", JOBS, spec.gpus, np.random.default_rng(7), load=0.95)
    ws = with_time_limits(ws, np.random.default_rng(0))
    cfg = SimConfig(placement="topology")
    figures: dict[str, float] = {}
    for policy in POLICIES:
        cpu = _run(ws, spec, policy, cfg)
        figures[f"{policy} cpu_s"] = cpu
        line = f"  {policy:<22} {cpu:7.2f} CPU-s {JOBS / cpu:>9,.0f} jobs/CPU-s"
        if "backfill" in policy:
            Dispatch.fast_fill = False
            try:
                slow = _run(ws, spec, policy, cfg)
            finally:
                Dispatch.fast_fill = True
            line += f"   (per-entry loop {slow:6.2f} CPU-s, {JOBS / slow:,.0f} jobs/CPU-s)"
        print(line, flush=True)
    return figures


if __name__ == "__main__":
    main()
