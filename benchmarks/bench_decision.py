"""``clustertwin plan`` at 100,000 H100 with the decision stage (issue 21): wall time of the
whole command (a fresh process, imports included) and of the decision stage in-process.
Target: the plan under 1.5 s at 100K GPUs; the decision stage a small part of it. Also the route
Monte Carlo (issue 38) on the default scenario: the decision stage with its default samples
minus the stage without it (target <= 0.3 s). And the decision stage's own CPU per point of
``bench_sweep``'s grid (issue 36: a sweep point <= 60 ms CPU in all): its 8 GPU counts of
Llama-3-70B, the cloud route's re-plan at its GPU cap left out (that is the other stages' work).
Prints figures; asserts nothing."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = """\
name: llama3-405b-100k-h100-decision
model: {preset: llama3-405b}
training: {tokens: 60e12, seq_len: 8192, global_batch_tokens: 33554432}
cluster: {gpu: h100-sxm-80gb, node: hgx-h100-liquid-4u, gpus: 100000}
buildout: {start_date: 2027-01-05}
decision: {target_date: 2028-06-30}
"""


def _decision_s(path: Path, repeat: int = 20) -> float:
    from clustertwin.catalog import load_catalog
    from clustertwin.decision import decide
    from clustertwin.decision.inputs import Upstream
    from clustertwin.plan import make_plan
    from clustertwin.scenario import load_scenario

    cat = load_catalog()
    s = load_scenario(path, cat)
    p = make_plan(s, cat)
    t = time.perf_counter()
    for _ in range(repeat):
        decide(s, cat, Upstream(p.training, p.design, p.reliability, p.economics, p.buildout))
    print(f"decision: {p.decision.headline()}")
    return (time.perf_counter() - t) / repeat


def _monte_carlo_s(repeat: int = 5) -> float:
    """Seconds the route Monte Carlo adds to the decision stage on the default scenario."""
    from clustertwin.catalog import load_catalog
    from clustertwin.decision import decide
    from clustertwin.decision.inputs import Upstream
    from clustertwin.plan import make_plan
    from clustertwin.scenario import DEFAULT_SCENARIO, load_scenario, with_updates

    cat = load_catalog()
    s = load_scenario(DEFAULT_SCENARIO, cat)
    off = with_updates(s, decision={"uncertainty": {"samples": 0}})
    p = make_plan(s, cat)
    args = (cat, Upstream(p.training, p.design, p.reliability, p.economics, p.buildout))
    times = []
    for scenario in (s, off):
        t = time.perf_counter()
        for _ in range(repeat):
            decide(scenario, *args)
        times.append((time.perf_counter() - t) / repeat)
    print(f"route Monte Carlo: {s.decision.uncertainty.samples:,} draws, {1e3 * (times[0] - times[1]):.0f} ms "
          f"(target <= 300 ms); {p.decision.headline()}")
    return times[0] - times[1]


def _grid_point_ms(repeat: int = 7) -> float:
    """CPU milliseconds of ``decide`` (route Monte Carlo included, no re-plan) per GPU count of
    bench_sweep's grid, the least of ``repeat`` passes (the machine may be shared)."""
    from clustertwin.catalog import load_catalog
    from clustertwin.decision import decide
    from clustertwin.decision.inputs import Upstream
    from clustertwin.plan import make_plan
    from clustertwin.scenario import scenario_from_dict

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_sweep import BASE, GRID

    cat = load_catalog()
    calls = []
    for gpus in GRID["cluster.gpus"]:
        s = scenario_from_dict({**BASE, "cluster": {**BASE["cluster"], "gpus": gpus}}, "grid.yaml", cat)
        p = make_plan(s, cat)
        calls.append((s, Upstream(p.training, p.design, p.reliability, p.economics, p.buildout)))
    passes = []
    for _ in range(repeat):
        t = time.process_time()
        for s, up in calls:
            decide(s, cat, up)
        passes.append((time.process_time() - t) / len(calls))
    ms = 1e3 * min(passes)
    print(f"decision stage per bench_sweep grid point: {ms:.2f} ms CPU ({len(calls)} GPU counts, "
          f"{BASE['model']['preset']}; no cloud re-plan)")
    return ms


def main() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "100k.yaml"
        path.write_text(SCENARIO)
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "clustertwin.cli", "plan", str(path), "--json"],
                           capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if r.returncode:
            print(f"plan: failed ({r.returncode}): {r.stderr.strip()[-300:]}")
        stage = _decision_s(path)
    mc = _monte_carlo_s()
    grid_ms = _grid_point_ms()
    print(f"plan: 100,000 GPUs end to end {wall:.2f} s (target < 1.5 s); decision stage {1e3 * stage:.1f} ms")
    return {"plan_100k_s": wall, "decision_stage_s": stage, "route_monte_carlo_s": mc,
            "decision_grid_point_s": grid_ms / 1e3}


if __name__ == "__main__":
    main()
