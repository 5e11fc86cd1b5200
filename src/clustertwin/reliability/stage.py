"""The reliability stage: failures, checkpoints and goodput of one training run.

``analyze(scenario, catalog, estimate, design=None)`` is pure: it reads the scenario's
``reliability`` and ``economics`` sections, the job size and failure-free duration from the
estimate and storage bandwidth and spares from the design when there is one.

Defaults when something is missing (documented in the result's ``notes``):

- no design: file-system bandwidth from the Llama 3 rule of thumb in :mod:`.checkpoint`, node
  storage bandwidth and NVMe from the node catalog entry, spares from ``cluster.spare_nodes``;
- ``checkpoint_blocking_s: auto``: a synchronous write to the file system (the stall is the
  whole write). A number is the stall of an asynchronous save; the rest of the write is the
  window in which a failure still loses that checkpoint;
- ``checkpoint_interval_min: auto``: the optimum of the simulated ETTR.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clustertwin.catalog.models import FailureProfile
from clustertwin.catalog.params import param_count
from clustertwin.errors import InfeasibleError, Problem, ScenarioError
from clustertwin.reliability import interval as iv
from clustertwin.reliability.checkpoint import checkpoint_times
from clustertwin.reliability.montecarlo import RunawayError, RunSpec, simulate
from clustertwin.reliability.profiles import job_rates
from clustertwin.reliability.result import CATEGORIES, ReliabilityResult
from clustertwin.reliability.spares import poisson_cdf, resolve_spare_nodes, spares_needed

#: trials and horizon of the interval search (common random numbers keep it smooth)
SEARCH_TRIALS = 256
SEARCH_FAILURES = 400
SEARCH_POINTS = 25
#: events one run may take before it is declared hopeless
MAX_EVENTS = 5_000_000
MAX_TRIALS = 1_000_000


def _get(obj: Any, *names: str) -> Any:
    for n in names:
        obj = getattr(obj, n, None) if obj is not None else None
    return obj


def _check(scenario: Any) -> None:
    r, src = scenario.reliability, scenario.source
    problems = []

    def bad(key: str, msg: str) -> None:
        problems.append(Problem(src, f"reliability.{key}", msg))

    if r.failures_per_1000_node_days != "auto" and r.failures_per_1000_node_days < 0:
        bad("failures_per_1000_node_days", "must be 'auto' or a rate >= 0")
    if r.checkpoint_interval_min != "auto" and r.checkpoint_interval_min <= 0:
        bad("checkpoint_interval_min", "must be 'auto' or a number of minutes > 0")
    if r.checkpoint_blocking_s != "auto" and r.checkpoint_blocking_s < 0:
        bad("checkpoint_blocking_s", "must be 'auto' or a number of seconds >= 0")
    if r.restart_min < 0:
        bad("restart_min", "must be a number of minutes >= 0")
    if not 1 <= r.trials <= MAX_TRIALS:
        bad("trials", f"must be between 1 and {MAX_TRIALS:,}")
    if r.seed < 0:
        bad("seed", "must be an integer >= 0")
    if problems:
        raise ScenarioError(problems)


def _search_grid(floor_min: float, daly_min: float) -> np.ndarray:
    centre = max(daly_min, 2.0 * floor_min)
    lo = max(floor_min, centre / 8.0)
    hi = max(centre * 8.0, lo * 4.0)
    return np.geomspace(lo, hi, SEARCH_POINTS)


def _refine(x: np.ndarray, y: np.ndarray) -> float:
    """Vertex of the parabola through the best grid point and its neighbours (log axis)."""
    i = int(np.argmax(y))
    if i == 0 or i == len(x) - 1:
        return float(x[i])
    lx = np.log(x[i - 1:i + 2])
    a, b, _ = np.polyfit(lx, y[i - 1:i + 2], 2)
    if a >= 0:
        return float(x[i])
    return float(np.exp(np.clip(-b / (2 * a), lx[0], lx[2])))


def analyze(scenario: Any, catalog: Any, estimate: Any, design: Any = None) -> ReliabilityResult:
    """Reliability of the training run in ``estimate`` on the cluster of ``scenario``."""
    _check(scenario)
    r, src = scenario.reliability, scenario.source
    profile: FailureProfile = catalog.get("failure_profile", r.failure_profile, source=src,
                                          path="reliability.failure_profile")
    node = catalog.node(scenario.cluster.node, source=src, path="cluster.node")
    gpus = int(estimate.gpus)
    nodes = max(1, math.ceil(gpus / node.gpus))
    notes: list[str] = []

    spares = _get(design, "spare_nodes")
    if spares is None and _get(design, "nodes") is not None:
        spares = max(0, int(design.nodes) - nodes)
    if spares is None:
        spares = resolve_spare_nodes(scenario, catalog, gpus)
    spares = int(spares)

    override = None if r.failures_per_1000_node_days == "auto" else float(r.failures_per_1000_node_days)
    rates = job_rates(profile, gpus, node.gpus, override)

    # checkpoint size and storage times
    params = getattr(estimate, "params_total", None) or param_count(scenario.model).total
    node_bw = node.storage_nics * node.storage_nic_gbps / 8.0 if node.storage_nics else None
    nvme = _get(design, "storage", "nvme_write_gbps_per_node") or node.local_nvme_write_gb_per_s or None
    ck = checkpoint_times(params, scenario.training.precision, gpus, nodes,
                          _get(design, "storage", "write_gbps"), _get(design, "storage", "read_gbps"),
                          node_bw, nvme)
    if r.checkpoint_blocking_s == "auto":
        blocking_s, persist_s = ck.write_s, 0.0
    else:
        blocking_s = float(r.checkpoint_blocking_s)
        persist_s = max(0.0, ck.write_s - blocking_s)
    restart_h = r.restart_min / 60.0
    if ck.restore_s / 60.0 > r.restart_min:
        notes.append(f"reading the checkpoint back takes {ck.restore_s / 60:.1f} min, more than "
                     f"restart_min ({r.restart_min:g} min), which should include it")
    step_s = float(getattr(estimate, "step_time_s", 0.0) or 0.0)
    floor_min = max(ck.write_s, blocking_s, step_s) / 60.0

    mtbf_min = rates.mtbf_h * 60.0
    delta_min = blocking_s / 60.0
    finite = math.isfinite(mtbf_min)
    young = iv.young(delta_min, mtbf_min) if finite else math.inf
    daly = iv.daly(delta_min, mtbf_min) if finite else math.inf
    work_h = float(estimate.days) * 24.0

    if r.checkpoint_interval_min != "auto":
        used_min = float(r.checkpoint_interval_min)
        if used_min < floor_min:
            what = ("one training step" if floor_min * 60 == step_s else "writing one checkpoint")
            raise InfeasibleError([Problem(src, "reliability.checkpoint_interval_min",
                                           f"{used_min:g} min is shorter than {what} "
                                           f"({floor_min * 60:.1f} s); use at least "
                                           f"{math.ceil(floor_min * 10) / 10:g} min or 'auto'")])

    def spec(work: float) -> RunSpec:
        return RunSpec(work_h=work, blocking_h=blocking_s / 3600.0, persist_h=persist_s / 3600.0,
                       restart_h=restart_h, rates_per_h=rates.rates_per_h,
                       needs_repair=rates.needs_repair, planned_per_h=rates.planned_per_h,
                       repair_h=rates.repair_h, spare_nodes=spares)

    in_repair = rates.unexpected_per_h * rates.repair_share * rates.repair_h
    spares_advised = spares_needed(in_repair)
    # share of time a job with this many spares is not blocked by repairs (time average)
    runnable = poisson_cdf(spares, in_repair)
    if spares < spares_advised:
        notes.append(f"{spares} spare nodes: about {1 - runnable:.1%} of the time more nodes are in "
                     f"repair than there are spares; {spares_advised} spares avoid nearly all "
                     "waiting")

    def guard(tau_min: float) -> int:
        """Refuse hopeless runs; return an event budget for one run."""
        if not finite:
            return 1000
        e = iv.ettr_daly(tau_min, delta_min, mtbf_min, r.restart_min) * runnable
        lam_all = rates.unexpected_per_h + rates.planned_per_h
        events = work_h * lam_all / max(e, 1e-300)
        if e < 1e-3 or events > MAX_EVENTS / 4:
            raise InfeasibleError([Problem(src, "reliability",
                                           f"the job would almost never finish: a failure every "
                                           f"{mtbf_min:.1f} min against a {r.restart_min:g} min restart "
                                           f"and {blocking_s:.0f} s checkpoint stall; lower the "
                                           "failure rate, restart time or job size, or add "
                                           "spare nodes")])
        return int(min(MAX_EVENTS, max(10_000, 20 * events)))

    seq = np.random.SeedSequence(r.seed)
    main_seq, search_seq = seq.spawn(2)

    # the interval search on the simulated ETTR
    curve: list[tuple[float, float, float]] = []
    if finite and rates.unexpected_per_h > 0:
        grid = _search_grid(floor_min, daly)
        budget = guard(float(grid[len(grid) // 2]))
        horizon = min(work_h, SEARCH_FAILURES * rates.mtbf_h)
        try:
            out = simulate(spec(horizon), grid / 60.0, min(r.trials, SEARCH_TRIALS),
                           np.random.default_rng(search_seq), max_events=budget)
        except RunawayError as exc:
            raise InfeasibleError([Problem(src, "reliability", f"the job makes no progress: {exc}")]) from None
        sim = out.work_h.sum(axis=1) / out.wall_h.sum(axis=1)
        curve = [(float(g), float(s), iv.ettr_daly(float(g), delta_min, mtbf_min, r.restart_min))
                 for g, s in zip(grid, sim, strict=True)]
        optimal = max(floor_min, _refine(grid, sim))
    else:
        optimal = max(work_h * 60.0, floor_min)
        notes.append("no unexpected failures: one checkpoint at the end is enough")

    if r.checkpoint_interval_min == "auto":
        used_min, source = optimal, "optimum"
    else:
        source = "scenario"
    budget = guard(used_min)

    try:
        out = simulate(spec(work_h), used_min / 60.0, r.trials, np.random.default_rng(main_seq),
                       count_causes=True, record=True, max_events=budget)
    except RunawayError as exc:
        raise InfeasibleError([Problem(src, "reliability", f"the job makes no progress: {exc}")]) from None

    ettr = out.ettr[0]
    wall = out.wall_h[0]
    n_int = out.interruptions[0]
    price = float(scenario.economics.cloud_usd_per_gpu_hour)
    lost_cat = {
        "checkpoint_stalls": float(out.stall_h[0].mean()) * gpus,
        "lost_progress": float(out.lost_h[0].mean()) * gpus,
        "restart": float(out.restart_h[0].mean()) * gpus,
        "waiting_for_repair": float(out.waiting_h[0].mean()) * gpus,
    }
    lost_total = float((wall - out.work_h[0]).mean()) * gpus
    mean_counts = out.counts.mean(axis=0)
    by_cause = {c: float(v) for c, v in zip(rates.causes, mean_counts, strict=True)}
    by_category: dict[str, float] = {}
    for c, v in by_cause.items():
        cat = profile.causes[c].category if c in profile.causes else "unattributed"
        by_category[cat] = by_category.get(cat, 0.0) + v
    if lost_cat["waiting_for_repair"] > 0.01 * lost_total and lost_total > 0:
        notes.append(f"{lost_cat['waiting_for_repair'] / lost_total:.0%} of the lost time is waiting "
                     f"for repairs with {spares} spare nodes")
    n_all = float(n_int.mean() + out.planned[0].mean())
    names = list(rates.causes) + ["planned maintenance"]
    timeline = tuple((t, "end" if c < 0 else names[c], a, b, e) for t, c, a, b, e in out.timeline)
    mean_int = float(n_int.mean())
    lam_all = rates.unexpected_per_h + rates.planned_per_h

    return ReliabilityResult(
        gpus=gpus, nodes=nodes, spare_nodes=spares, failure_profile=profile.id,
        failures_per_1000_node_days=rates.per_1000_node_days, trials=r.trials, seed=r.seed,
        training_days=float(estimate.days), restart_min=r.restart_min, repair_h=rates.repair_h,
        nodes_in_repair_mean=in_repair, spare_nodes_advised=spares_advised,
        interruptions_mean=mean_int, interruptions_p5=float(np.percentile(n_int, 5)),
        interruptions_p95=float(np.percentile(n_int, 95)),
        planned_interruptions_mean=float(out.planned[0].mean()),
        mtbf_h=rates.mtbf_h, mtbi_all_h=1.0 / lam_all if lam_all > 0 else math.inf,
        by_cause=by_cause, by_category=by_category,
        checkpoint_size_gb=ck.size_gb, checkpoint_per_gpu_gb=ck.per_gpu_gb,
        checkpoint_write_s=ck.write_s, checkpoint_blocking_s=blocking_s,
        checkpoint_persist_s=persist_s, checkpoint_restore_s=ck.restore_s,
        checkpoint_nvme_write_s=ck.nvme_write_s, storage_write_gbps=ck.write_gbps,
        storage_read_gbps=ck.read_gbps, storage_source=ck.storage_source,
        checkpoint_interval_min=used_min, interval_source=source, optimal_interval_min=optimal,
        young_interval_min=young, daly_interval_min=daly, min_interval_min=floor_min,
        ettr_mean=float(ettr.mean()), ettr_p5=float(np.percentile(ettr, 5)),
        ettr_p95=float(np.percentile(ettr, 95)),
        ettr_daly=iv.ettr_daly(used_min, delta_min, mtbf_min, r.restart_min) if finite else 1.0,
        effective_days=float(wall.mean()) / 24.0,
        effective_days_p95=float(np.percentile(wall, 95)) / 24.0,
        lost_gpu_hours=lost_total, lost_gpu_hours_by_category=lost_cat,
        usd_per_gpu_hour=price, wasted_usd=lost_total * price,
        wasted_usd_by_category={k: v * price for k, v in lost_cat.items()},
        wasted_usd_per_interruption=lost_total * price / n_all if n_all > 0 else 0.0,
        curve=tuple(curve), timeline=timeline, notes=tuple(notes),
    )


__all__ = ["analyze", "CATEGORIES"]
