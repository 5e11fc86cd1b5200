"""Cold start (issue 36, item 5): ``clustertwin --help`` <= 0.15 s and ``clustertwin plan --json``
<= 0.5 s wall on a quiet machine.

Each command runs N times in a fresh interpreter (bytecode already compiled), interleaved with
``python -c pass`` (the interpreter's own start) and ``python -c 'import numpy'`` (the floor of
any command that computes); min and median of wall and CPU seconds are printed against the
targets. On a shared machine the CPU seconds, and the ratios to the baselines measured in the
same rounds, are the comparable figures; the load average is printed.

Then one ``python -X importtime`` run of each command, its imports' own time summed by top-level
package (``clustertwin`` by subpackage): where a cold start goes (a ``plan`` whose cloud route
is planned again in a forked child counts the child's few imports after the fork as well).

    python benchmarks/bench_coldstart.py [--runs N] [--against OLD_SRC]

``--against`` puts another checkout's ``src`` folder first on ``PYTHONPATH`` and measures it in
the same rounds, e.g. the commit before the cold-start work::

    git archive 92e71dd src | tar -x -C /tmp/before && python benchmarks/bench_coldstart.py --against /tmp/before/src
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = str(ROOT / "examples" / "default.yaml")
#: command -> (arguments of ``python -m clustertwin.cli``, target wall seconds on a quiet machine)
COMMANDS = {
    "--help": (["--help"], 0.15),
    "plan --json": (["plan", SCENARIO, "--json"], 0.5),
    "plan --help": (["plan", "--help"], None),
}
BASELINES = {"python -c pass": ["-c", "pass"], "import numpy": ["-c", "import numpy"]}


#: a parse cache per source tree (clustertwin.datacache keys entries by the parser's source and
#: keeps one per file: two trees sharing ~/.cache/clustertwin would undo each other's entries)
CACHES: dict[str | None, str] = {}


def _once(args: list[str], src: str | None) -> tuple[float, float]:
    """(wall, CPU seconds) of ``python ARGS`` in a fresh process."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    if src in CACHES:
        env["CLUSTERTWIN_CACHE_DIR"] = CACHES[src]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, *args], env=env, cwd=ROOT, capture_output=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{args} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def _cases(against: str | None) -> dict[str, tuple[list[str], str | None]]:
    cases = {name: (args, None) for name, args in BASELINES.items()}
    for name, (args, _) in COMMANDS.items():
        cases[name] = (["-m", "clustertwin.cli", *args], None)
        if against:
            cases[f"{name} (against)"] = (["-m", "clustertwin.cli", *args], against)
    return cases


def _rounds(runs: int, against: str | None) -> dict[str, list[tuple[float, float]]]:
    """Every case once per round, ``runs`` rounds (interleaved: load changes hit all alike)."""
    cases = _cases(against)
    for args, src in cases.values():  # warm the page cache and the bytecode
        _once(args, src)
    got: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _ in range(runs):
        for name, (args, src) in cases.items():
            got[name].append(_once(args, src))
    return got


def importtime(args: list[str]) -> dict[str, float]:
    """Seconds of own import time by top-level package (clustertwin by subpackage); the second of
    two runs (the first fills the parse cache)."""
    for _ in range(2):
        err = subprocess.run([sys.executable, "-X", "importtime", "-m", "clustertwin.cli", *args],
                             cwd=ROOT, capture_output=True, text=True).stderr
    by: dict[str, float] = defaultdict(float)
    for line in err.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line[len("import time:"):].split("|")
        parts = name.strip().split(".")
        key = ".".join(parts[:2]) if parts[0] == "clustertwin" else parts[0]
        by[key] += int(self_us) / 1e6
    return dict(by)


def _print_importtime(name: str, args: list[str], top: int = 12) -> float:
    by = importtime(args)
    total = sum(by.values())
    ranked = sorted(by.items(), key=lambda kv: -kv[1])
    shown = ", ".join(f"{k} {v * 1e3:.0f}" for k, v in ranked[:top])
    print(f"   imports of {name}: {total * 1e3:.0f} ms under -X importtime; most: {shown} (ms)")
    return total


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description="Cold start of clustertwin --help and plan --json.")
    ap.add_argument("--runs", type=int, default=7, help="rounds (default %(default)s)")
    ap.add_argument("--against", help="another checkout's src folder, measured in the same rounds")
    args = ap.parse_args(argv or [])
    print(f"   load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {args.runs} rounds")
    if args.against:
        # the installed tree's bytecode is compiled at install; an archived checkout has none,
        # and with PYTHONDONTWRITEBYTECODE set it would recompile its source every run
        import compileall

        compileall.compile_dir(args.against, quiet=1)
    with tempfile.TemporaryDirectory(prefix="ct-cold-") as tmp:
        CACHES[None] = f"{tmp}/now"
        if args.against:
            CACHES[args.against] = f"{tmp}/against"
        try:
            got = _rounds(args.runs, args.against)
        finally:
            CACHES.clear()
    base_cpu = min(c for _, c in got["python -c pass"])
    print(f"   {'command':<26} {'wall min':>8} {'median':>7} {'CPU min':>8} {'median':>7} "
          f"{'target':>7}  CPU over python -c pass")
    figures: dict[str, float] = {}
    for name, runs in got.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        target = COMMANDS.get(name.removesuffix(" (against)"), (None, None))[1]
        mark = "" if target is None else f"{target:.2f}" + (" ok" if min(walls) <= target else " over")
        print(f"   {name:<26} {min(walls):8.3f} {statistics.median(walls):7.3f} {min(cpus):8.3f} "
              f"{statistics.median(cpus):7.3f} {mark:>7}  +{min(cpus) - base_cpu:.3f}")
        key = name.replace(" ", "_").replace("-", "").replace("(", "").replace(")", "")
        figures[f"{key}_wall_min_s"] = min(walls)
        figures[f"{key}_cpu_min_s"] = min(cpus)
    if args.against:  # the same rounds: the ratio holds where the machine's speed moves
        for name in COMMANDS:
            now, then = got[name], got[f"{name} (against)"]
            w_now, w_then = [w for w, _ in now], [w for w, _ in then]
            print(f"   {name}: now / against, wall: {min(w_now) / min(w_then):.2f} (least), "
                  f"{statistics.median(w_now) / statistics.median(w_then):.2f} (median)")
    for name, (cmd_args, _) in COMMANDS.items():
        if name != "plan --help":
            figures[f"{name.replace(' ', '_').replace('-', '')}_importtime_s"] = _print_importtime(name, cmd_args)
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
