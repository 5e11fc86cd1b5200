"""``clustertwin plan`` at 1,000,000 GPUs (Llama-3-405B on GB200 NVL72, 1G-token batch): wall
time and peak memory of the whole command (a fresh process: imports included), and the time of
each stage in-process. Target (issue 11): under 5 s and 1 GiB. Prints figures; asserts nothing."""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = """\
name: llama3-405b-1m-gb200
model: {preset: llama3-405b}
training: {tokens: 15.6e12, seq_len: 8192, global_batch_tokens: 1073741824}
cluster:
  gpu: gb200
  node: gb200-nvl72
  gpus: 1000000
  fabric: {technology: ib-xdr}
reliability: {trials: 500}   # scenario.MAX_TRIAL_GPUS allows at most 536 trials at 1M GPUs
"""


def _stages(path: Path) -> dict[str, float]:
    from clustertwin.buildout import plan_buildout
    from clustertwin.catalog import load_catalog
    from clustertwin.design import design
    from clustertwin.economics import economics
    from clustertwin.perf import estimate
    from clustertwin.reliability import analyze
    from clustertwin.scenario import load_scenario

    cat = load_catalog()
    s = load_scenario(path, cat)
    out: dict[str, float] = {}
    t = time.perf_counter()
    est = estimate(s, cat)
    out["training_s"] = time.perf_counter() - t
    t = time.perf_counter()
    des = design(s, cat, est)
    out["design_s"] = time.perf_counter() - t
    t = time.perf_counter()
    rel = analyze(s, cat, est, des)
    out["reliability_s"] = time.perf_counter() - t
    t = time.perf_counter()
    economics(s, cat, est, des, rel)
    out["economics_s"] = time.perf_counter() - t
    t = time.perf_counter()
    plan_buildout(s, cat, des)
    out["buildout_s"] = time.perf_counter() - t
    print(f"plan: {est.gpus:,} of {est.installed_gpus:,} GPUs, MFU {est.mfu:.1%}, "
          f"{est.plans_evaluated:,} plans evaluated")
    return out


def main() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "million.yaml"
        path.write_text(SCENARIO)
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "clustertwin.cli", "plan", str(path), "--json"],
                           capture_output=True, text=True)
        wall = time.perf_counter() - t0
        # ru_maxrss of the children: KiB on Linux
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if r.returncode:
            print(f"plan: failed ({r.returncode}): {r.stderr.strip()[-300:]}")
        print(f"plan: 1,000,000 GPUs end to end {wall:.2f} s (target < 5 s), "
              f"peak memory {peak_mib:,.0f} MiB (target < 1,024 MiB)")
        stages = _stages(path)
    print("plan: stages " + ", ".join(f"{k[:-2]} {v:.2f} s" for k, v in stages.items()))
    return {"plan_1m_s": wall, "plan_1m_peak_mib": peak_mib, **stages}


if __name__ == "__main__":
    main()
