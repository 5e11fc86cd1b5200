"""End-to-end speed as a user sees it (a fresh process each time, process start included):
`clustertwin --help` (< 0.3 s), `clustertwin plan --json` on the default scenario (16,384
H100s; < 0.5 s wall, issue 25) and `clustertwin validate` on it (< 0.3 s wall, issue 25).

Each command runs once first (it writes the byte-code and the parse cache of the packaged YAML,
as a user's first run does), then best of n wall-clock runs, with the CPU seconds of the best
run (user + system of the child; a busy machine inflates them less than the wall clock).
`plan` and `validate` are also timed with the parse cache off (`CLUSTERTWIN_CACHE_DIR=off`).

``python benchmarks/bench_cli.py [--src DIR]`` times the package under ``DIR`` (another
checkout's ``src``, to compare two versions back to back on one machine)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[1] / "examples" / "default.yaml"


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _best(args: list[str], env: dict[str, str], n: int = 5) -> tuple[float, float]:
    cmd = [sys.executable, "-m", "clustertwin.cli", *args]
    subprocess.run(cmd, check=True, capture_output=True, env=env)  # byte-code and cache written
    runs = []
    for _ in range(n):
        c0, t0 = _child_cpu(), time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        runs.append((time.perf_counter() - t0, _child_cpu() - c0))
    return min(runs)


def main(argv: list[str] | None = None) -> dict[str, float]:
    argv = list(sys.argv[1:] if argv is None else argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if "--src" in argv:
        env["PYTHONPATH"] = str(Path(argv[argv.index("--src") + 1]).resolve())
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cache:
        cases = (("help", ["--help"], 0.3, cache),
                 ("plan", ["plan", str(DEFAULT), "--json"], 0.5, cache),
                 ("validate", ["validate", str(DEFAULT)], 0.3, cache),
                 ("plan_nocache", ["plan", str(DEFAULT), "--json"], 0.5, "off"),
                 ("validate_nocache", ["validate", str(DEFAULT)], 0.3, "off"))
        for name, args, target, folder in cases:
            wall, cpu = _best(args, {**env, "CLUSTERTWIN_CACHE_DIR": folder})
            figures[f"{name}_s"], figures[f"{name}_cpu_s"] = wall, cpu
            print(f"   clustertwin {name:<17} {wall:.3f} s wall, {cpu:.3f} CPU-s "
                  f"(target < {target} s wall)")
    return figures


if __name__ == "__main__":
    main()
