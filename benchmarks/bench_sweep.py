"""Sweep throughput: a 200-scenario grid (Llama-3-70B on 512-4,096 H100 x 5 cloud prices x 5
restart times, every scenario a whole plan with its 1,000 reliability trials) on 1 and 2 local
workers, with and without the per-worker stage cache (:mod:`clustertwin.sweep.memo`), against
200 separate ``clustertwin plan`` processes (estimated from a few).

The grid's default seeds are per scenario (each point's ``reliability.seed`` drawn from its
coordinates), and the reliability and build-out Monte Carlo read the seed: with the cache only
the training estimate and the design are shared (8 GPU counts), the reliability, economics
and build-out stages run for every point. The same grid with ``seeds: common`` (every point the
base seed) is shown for comparison: the build-out is shared too; the reliability stage still
runs per point since it reads ``restart_min`` and prices the wasted GPU-hours at the swept price.

Targets (issue 12): 2 workers >= 1.6x the scenarios/s of 1 worker; >= 20x faster than one
process per scenario; peak memory < 2 GiB. Every table is checked identical to the uncached
one-worker table of the same seeds.
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


def _timed_sweep(workers: int, cache: bool = True, seeds: str = "per-scenario"):  # noqa: ANN202
    """Wall and CPU seconds of the grid on ``workers``; every run starts with an empty cache
    (this process's, which forked workers would inherit)."""
    from clustertwin.sweep.api import prepare, run_sweep_table
    from clustertwin.sweep.run import Runner, memo
    from clustertwin.sweep.study import build

    sw = build(BASE, GRID, seeds=seeds)
    skip = prepare(sw)
    memo().clear()
    c0 = _cpu()
    t0 = time.perf_counter()
    table = run_sweep_table(sw, Runner("local", workers, cache=cache), skip=skip)
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


def _hits() -> str:
    """Hits / calls per stage of the last one-worker run (this process's cache)."""
    from clustertwin.sweep.run import memo

    m = memo()
    return ", ".join(f"{st} {m.hits[st]}/{m.hits[st] + m.misses[st] + m.uncached[st]}" for st in m.hits)


def main() -> dict[str, float]:
    from clustertwin.sweep.run import plan_row
    from clustertwin.sweep.study import build

    plan_row(build(BASE, GRID).points[0].doc, "warm-up", cache=False)  # imports and catalog, as a long sweep has them
    u1, ucpu1, ref, sw = _timed_sweep(1, cache=False)
    u2, ucpu2, utable2, _ = _timed_sweep(2, cache=False)
    t1, cpu1, table1, _ = _timed_sweep(1)
    hits = _hits()
    t2, cpu2, table2, _ = _timed_sweep(2)
    _, _, common_ref, _ = _timed_sweep(1, cache=False, seeds="common")
    c1, ccpu1, ctable1, _ = _timed_sweep(1, seeds="common")
    common_hits = _hits()
    c2, ccpu2, ctable2, _ = _timed_sweep(2, seeds="common")
    n = len(sw.points)
    errors = sum(e is not None for e in table2.column("error").to_pylist())
    same = all(t.equals(ref, check_metadata=True) for t in (utable2, table1, table2))
    same_common = all(t.equals(common_ref, check_metadata=True) for t in (ctable1, ctable2))
    per_process, per_process_cpu = _process_seconds(sw)
    processes_s = per_process * n
    rss_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    rss_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    peak_gib = rss_self + 2 * rss_child  # parent + two workers at their largest, an upper bound
    print(f"   {n} scenarios ({errors} failed to plan); tables identical with and without the cache, "
          f"on 1 and 2 workers: {same} (per-scenario seeds), {same_common} (common seeds)")
    print(f"   load average now {os.getloadavg()[0]:.1f} (wall-clock figures need two idle cores; "
          "CPU time shows the work itself)")
    print("   per-scenario seeds (the default):")
    _lines(n, "no cache", u1, ucpu1, u2, ucpu2, processes_s, per_process_cpu)
    _lines(n, "cache   ", t1, cpu1, t2, cpu2, processes_s, per_process_cpu)
    print(f"     cache hits/calls, 1 worker: {hits}")
    print("   common seeds (--seeds common):")
    _lines(n, "cache   ", c1, ccpu1, c2, ccpu2, processes_s, per_process_cpu)
    print(f"     cache hits/calls, 1 worker: {common_hits}")
    print(f"   200 `clustertwin plan` processes: {processes_s:.0f} s (estimated from "
          f"{PROCESS_SAMPLES} at {per_process:.2f} s, {per_process_cpu:.2f} s CPU each)")
    print(f"   peak memory: parent {rss_self:.2f} GiB, largest worker {rss_child:.2f} GiB, "
          f"bound {peak_gib:.2f} GiB (target < 2 GiB)")
    return {"cpu_ms_per_scenario": cpu1 / n * 1e3, "cpu_ms_per_scenario_uncached": ucpu1 / n * 1e3,
            "sweep_1_worker_s": t1, "sweep_2_workers_s": t2, "speedup_2_workers": t1 / t2,
            "sweep_1_worker_uncached_s": u1, "sweep_2_workers_uncached_s": u2,
            "vs_processes": processes_s / t2, "vs_processes_uncached": processes_s / u2,
            "vs_processes_common_seeds": processes_s / c2, "peak_gib": peak_gib}


def _lines(n: int, what: str, t1: float, cpu1: float, t2: float, cpu2: float, processes_s: float,
           per_process_cpu: float) -> None:
    print(f"     {what}: 1 worker {t1:5.1f} s ({n / t1:5.1f}/s, {cpu1 / n * 1e3:3.0f} ms CPU each); "
          f"2 workers {t2:5.1f} s ({n / t2:5.1f}/s, {cpu2 / n * 1e3:3.0f} ms CPU each), "
          f"speed-up {t1 / t2:.2f}x (target >= 1.6x), <= {2 * cpu1 / cpu2:.2f}x on two idle cores")
    print(f"     {' ' * len(what)}  vs 200 plan processes: {processes_s / t2:.1f}x by wall clock on 2 workers "
          f"(target >= 20x); by CPU time {per_process_cpu * n / (cpu2 / 2):.1f}x on two idle cores")


if __name__ == "__main__":
    main()
