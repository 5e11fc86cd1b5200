"""Sweeps at scale (issue 36): a streamed sweep of 10,000 points (``BENCH_SCALE_POINTS``) on the
local process pool (2 workers) and on a two-node Ray cluster started here (a head and a worker
node with ``ray start`` on this host, one CPU each, token authentication on, object stores
capped at 80 MB), each into Parquet parts then one ``sweep.parquet``.

Prints wall and CPU seconds, points/s, the points each Ray node computed, the driver's peak
memory (target <= 1 GiB whatever the count: the driver holds one window of points and one part
of rows at a time) and whether the two files hold the same rows. Asserts nothing.

The base is Llama-3-8B on 64-512 H100 with 100 reliability trials: a cheap plan, so the
figures show the sweep machinery (streaming, batching, the executors) more than the stages.
"""

from __future__ import annotations

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

POINTS = int(os.environ.get("BENCH_SCALE_POINTS", "10000"))
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
    """About ``n`` points: 8 sizes x restart times x prices."""
    prices = max(1, n // (8 * 10))
    return {"cluster.gpus": [64 * k for k in range(1, 9)],
            "reliability.restart_min": list(range(5, 55, 5)),
            "economics.cloud_usd_per_gpu_hour": [round(2.0 + 0.01 * i, 2) for i in range(prices)]}


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _run(executor: str, out: Path, address: str | None = None) -> tuple[float, float, object]:
    from clustertwin.sweep.run import Runner
    from clustertwin.sweep.runlog import RunLog
    from clustertwin.sweep.stream import PARTS, join_parts, stream_sweep
    from clustertwin.sweep.study import build

    sw = build(BASE, _grid(POINTS), lazy=True, max_points=10**8)
    log = RunLog(executor)
    c0, t0 = _cpu(), time.perf_counter()
    stream_sweep(sw, out, Runner(executor, 2 if executor == "local" else None, address, log=log))
    join_parts(out / PARTS, out / "sweep.parquet")
    log.finish()
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
            break
        time.sleep(1.0)
    return f"127.0.0.1:{port}", procs


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


def main() -> dict[str, float]:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ct-scale-", dir="/tmp") as tmp:
        wall, cpu, log = _run("local", Path(tmp) / "local")
        n = sum(log.points_by_node.values())
        print(f"   {n:,} points, local pool (2 workers): {wall:6.1f} s wall ({n / wall:5.1f}/s), "
              f"{cpu:6.1f} CPU-s ({cpu / n * 1e3:4.0f} ms/point)")
        figures.update({"local_wall_s": wall, "local_cpu_s": cpu})
        have_ray = RAY.exists()
        if have_ray:
            env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
                   "RAY_USAGE_STATS_ENABLED": "0"}
            os.environ.update({k: env[k] for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")})
            address, procs = _start_cluster(tmp, env)
            try:
                wall_r, cpu_r, log_r = _run("ray", Path(tmp) / "ray", address)
            finally:
                _stop(procs, tmp)
                for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"):
                    os.environ.pop(k, None)
            per_node = ", ".join(f"{c:,}" for c in log_r.points_by_node.values())
            print(f"   {n:,} points, Ray 2 nodes x 1 CPU:    {wall_r:6.1f} s wall ({n / wall_r:5.1f}/s), "
                  f"driver {cpu_r:5.1f} CPU-s + workers {log_r.worker_cpu_s:6.1f} CPU-s; "
                  f"points per node {per_node}; retries {len(log_r.retried)}")
            print(f"   same rows in both files: {_same(Path(tmp) / 'local' / 'sweep.parquet', Path(tmp) / 'ray' / 'sweep.parquet')}")
            figures.update({"ray_wall_s": wall_r, "ray_worker_cpu_s": log_r.worker_cpu_s})
        else:
            print("   Ray not installed: the two-node run is skipped")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"   driver peak memory {rss:.2f} GiB (target <= 1 GiB)")
    figures["driver_peak_gib"] = rss
    return figures


if __name__ == "__main__":
    main()
