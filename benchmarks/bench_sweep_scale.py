"""Sweeps at scale (issue 36): a streamed sweep of 10,000 points on the local process pool (2
workers) and on a two-node Ray cluster started here (a head and a worker
node with ``ray start`` on this host, one CPU each, token authentication on, object stores
capped at 80 MB), each into Parquet parts then one ``sweep.parquet``.

Prints wall and CPU seconds, points/s, the points each Ray node computed, the driver's peak
memory (target <= 1 GiB whatever the count: the driver holds one window of points and one part
of rows at a time) and whether the two files hold the same rows. Asserts nothing.

The base is Llama-3-8B on 64-512 H100 with 100 reliability trials: a cheap plan, so the
figures show the sweep machinery (streaming, batching, the executors) more than the stages.

    python benchmarks/bench_sweep_scale.py [--points N] [--no-local] [--no-ray]

``--points`` (default 10,000, or ``$BENCH_SCALE_POINTS``) is rounded to the grid: 80 x
ceil(N / 80) points. 10,000 points take about half an hour on two cores; check the script
with a few hundred first.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POINTS = int(os.environ.get("BENCH_SCALE_POINTS", "10000"))  # run_all.py: no arguments
BASE = {
    "schema_version": 1, "name": "scale",
    "model": {"preset": "llama3-8b"},
    "training": {"tokens": 1e11, "seq_len": 8192, "global_batch_tokens": 4194304},
    "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": 64},
    "reliability": {"trials": 100, "seed": 7},
    "buildout": {"profile": "existing-facility"},
}
RAY = Path(sys.executable).with_name("ray")


def _grid(n: int) -> dict[str, list]:
    """80 x ceil(n / 80) points: 8 sizes x 10 restart times x prices."""
    prices = max(1, math.ceil(n / (8 * 10)))
    return {"cluster.gpus": [64 * k for k in range(1, 9)],
            "reliability.restart_min": list(range(5, 55, 5)),
            "economics.cloud_usd_per_gpu_hour": [round(2.0 + 0.01 * i, 2) for i in range(prices)]}


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _run(executor: str, out: Path, points: int, address: str | None = None) -> tuple[float, float, object]:
    from clustertwin.sweep.run import Runner
    from clustertwin.sweep.runlog import RunLog
    from clustertwin.sweep.stream import PARTS, join_parts, stream_sweep
    from clustertwin.sweep.study import build

    sw = build(BASE, _grid(points), lazy=True, max_points=10**8)
    log = RunLog(executor)
    c0, t0 = _cpu(), time.perf_counter()
    stream_sweep(sw, out, Runner(executor, 2 if executor == "local" else None, address, log=log))
    join_parts(out / PARTS, out / "sweep.parquet")
    log.finish()
    (out / "run.json").write_text(log.to_json())
    return time.perf_counter() - t0, _cpu() - c0, log


def _start_cluster(tmp: str, env: dict) -> tuple[str, list[subprocess.Popen]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1",
              f"--object-store-memory={80 * 1024 * 1024}", "--disable-usage-stats"]
    procs = [subprocess.Popen([str(RAY), "start", "--head", f"--port={port}", "--include-dashboard=false",
                               f"--temp-dir={tmp}", *common], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)]
    for _ in range(200):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.3)
    procs.append(subprocess.Popen([str(RAY), "start", f"--address=127.0.0.1:{port}", *common], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for _ in range(60):
        out = subprocess.run([str(RAY), "status", f"--address=127.0.0.1:{port}"], env=env,
                             capture_output=True, text=True).stdout
        if "/2.0 CPU" in out:
            return f"127.0.0.1:{port}", procs
        time.sleep(1.0)
    _stop(procs, tmp)
    raise RuntimeError("the two-node Ray cluster did not come up (ray status never showed 2 CPUs)")


def _stop(procs: list[subprocess.Popen], tmp: str) -> None:
    for p in reversed(procs):
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
    for entry in Path("/proc").iterdir():  # anything the raylets left behind (ours only)
        try:
            if entry.name.isdigit() and tmp.encode() in (entry / "cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)
        except OSError:
            continue


def _same(a: Path, b: Path) -> bool:
    import pyarrow.parquet as pq

    ta, tb = pq.read_table(a).sort_by("index"), pq.read_table(b).sort_by("index")
    return ta.column_names == tb.column_names and all(
        ta.column(c).to_pylist() == tb.column(c).to_pylist() for c in ta.column_names)


def _local(tmp: str, points: int) -> dict[str, float]:
    wall, cpu, log = _run("local", Path(tmp) / "local", points)
    n = sum(log.points_by_node.values())
    print(f"   {n:,} points, local pool (2 workers): {wall:6.1f} s wall ({n / wall:5.1f}/s), "
          f"{cpu:6.1f} CPU-s ({cpu / n * 1e3:4.0f} ms/point)")
    return {"points": n, "local_wall_s": wall, "local_cpu_s": cpu, "local_cpu_ms_per_point": cpu / n * 1e3}


def _ray(tmp: str, points: int) -> dict[str, float]:
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "RAY_USAGE_STATS_ENABLED": "0"}
    os.environ.update({k: env[k] for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")})
    try:
        address, procs = _start_cluster(tmp, env)
        try:
            wall, driver_cpu, log = _run("ray", Path(tmp) / "ray", points, address)
        finally:
            _stop(procs, tmp)
    finally:
        for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"):
            os.environ.pop(k, None)
    n = sum(log.points_by_node.values())
    per_node = ", ".join(f"{c:,}" for c in log.points_by_node.values())
    print(f"   {n:,} points, Ray 2 nodes x 1 CPU:    {wall:6.1f} s wall ({n / wall:5.1f}/s), "
          f"driver {driver_cpu:5.1f} CPU-s + workers {log.worker_cpu_s:6.1f} CPU-s "
          f"({log.worker_cpu_s / n * 1e3:4.0f} ms/point); {len(log.points_by_node)} nodes used, "
          f"points per node {per_node}; retries {len(log.retried)}")
    return {"ray_wall_s": wall, "ray_driver_cpu_s": driver_cpu, "ray_worker_cpu_s": log.worker_cpu_s,
            "ray_worker_cpu_ms_per_point": log.worker_cpu_s / n * 1e3,
            "ray_nodes_used": len(log.points_by_node)}


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description="A streamed sweep on the local pool and on a two-node Ray cluster.")
    ap.add_argument("--points", type=int, default=POINTS, help="sweep size (default %(default)s)")
    ap.add_argument("--no-local", action="store_true", help="skip the local-pool run")
    ap.add_argument("--no-ray", action="store_true", help="skip the two-node Ray run")
    args = ap.parse_args(argv or [])
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ct-scale-", dir="/tmp") as tmp:
        if not args.no_local:
            figures.update(_local(tmp, args.points))
        if args.no_ray:
            pass
        elif not RAY.exists():
            print("   Ray not installed: the two-node run is skipped")
        else:
            figures.update(_ray(tmp, args.points))
            if "local_wall_s" in figures:
                same = _same(Path(tmp) / "local" / "sweep.parquet", Path(tmp) / "ray" / "sweep.parquet")
                print(f"   same rows in both files: {same}; Ray / local wall "
                      f"{figures['ray_wall_s'] / figures['local_wall_s']:.2f}x, worker CPU per point "
                      f"{figures['ray_worker_cpu_ms_per_point'] / figures['local_cpu_ms_per_point']:.2f}x")
                figures["same_rows"] = float(same)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"   driver peak memory {rss:.2f} GiB (target <= 1 GiB)")
    figures["driver_peak_gib"] = rss
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
