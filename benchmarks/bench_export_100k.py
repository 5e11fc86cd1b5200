"""Issue 22 target: ``clustertwin export all`` of a 100,000-H100 design (IB NDR, rail-optimized
fat tree, default spares) within 10 s and 1 GiB peak memory, run as the real command in a child
process (wall clock and the child's peak resident memory), with the cabling map's lengths,
media and the vendor BOM included."""

from __future__ import annotations

import copy
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S, TARGET_GIB = 10.0, 1.0


def main() -> dict[str, float]:
    import yaml

    from clustertwin.scenario import DEFAULT_SCENARIO

    doc = copy.deepcopy(yaml.safe_load(DEFAULT_SCENARIO.read_text()))
    doc["cluster"]["gpus"] = 100_000
    with tempfile.TemporaryDirectory() as tmp:
        scen = Path(tmp) / "h100-100k.yaml"
        scen.write_text(yaml.safe_dump(doc))
        cmd = [sys.executable, "-m", "clustertwin.cli", "export", "all", str(scen),
               "--out", str(Path(tmp) / "out")]
        t0 = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        if res.returncode:
            raise RuntimeError(res.stderr.strip().splitlines()[-1] if res.stderr else "failed")
        rows = sum(1 for _ in (Path(tmp) / "out" / "cabling.csv").open()) - 1
    peak_gib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / 2**30
    print(f"export all, 100,000 H100: {wall:.2f} s (target {TARGET_S:g} s), peak "
          f"{peak_gib:.2f} GiB (target {TARGET_GIB:g} GiB), {rows:,} cabling rows")
    return {"export_all_100k_s": wall, "export_all_100k_peak_gib": peak_gib}


if __name__ == "__main__":
    main()
