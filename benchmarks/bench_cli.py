"""End-to-end speed: `clustertwin --help` (< 0.3 s) and `clustertwin plan` on the default
scenario (< 2 s), as a user runs them (a fresh process each time, best of 5)."""

from __future__ import annotations

import subprocess
import sys
import time


def _best(args: list[str], n: int = 5) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "clustertwin.cli", *args], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> dict[str, float]:
    help_s = _best(["--help"])
    plan_s = _best(["plan", "--json"], n=3)
    print(f"   clustertwin --help      {help_s:.3f} s  (target < 0.3 s)")
    print(f"   clustertwin plan --json {plan_s:.3f} s  (target < 2 s, default scenario)")
    return {"help_s": help_s, "plan_s": plan_s}


if __name__ == "__main__":
    main()
