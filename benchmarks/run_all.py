"""Run every benchmark in this folder (``make bench``) and compare with the previous run.

Each ``bench_*.py`` has a ``main()`` that prints its figures and may return a dict
``{name: seconds}``; those are stored in ``benchmarks/.last/NAME.json`` and the next run prints
the change against them. Benchmarks are never part of ``make test``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LAST = HERE / ".last"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def main(argv: list[str]) -> int:
    only = set(argv)
    LAST.mkdir(exist_ok=True)
    failed = 0
    for path in sorted(HERE.glob("bench_*.py")):
        if only and path.stem.removeprefix("bench_") not in only:
            continue
        print(f"== {path.stem}")
        t0 = time.perf_counter()
        try:
            figures = _load(path).main() or {}
        except Exception as exc:  # report and go on with the other benchmarks
            print(f"   FAILED: {type(exc).__name__}: {exc}")
            failed += 1
            continue
        prev_file = LAST / f"{path.stem}.json"
        prev = json.loads(prev_file.read_text()) if prev_file.exists() else {}
        for k, v in figures.items():
            if isinstance(v, int | float) and isinstance(prev.get(k), int | float) and prev[k]:
                print(f"   {k}: {v:.4g} (previous {prev[k]:.4g}, {100 * (v / prev[k] - 1):+.0f}%)")
        prev_file.write_text(json.dumps(figures, indent=1))
        print(f"   ({time.perf_counter() - t0:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
