"""`clustertwin serve`: start-up (< 3 s, until the API answers), and POST /api/plan on the
default 16,384-GPU scenario: first (cold stages), warm (a new scenario: a different seed, not
in the cache; < 300 ms) and repeated (from the cache; < 50 ms). Medians of several requests,
timed by the client over loopback HTTP."""

from __future__ import annotations

import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start() -> tuple[subprocess.Popen, str, float]:
    port = _port()
    base = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "clustertwin.cli", "serve", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        try:
            with urllib.request.urlopen(base + "/api/catalog", timeout=5) as r:
                r.read()
            return proc, base, time.perf_counter() - t0
        except OSError:
            if proc.poll() is not None or time.perf_counter() - t0 > 60:
                proc.kill()
                raise RuntimeError("clustertwin serve did not start") from None
            time.sleep(0.01)


def _post(base: str, doc: dict) -> float:
    req = urllib.request.Request(base + "/api/plan", data=json.dumps(doc).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as r:
        r.read()
    return time.perf_counter() - t0


def _in_process(doc: dict) -> tuple[float, float]:
    """Warm new-scenario plans in this process: (median wall s, median CPU s of the thread).
    The CPU time is the figure that a machine shared with other work does not inflate."""
    from clustertwin.serve.engine import Engine

    engine = Engine()
    engine.plan(doc)
    wall, cpu = [], []
    for seed in range(101, 106):
        d = json.loads(json.dumps(doc))
        d["reliability"]["seed"] = seed
        t0, c0 = time.perf_counter(), time.thread_time()
        engine.plan(d)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def main() -> dict[str, float]:
    from clustertwin.io import read_document
    from clustertwin.scenario import DEFAULT_SCENARIO

    doc = json.loads(json.dumps(read_document(DEFAULT_SCENARIO), default=str))
    starts = []
    for _ in range(3):
        proc, base, start_s = _start()
        starts.append(start_s)
        if len(starts) < 3:
            proc.terminate()
            proc.wait()
    try:
        first = _post(base, doc)
        warm = []
        for seed in range(1, 8):
            doc["reliability"]["seed"] = seed
            warm.append(_post(base, doc))
        cached = [_post(base, doc) for _ in range(10)]
    finally:
        proc.terminate()
        proc.wait()
    figures = {"start_s": min(starts), "first_plan_s": first, "warm_plan_s": statistics.median(warm),
               "cached_plan_s": statistics.median(cached)}
    figures["warm_plan_wall_in_process_s"], figures["warm_plan_cpu_s"] = _in_process(doc)
    print(f"   serve start-up (API answers)     {figures['start_s']:.3f} s  (target < 3 s, best of 3)")
    print(f"   POST /api/plan first, 16,384 GPUs {first * 1e3:.0f} ms")
    print(f"   POST /api/plan warm, new scenario {figures['warm_plan_s'] * 1e3:.0f} ms  (target < 300 ms, median of 7)")
    print(f"   POST /api/plan repeated (cache)   {figures['cached_plan_s'] * 1e3:.1f} ms  (target < 50 ms, median of 10)")
    print(f"   warm plan in process: {figures['warm_plan_wall_in_process_s'] * 1e3:.0f} ms wall, "
          f"{figures['warm_plan_cpu_s'] * 1e3:.0f} ms CPU (the thread's own time)")
    return figures


if __name__ == "__main__":
    main()
