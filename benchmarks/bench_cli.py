"""End-to-end speed as a user sees it (a fresh process each time, process start included):
`clustertwin --help` (< 0.3 s), `clustertwin plan --json` on the default scenario (16,384
H100s; < 0.5 s wall, issue 25) and `clustertwin validate` on it (< 0.3 s wall, issue 25).
Best of n wall-clock runs, and the CPU seconds of the best run (user + system of the child),
which a busy machine inflates less than the wall clock."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[1] / "examples" / "default.yaml"


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _best(args: list[str], n: int = 5) -> tuple[float, float]:
    runs = []
    for _ in range(n):
        c0, t0 = _child_cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-m", "clustertwin.cli", *args], check=True, capture_output=True)
        runs.append((time.perf_counter() - t0, _child_cpu() - c0))
    return min(runs)


def main() -> dict[str, float]:
    figures: dict[str, float] = {}
    for name, args, n, target in (("help", ["--help"], 5, 0.3),
                                  ("plan", ["plan", str(DEFAULT), "--json"], 5, 0.5),
                                  ("validate", ["validate", str(DEFAULT)], 5, 0.3)):
        wall, cpu = _best(args, n)
        figures[f"{name}_s"], figures[f"{name}_cpu_s"] = wall, cpu
        print(f"   clustertwin {' '.join(args[:1]):<9} {wall:.3f} s wall, {cpu:.3f} CPU-s "
              f"(target < {target} s wall)")
    return figures


if __name__ == "__main__":
    main()
