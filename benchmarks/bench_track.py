"""clustertwin track: reading a multi-GB training log in bounded memory.

Target (issue 35): a 10 GB log read in under 60 s with under 500 MB of memory. The benchmark
writes synthetic Megatron-LM logs of two sizes (iteration lines, a save line every 100
iterations, a restart from the last save every 50,000 lines), reads each in a fresh process
through the tracker's reader and accumulator, and prints the rate, the peak resident memory
and the 10 GB figure extrapolated from the rate (reading is one pass, linear in the size; the
memory is flat in the size, which the two sizes show). Sizes: ``TRACK_BENCH_MB`` (default 1000:
a 250 MB and a 1 GB file).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from clustertwin.track.core import read_history
from clustertwin.track.detect import items, open_log
from clustertwin.track.planview import PlanView
p = Path(sys.argv[1])
pv = PlanView(tokens=1e13, seq_len=2048, batch_tokens=1536 * 2048, gpus=1024, nodes=128, step_time_s=20.0,
              step_time_low_s=17.0, step_time_high_s=24.0, tokens_per_s=1.5e5, mfu=0.5, peak_tflops_per_gpu=312.0,
              days=80.0, effective_days=82.0, ettr=0.97, interruptions_mean=60, interruptions_p5=45,
              interruptions_p95=75, mtbf_h=30.0, restart_min=10.0, checkpoint_interval_min=30.0,
              checkpoint_blocking_s=20.0, min_interval_min=0.5, lost_per_interruption_min=15.0)
import multiprocessing, os, threading
from clustertwin.track.detect import megatron_blocks
workers = int(sys.argv[2])
peak = [0.0]
def pss_mb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("Pss:")) / 1024
    except (OSError, StopIteration):
        return 0.0
def sample():
    while not done.is_set():
        peak[0] = max(peak[0], pss_mb(os.getpid()) + sum(pss_mb(c.pid) for c in multiprocessing.active_children()))
        done.wait(0.05)
done = threading.Event()
threading.Thread(target=sample, daemon=True).start()
w0, c0 = time.perf_counter(), time.process_time()
fmt, st = open_log(p)
h = read_history([(str(p), fmt, megatron_blocks(p, st, workers), st)], pv, None)
w, c = time.perf_counter() - w0, time.process_time() - c0
done.set()
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall_s": w, "cpu_s": c + kids.ru_utime + kids.ru_stime,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "worker_rss_mb": kids.ru_maxrss / 1024, "pss_peak_mb": peak[0], "lines": st.read, "restarts": len(h.restarts)}))
"""

LINE_BYTES = 330  # about one synthetic iteration line


def _measure(path: Path, workers: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(workers)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> dict[str, float]:
    """One process, then a pool of one worker per core (at most WORKERS_MAX): MB per CPU-second
    (the reader's own work, whatever else runs on the machine), wall time, peak memory, and
    the 10 GB figures extrapolated from the larger file."""
    from clustertwin.track.detect import WORKERS_MAX
    from clustertwin.track.synthetic import write_big_log

    big_mb = float(os.environ.get("TRACK_BENCH_MB", "1000"))
    cores = os.cpu_count() or 1
    workers = min(cores, WORKERS_MAX)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (big_mb / 4, big_mb):
            path = Path(tmp) / f"run-{mb:.0f}.log"
            write_big_log(str(path), int(mb * 1e6 / LINE_BYTES))
            size = path.stat().st_size / 1e6
            one = _measure(path, 1)
            pool = _measure(path, workers)
            rate, pool_rate = size / one["cpu_s"], size / pool["cpu_s"]
            mem = pool["pss_peak_mb"] or pool["rss_mb"] + workers * pool["worker_rss_mb"]
            print(f"   {size:,.0f} MB, {one['lines']:,} lines, {one['restarts']} restarts: one process "
                  f"{one['wall_s']:.1f} s wall, {one['cpu_s']:.1f} CPU-s ({rate:,.0f} MB per CPU-s), peak RSS "
                  f"{one['rss_mb']:.0f} MB; {workers} workers {pool['wall_s']:.1f} s wall, {pool['cpu_s']:.1f} CPU-s "
                  f"in all ({pool_rate:,.0f} MB per CPU-s), peak memory {mem:.0f} MB "
                  "(proportional set size of the reader and its workers, sampled every 50 ms)")
            figures[f"read_{mb:.0f}mb_cpu_s"] = one["cpu_s"]
            figures[f"read_{mb:.0f}mb_pool_wall_s"] = pool["wall_s"]
            path.unlink()
    cpu_10gb, pool_cpu_10gb = 10_000 / rate, 10_000 / pool_rate
    print(f"   10 GB extrapolated: {cpu_10gb:.0f} CPU-s in one process; {pool_cpu_10gb:.0f} CPU-s with {workers} "
          f"workers, so {pool_cpu_10gb / workers:.0f} s wall on {workers} free cores (target < 60 s; this run's "
          f"wall {pool['wall_s'] * 10_000 / size:.0f} s scaled); memory flat in the size: one process "
          f"~{one['rss_mb']:.0f} MB, pooled {mem:.0f} MB (target < 500 MB). This machine: {cores} cores, "
          f"load {os.getloadavg()[0]:.1f}.")
    figures["read_10gb_cpu_s"] = cpu_10gb
    figures["read_10gb_pool_wall_s_free_cores"] = pool_cpu_10gb / workers
    return figures


if __name__ == "__main__":
    main()
