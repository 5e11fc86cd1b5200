"""Sweep throughput: a 200-scenario grid (Llama-3-70B on 512-4,096 H100 x 5 cloud prices x 5
restart times, every scenario a whole plan with its 1,000 reliability trials) on 1 and 2 local
workers, against 200 separate ``clustertwin plan`` processes (estimated from a few).

Targets (issue 12): 2 workers >= 1.6x the scenarios/s of 1 worker; >= 20x faster than one
process per scenario; peak memory < 2 GiB.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BASE = {
    "schema_version": 1, "name": "bench-70b",
    "model": {"preset": "llama3-70b"},
    "training": {"tokens": 2e12, "seq_len": 8192, "global_batch_tokens": 8388608},
    "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": 1024},
    "reliability": {"trials": 1000, "seed": 0},
}
GRID = {
    "cluster.gpus": list(range(512, 4097, 512)),
    "economics.cloud_usd_per_gpu_hour": [2.0, 2.5, 3.0, 3.5, 4.0],
    "reliability.restart_min": [5, 10, 20, 40, 60],
}
PROCESS_SAMPLES = 5


def _timed_sweep(workers: int):  # noqa: ANN202
    from clustertwin.sweep.api import prepare, run_sweep_table
    from clustertwin.sweep.study import build

    sw = build(BASE, GRID)
    skip = prepare(sw)
    c0 = _cpu()
    t0 = time.perf_counter()
    table = run_sweep_table(sw, "local", workers, skip=skip)
    return time.perf_counter() - t0, _cpu() - c0, table, sw


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the pool's workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _process_seconds(sw) -> tuple[float, float]:  # noqa: ANN001
    """Mean wall and CPU time of ``clustertwin plan --json`` on a few of the grid's scenarios."""
    times, cpus = [], []
    step = max(1, len(sw.points) // PROCESS_SAMPLES)
    with tempfile.TemporaryDirectory() as tmp:
        for p in sw.points[::step][:PROCESS_SAMPLES]:
            path = Path(tmp) / f"p{p.index}.yaml"
            path.write_text(yaml.safe_dump(p.doc))
            c0, t0 = _cpu(), time.perf_counter()
            subprocess.run([sys.executable, "-m", "clustertwin.cli", "plan", "--json", str(path)],
                           check=True, capture_output=True, cwd=ROOT)
            times.append(time.perf_counter() - t0)
            cpus.append(_cpu() - c0)
    return statistics.mean(times), statistics.mean(cpus)


def main() -> dict[str, float]:
    from clustertwin.sweep.run import plan_row
    from clustertwin.sweep.study import build

    plan_row(build(BASE, GRID).points[0].doc, "warm-up")  # imports and catalog, as a long sweep has them
    t1, cpu1, table1, sw = _timed_sweep(1)
    t2, cpu2, table2, _ = _timed_sweep(2)
    n = len(sw.points)
    errors = sum(e is not None for e in table2.column("error").to_pylist())
    same = table1.equals(table2, check_metadata=True)
    per_process, per_process_cpu = _process_seconds(sw)
    processes_s = per_process * n
    rss_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    rss_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    peak_gib = rss_self + 2 * rss_child  # parent + two workers at their largest, an upper bound
    print(f"   {n} scenarios ({errors} failed to plan), tables identical on 1 and 2 workers: {same}")
    print(f"   1 worker : {t1:6.1f} s  {n / t1:6.2f} scenarios/s")
    print(f"   2 workers: {t2:6.1f} s  {n / t2:6.2f} scenarios/s  speed-up {t1 / t2:.2f}x (target >= 1.6x)")
    # wall-clock figures need two idle cores; CPU time shows what the pool itself costs
    print(f"   CPU per scenario: {cpu1 / n * 1e3:.0f} ms on 1 worker, {cpu2 / n * 1e3:.0f} ms on 2; "
          f"speed-up on two idle cores <= {2 * cpu1 / cpu2:.2f}x; load average now {os.getloadavg()[0]:.1f}")
    print(f"   200 `clustertwin plan` processes: {processes_s:.0f} s (estimated from "
          f"{PROCESS_SAMPLES} at {per_process:.2f} s each); sweep is {processes_s / t2:.1f}x faster (target >= 20x)")
    print(f"   by CPU time: a plan process costs {per_process_cpu:.2f} s, a sweep scenario {cpu2 / n:.3f} s; "
          f"on two idle cores the sweep is <= {per_process_cpu * n / (cpu2 / 2):.1f}x faster than serial processes")
    print(f"   peak memory: parent {rss_self:.2f} GiB, largest worker {rss_child:.2f} GiB, "
          f"bound {peak_gib:.2f} GiB (target < 2 GiB)")
    return {"cpu_ms_per_scenario": cpu1 / n * 1e3, "sweep_1_worker_s": t1, "sweep_2_workers_s": t2, "speedup_2_workers": t1 / t2,
            "vs_processes": processes_s / t2, "peak_gib": peak_gib}


if __name__ == "__main__":
    main()
