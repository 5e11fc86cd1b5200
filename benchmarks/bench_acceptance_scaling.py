"""How acceptance ``check`` CPU grows with cluster size (issue 25): the ``bench_acceptance``
pipeline (parse every result file, compare the wiring, grade, build check.json) at 1,000,
4,000 and 16,000 nodes, with the growth exponent between sizes (CPU ~ nodes**k; 1.0 is
linear). Sizes can be set with ``BENCH_ACCEPT_SIZES=1000,4000``. Prints figures; asserts
nothing."""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

SIZES = [int(x) for x in os.environ.get("BENCH_ACCEPT_SIZES", "1000,4000,16000").split(",")]


def _pipeline():
    path = Path(__file__).resolve().parent / "bench_acceptance.py"
    spec = importlib.util.spec_from_file_location("bench_acceptance", path)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def exponent(n0: int, c0: float, n1: int, c1: float) -> float:
    """k in c ~ n**k through two (size, cost) points."""
    return math.log(c1 / c0) / math.log(n1 / n0)


def main() -> dict[str, float]:
    bench = _pipeline()
    figures: dict[str, float] = {}
    prev: tuple[int, float] | None = None
    for n in SIZES:
        r = bench.measure(n, quiet=True)
        line = (f"   {n:>6,} nodes: parse {r['parse_s']:6.2f} s + grade {r['grade_s']:6.2f} s wall, "
                f"{r['cpu_s']:6.2f} CPU-s ({r['cpu_s'] / n * 1e3:.2f} ms/node)")
        if prev is not None:
            k = exponent(prev[0], prev[1], n, r["cpu_s"])
            figures[f"exponent_{prev[0]}_{n}"] = k
            line += f"  exponent {k:.2f}"
        print(line, flush=True)
        figures[f"check_{n}_nodes_cpu_s"] = r["cpu_s"]
        prev = (n, r["cpu_s"])
    return figures


if __name__ == "__main__":
    main()
