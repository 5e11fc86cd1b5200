"""Speed of the reliability stage: whole ``analyze`` calls (interval search + main Monte Carlo)
and the Monte Carlo core alone, on synthetic inputs (no other stage involved).

Targets (issue 5): 1,000 trials of a 16,384-GPU, 54-day run under 1 s; 1,000 trials of a
100,000-GPU, 90-day run under 5 s. Measured for the single-tier default and for a two-tier
schedule (local tier with a peer copy, both intervals searched).

Issue 25 (cold start): the stage on ``examples/default.yaml`` (16,384 H100s, its own design)
in CPU seconds per warm call, target <= 0.08 s, and the single-tier Monte Carlo against the
event-by-event reference it must match bit for bit (``simulate_events``). Issue 25 follow-up:
the same figure for a two-tier variant of the example (``local_checkpoint_interval_min: auto``),
whose Monte Carlo must match the masked event loop bit for bit.

Issue 36 (item 5: ``plan --json`` on the default scenario): the reliability stage runs twice per
plan (the plan and the cloud route's re-plan); :func:`issue36_stage` prints a warm ``analyze``
on ``examples/default.yaml``, its two Monte Carlo calls and a warm ``make_plan`` beside the
figures of the event-by-event single-tier loop it replaced (commit 47e598d, same machine)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from clustertwin.catalog import load_catalog
from clustertwin.design.failure_rates import job_rates
from clustertwin.reliability import analyze
from clustertwin.reliability.montecarlo import RunSpec, simulate, simulate_events

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "default.yaml"


def _inputs(gpus: int, days: float, trials: int = 1000, **extra):
    keys = dict(failure_profile="llama3-h100", failures_per_1000_node_days="auto",
                checkpoint_interval_min="auto", checkpoint_blocking_s=10.0, restart_min=10.0,
                trials=trials, seed=0, local_checkpoint_interval_min="none",
                local_checkpoint_replicas=0, local_checkpoint_blocking_s="auto",
                local_checkpoint_write_s="auto", repair_h="auto", include_planned=True)
    rel = SimpleNamespace(**{**keys, **extra})     # the section's defaults where not given
    scenario = SimpleNamespace(
        source="bench", reliability=rel,
        cluster=SimpleNamespace(node="bench-node", spare_nodes=256),
        training=SimpleNamespace(precision="bf16"),
        economics=SimpleNamespace(cloud_usd_per_gpu_hour=3.0), model=None)
    estimate = SimpleNamespace(gpus=gpus, days=days, step_time_s=6.0, params_total=405e9)
    return scenario, estimate


class _Catalog:
    """The built-in failure profiles plus an 8-GPU node, so the benchmark needs no other data."""

    def __init__(self) -> None:
        self._cat = load_catalog()
        self._node = SimpleNamespace(gpus=8, storage_nics=2, storage_nic_gbps=400.0,
                                     local_nvme_write_gb_per_s=0.0, compute_nics=8,
                                     compute_nic_gbps=400.0)

    def get(self, kind, entry_id, **kw):  # noqa: ANN001, ANN201
        return self._cat.get(kind, entry_id, **kw)

    def node(self, entry_id, **kw):  # noqa: ANN001, ANN201
        return self._node


def _time(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _cpu(fn, repeat: int = 7) -> float:
    """Best CPU seconds of ``repeat`` warm calls."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def _compare(call: tuple) -> tuple[float, float]:
    """CPU of one recorded ``simulate`` call, fast loop and reference, from the same state."""
    spec, intervals, trials, state, kw = call

    def rng() -> np.random.Generator:
        r = np.random.default_rng()
        r.bit_generator.state = state
        return r

    fast = _cpu(lambda: simulate(spec, intervals, trials, rng(), **kw))
    ref_kw = {k: v for k, v in kw.items() if k != "rewind"}   # the reference never draws ahead
    return fast, _cpu(lambda: simulate_events(spec, intervals, trials, rng(), **ref_kw), 3)


def _default_calls() -> tuple:
    """The default example's scenario, catalog, estimate and design, and the Monte Carlo calls
    (spec, intervals, trials, generator state, options) one ``analyze`` of it makes."""
    from clustertwin.catalog import load_catalog
    from clustertwin.deadline import train
    from clustertwin.design import design
    from clustertwin.reliability import montecarlo, runs
    from clustertwin.scenario import load_scenario

    cat = load_catalog([])
    sc = load_scenario(EXAMPLE, cat)
    est = train(sc, cat)
    des = design(sc, cat, est)
    calls = []

    def spy(spec, intervals, trials, rng, **kw):  # noqa: ANN001, ANN202
        calls.append((spec, intervals, trials, rng.bit_generator.state, kw))
        return montecarlo.simulate(spec, intervals, trials, rng, **kw)

    runs.simulate = spy
    try:
        analyze(sc, cat, est, des)
    finally:
        runs.simulate = montecarlo.simulate
    return sc, cat, est, des, calls


def default_stage() -> dict[str, float]:
    """CPU per warm ``analyze`` call on the default example, and its two Monte Carlo calls
    (the interval search and the main run) against the reference loop on the same inputs."""
    sc, cat, est, des, calls = _default_calls()
    figures = {"default_analyze_cpu_s": _cpu(lambda: analyze(sc, cat, est, des))}
    print("reliability stage on examples/default.yaml (CPU s per warm call, best of 7)")
    print(f"  analyze()                     {figures['default_analyze_cpu_s']:.4f} s  (target <= 0.08 s)")
    for name, call in zip(("search", "main"), calls, strict=False):
        fast, ref = _compare(call)
        figures[f"default_{name}_mc_cpu_s"] = fast
        print(f"  {name:6s} Monte Carlo {np.size(call[1]):>2} x {call[2]:>5,} trials  {fast:.4f} s"
              f"  (event-by-event reference {ref:.4f} s)")
    return figures


#: issue 36, before: the same figures at 47e598d (the event-by-event bulk and flat loops) on the
#: 2-core machine this work was measured on, CPU ms per warm call, best of 30
BEFORE_47E598D = {"analyze": 77.4, "search": 35.0, "main": 40.5, "make_plan": 306.0}


def issue36_stage(repeat: int = 30) -> dict[str, float]:
    """CPU ms per warm call (best of ``repeat``): ``analyze`` on the default example, its
    search and main Monte Carlo calls, and the whole ``make_plan``; before and now."""
    from clustertwin.plan import make_plan

    sc, cat, est, des, calls = _default_calls()

    def again(call: tuple):  # noqa: ANN202
        spec, intervals, trials, state, kw = call

        def go() -> None:
            rng = np.random.default_rng()
            rng.bit_generator.state = state
            simulate(spec, intervals, trials, rng, **kw)
        return go

    now = {"analyze": _cpu(lambda: analyze(sc, cat, est, des), repeat),
           "search": _cpu(again(calls[0]), repeat), "main": _cpu(again(calls[1]), repeat),
           "make_plan": _cpu(lambda: make_plan(sc, cat), max(3, repeat // 3))}
    print("issue 36: reliability on examples/default.yaml, CPU ms per warm call "
          f"(best of {repeat}; load average {os.getloadavg()[0]:.2f})")
    print(f"  {'':28s} {'before':>8s} {'now':>8s}")
    labels = {"analyze": "analyze()", "search": "  search Monte Carlo 25 x 256",
              "main": "  main Monte Carlo 1 x 1,000", "make_plan": "make_plan() (2 x analyze)"}
    for key, label in labels.items():
        print(f"  {label:28s} {BEFORE_47E598D[key]:8.1f} {now[key] * 1e3:8.1f}")
    return {f"issue36_{k}_cpu_s": v for k, v in now.items()}


def two_tier_default() -> dict[str, float]:
    """CPU per warm ``analyze`` call on ``examples/default.yaml`` with the local tier searched
    (``reliability.local_checkpoint_interval_min: auto``)."""
    import tempfile

    from clustertwin.deadline import train
    from clustertwin.design import design
    from clustertwin.scenario import load_scenario

    text = EXAMPLE.read_text().replace("reliability:\n",
                                       "reliability:\n  local_checkpoint_interval_min: auto\n", 1)
    if "local_checkpoint_interval_min: auto" not in text:
        raise SystemExit("examples/default.yaml has no reliability: block to extend")
    cat = load_catalog([])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "default-two-tier.yaml"
        path.write_text(text)
        sc = load_scenario(path, cat)
    est = train(sc, cat)
    des = design(sc, cat, est)
    analyze(sc, cat, est, des)
    secs = _cpu(lambda: analyze(sc, cat, est, des))
    print(f"  analyze(), two-tier variant   {secs:.4f} s  (was 0.575 s after 25e; aim <= 0.25 s)")
    return {"default_two_tier_analyze_cpu_s": secs}


#: issue 36 (sweep CPU per point): :func:`sweep_points` at 7f808db on the same machine, CPU ms
#: per warm call (best of 15 in each of three runs interleaved with runs of the code after it)
BEFORE_SWEEP_POINTS = {512: 12.9, 2048: 12.7, 4096: 12.1}


def sweep_points(repeat: int = 15) -> dict[str, float]:
    """CPU ms per warm ``analyze`` at three points of the sweep benchmark's grid (its base
    scenario, Llama-3-70B for 2e12 tokens, at 512, 2,048 and 4,096 H100s): runs of a few
    dozen interruptions, where per-call and per-block work weighs more than per-event work
    (the grid's Monte Carlo runs see 30-90 events)."""
    from bench_sweep import BASE

    from clustertwin.deadline import train
    from clustertwin.design import design
    from clustertwin.scenario import scenario_from_dict

    cat = load_catalog([])
    figures = {}
    print(f"issue 36: sweep grid points, CPU ms per warm analyze() (best of {repeat}; load "
          f"average {os.getloadavg()[0]:.2f})")
    for gpus, before in BEFORE_SWEEP_POINTS.items():
        doc = {**BASE, "cluster": {**BASE["cluster"], "gpus": gpus}}
        sc = scenario_from_dict(doc, "bench", cat)
        est = train(sc, cat)
        des = design(sc, cat, est)
        res = analyze(sc, cat, est, des)
        secs = _cpu(lambda sc=sc, est=est, des=des: analyze(sc, cat, est, des), repeat)
        figures[f"sweep_{gpus}_analyze_cpu_s"] = secs
        print(f"  {gpus:>5,} GPUs, {res.interruptions_mean:5.1f} interruptions a run: "
              f"before {before:5.1f}  now {secs * 1e3:5.1f}")
    return figures


def main() -> dict[str, float]:
    figures = default_stage()
    figures.update(issue36_stage())
    figures.update(sweep_points())
    figures.update(two_tier_default())
    cat = _Catalog()
    print("reliability benchmark (best of 3, wall-clock seconds)")
    for gpus, days, target in ((16384, 54, 1.0), (100000, 90, 5.0)):
        sc, est = _inputs(gpus, days)
        res = analyze(sc, cat, est)
        secs = _time(lambda sc=sc, est=est: analyze(sc, cat, est))
        print(f"  analyze  {gpus:>7,} GPUs {days:>3} d, 1,000 trials: {secs:6.3f} s "
              f"(target < {target:.0f} s; {res.interruptions_mean:,.0f} interruptions, "
              f"ETTR {res.ettr_mean:.3f}, interval {res.checkpoint_interval_min:.2f} min)")
        rates = job_rates(cat.get("failure_profile", "llama3-h100"), gpus, 8)
        spec = RunSpec(work_h=days * 24.0, blocking_h=10 / 3600, persist_h=0.0,
                       restart_h=10 / 60, rates_per_h=rates.rates_per_h,
                       needs_repair=rates.needs_repair, planned_per_h=rates.planned_per_h,
                       repair_h=rates.repair_h, spare_nodes=256)
        tau = res.checkpoint_interval_min / 60
        secs = _time(lambda spec=spec, tau=tau: simulate(spec, tau, 1000, np.random.default_rng(0),
                                                         count_causes=True))
        print(f"  simulate {gpus:>7,} GPUs {days:>3} d, 1,000 trials: {secs:6.3f} s (core only)")
    for gpus, days, target in ((16384, 54, 1.0), (100000, 90, 5.0)):
        sc, est = _inputs(gpus, days, local_checkpoint_interval_min="auto",
                          local_checkpoint_replicas=1)
        res = analyze(sc, cat, est)
        secs = _time(lambda sc=sc, est=est: analyze(sc, cat, est))
        print(f"  two-tier {gpus:>7,} GPUs {days:>3} d, 1,000 trials: {secs:6.3f} s "
              f"(target < {target:.0f} s; ETTR {res.ettr_mean:.3f} vs {res.pfs_only_ettr_mean:.3f} "
              f"file system only; local {res.local_checkpoint_interval_min:.2f} min, file system "
              f"every {res.pfs_every_local})")
    return figures


if __name__ == "__main__":
    main()
