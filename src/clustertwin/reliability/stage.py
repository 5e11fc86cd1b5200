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

Two-tier schedules (``local_checkpoint_interval_min`` other than ``none``): a checkpoint to
the local tier (node NVMe or host memory, ``local_checkpoint_replicas`` peer copies) every
local interval, every ``k``-th also to the file system, simulated by :mod:`.tiers` and chosen
by :mod:`.tiersearch`. There every checkpoint is two-stage: only the copy into host memory
stalls training (``local_checkpoint_blocking_s``); with ``checkpoint_blocking_s: auto`` the
file-system copy also stalls only that long and drains in the background for the whole write
time (a number keeps its single-tier meaning: the stall, the rest of the write in the
background). ``checkpoint_interval_min`` is the file-system interval; restart from the local
tier takes ``restart_min`` less the file-system read plus the local read.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from clustertwin.catalog.models import FailureProfile
from clustertwin.catalog.params import param_count
from clustertwin.errors import InfeasibleError, Problem, ScenarioError
from clustertwin.reliability import interval as iv
from clustertwin.reliability import tiersearch
from clustertwin.reliability.checkpoint import checkpoint_times, local_tier_times
from clustertwin.reliability.montecarlo import RunawayError, RunSpec, simulate, stretch
from clustertwin.reliability.profiles import job_rates, profile_for
from clustertwin.reliability.result import CATEGORIES, ReliabilityResult
from clustertwin.reliability.spares import (
    poisson_cdf,
    resolve_spare_nodes,
    spares_needed,
    spares_worth_keeping,
)
from clustertwin.reliability.tiers import TierSpec, simulate_tiers

#: trials and horizon of the interval search (common random numbers keep it smooth)
SEARCH_TRIALS = 256
SEARCH_FAILURES = 400
SEARCH_POINTS = 25
#: a main run of more interruptions than this simulates about this many per trial and
#: stretches the sums (renewal-reward: each trial's totals grow linearly, their spread as the
#: square root); a 1,000,000-GPU run sees ~24,000 interruptions and would take a minute
MAIN_FAILURES = 1000
#: events one run may take before it is declared hopeless
MAX_EVENTS = 5_000_000
MAX_TRIALS = 1_000_000


#: the optional keys added with two-tier checkpointing, and the values that keep the single-tier
#: behaviour (duck-typed scenarios without them behave as before)
OPTIONAL_KEYS = {"local_checkpoint_interval_min": "none", "local_checkpoint_replicas": 0,
                 "local_checkpoint_blocking_s": "auto", "local_checkpoint_write_s": "auto",
                 "repair_h": "auto", "include_planned": True}


def _opt(r: Any, key: str) -> Any:
    return getattr(r, key, OPTIONAL_KEYS[key])


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
    local = _opt(r, "local_checkpoint_interval_min")
    if local not in ("none", "auto") and not (isinstance(local, (int, float)) and local > 0):
        bad("local_checkpoint_interval_min", "must be 'none', 'auto' or a number of minutes > 0")
    replicas = _opt(r, "local_checkpoint_replicas")
    if not isinstance(replicas, int) or replicas < 0:
        bad("local_checkpoint_replicas", "must be a whole number >= 0 (0 = node-local only)")
    for key in ("local_checkpoint_blocking_s", "local_checkpoint_write_s", "repair_h"):
        v = _opt(r, key)
        if v != "auto" and not (isinstance(v, (int, float)) and v >= 0):
            bad(key, "must be 'auto' or a number >= 0")
    if not isinstance(_opt(r, "include_planned"), bool):
        bad("include_planned", "must be true or false")
    if problems:
        raise ScenarioError(problems)


def _search_grid(floor_min: float, daly_min: float) -> np.ndarray:
    centre = max(daly_min, 2.0 * floor_min)
    lo = max(floor_min, centre / 8.0)
    hi = max(centre * 8.0, lo * 4.0)
    return np.geomspace(lo, hi, SEARCH_POINTS)




def analyze(scenario: Any, catalog: Any, estimate: Any, design: Any = None) -> ReliabilityResult:
    """Reliability of the training run in ``estimate`` on the cluster of ``scenario``; without
    an estimate (design-only plan), node-level reliability of the shared cluster."""
    if estimate is None:
        from clustertwin.reliability.cluster import cluster_reliability

        return cluster_reliability(scenario, catalog, design)
    _check(scenario)
    r, src = scenario.reliability, scenario.source
    profile: FailureProfile = profile_for(scenario, catalog)
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
    rates = job_rates(profile, gpus, node.gpus, override, include_planned=_opt(r, "include_planned"))
    if _opt(r, "repair_h") != "auto":
        rates = replace(rates, repair_h=float(_opt(r, "repair_h")))
    local_key = _opt(r, "local_checkpoint_interval_min")
    multi = local_key != "none"
    replicas = int(_opt(r, "local_checkpoint_replicas"))

    # checkpoint size and storage times
    params = getattr(estimate, "params_total", None) or param_count(scenario.model).total
    node_bw = node.storage_nics * node.storage_nic_gbps / 8.0 if node.storage_nics else None
    nvme = _get(design, "storage", "nvme_write_gbps_per_node") or node.local_nvme_write_gb_per_s or None
    ck = checkpoint_times(params, scenario.training.precision, gpus, nodes,
                          _get(design, "storage", "write_gbps"), _get(design, "storage", "read_gbps"),
                          node_bw, nvme)
    lt = None
    if multi:
        net = node.compute_nics * node.compute_nic_gbps / 8.0 if node.compute_nics else None
        lt = local_tier_times(ck.size_gb, gpus, nodes, replicas, nvme, net)
        if _opt(r, "local_checkpoint_blocking_s") != "auto":
            lt = replace(lt, blocking_s=float(_opt(r, "local_checkpoint_blocking_s")),
                         source=lt.source + "; stall from the scenario")
        if _opt(r, "local_checkpoint_write_s") != "auto":
            w = float(_opt(r, "local_checkpoint_write_s"))
            lt = replace(lt, persist_s=w, restore_s=max(w, lt.blocking_s),
                         source=lt.source + "; write time from the scenario")
    if r.checkpoint_blocking_s == "auto" and lt is not None:
        blocking_s, persist_s = lt.blocking_s, ck.write_s     # two-stage: drained in background
    elif r.checkpoint_blocking_s == "auto":
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
    local_floor_min = max(lt.persist_s, lt.blocking_s, step_s) / 60.0 if lt is not None else None

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
    if multi and local_key != "auto":
        local_used = float(local_key)
        if local_used < local_floor_min:
            raise InfeasibleError([Problem(src, "reliability.local_checkpoint_interval_min",
                                           f"{local_used:g} min is shorter than one local checkpoint"
                                           f" or step ({local_floor_min * 60:.1f} s); use at least "
                                           f"{math.ceil(local_floor_min * 10) / 10:g} min or 'auto'")])
        if r.checkpoint_interval_min != "auto" and local_used > float(r.checkpoint_interval_min):
            raise InfeasibleError([Problem(src, "reliability.local_checkpoint_interval_min",
                                           f"{local_used:g} min is longer than the file-system "
                                           f"interval checkpoint_interval_min "
                                           f"({float(r.checkpoint_interval_min):g} min); the local "
                                           "tier must be the more frequent one")])

    def spec(work: float) -> RunSpec:
        return RunSpec(work_h=work, blocking_h=blocking_s / 3600.0, persist_h=persist_s / 3600.0,
                       restart_h=restart_h, rates_per_h=rates.rates_per_h,
                       needs_repair=rates.needs_repair, planned_per_h=rates.planned_per_h,
                       repair_h=rates.repair_h, spare_nodes=spares)

    in_repair = rates.unexpected_per_h * rates.repair_share * rates.repair_h
    spares_advised = min(spares_needed(in_repair),
                         spares_worth_keeping(in_repair, rates.repair_h, nodes))
    # share of time a job with this many spares is not blocked by repairs (time average)
    runnable = poisson_cdf(spares, in_repair)
    if spares < spares_advised:
        notes.append(f"{spares} spare nodes: about {1 - runnable:.1%} of the time more nodes are in "
                     f"repair than there are spares; {spares_advised} spares avoid nearly all "
                     "waiting")

    # first-order ETTR at the Daly interval: a run whose wall clock is mostly failures takes
    # proportionally more events per work hour, so its simulated horizons shrink by it
    e_est = max(1e-3, iv.ettr_daly(max(daly, floor_min), delta_min, mtbf_min, r.restart_min)
                * runnable) if finite else 1.0
    slow = min(1.0, e_est / 0.5)

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

    tiers = None
    if multi:
        q_loss = rates.repair_share if replicas == 0 else 0.0
        restart_local_h = max(restart_h - ck.restore_s / 3600.0, 0.0) + lt.restore_s / 3600.0
        tiers = TierSpec(lt.blocking_s / 3600.0, lt.persist_s / 3600.0, restart_local_h, replicas)
        if replicas == 0 and q_loss > 0:
            notes.append(f"node-local checkpoints die with their node: {q_loss:.0%} of failures "
                         "(those needing a repair) restore from the file system; "
                         "local_checkpoint_replicas: 1 keeps a copy on a peer node")

    def run(work: float, local_min: Any, every: Any, on: Any, trials: int, rng_seq: Any,
            budget: int, **kw: Any) -> Any:
        try:
            if tiers is None:
                return simulate(spec(work), np.asarray(local_min) / 60.0, trials,
                                np.random.default_rng(rng_seq), max_events=budget, **kw)
            return simulate_tiers(spec(work), tiers, np.asarray(local_min) / 60.0, every, trials,
                                  np.random.default_rng(rng_seq), local_on=on, max_events=budget,
                                  **kw)
        except RunawayError as exc:
            raise InfeasibleError([Problem(src, "reliability",
                                           f"the job makes no progress: {exc}")]) from None

    seq = np.random.SeedSequence(r.seed)
    main_seq, search_seq = seq.spawn(2)
    fixed_pfs = None if r.checkpoint_interval_min == "auto" else float(r.checkpoint_interval_min)
    fixed_local = None if local_key in ("auto", "none") else float(local_key)

    # the interval search on the simulated ETTR
    curve: list[tuple[float, float, float]] = []
    tier_curve: tuple[tuple[float, float, float], ...] = ()
    tier_curve_every = None
    every = 1
    local_used = local_optimal = None
    every_optimal = None
    if finite and rates.unexpected_per_h > 0:
        grid = _search_grid(floor_min, daly)
        budget = guard(float(grid[len(grid) // 2]))
        horizon = min(work_h, SEARCH_FAILURES * rates.mtbf_h * slow)
        trials = min(r.trials, SEARCH_TRIALS)
        if tiers is None:
            out = run(horizon, grid, 1, False, trials, search_seq, budget)
            sim = out.work_h.sum(axis=1) / out.wall_h.sum(axis=1)
        else:
            dl_min, rl_min = lt.blocking_s / 60.0, tiers.local_restart_h * 60.0

            def ettr_of(tau: np.ndarray, k: np.ndarray, on: np.ndarray) -> np.ndarray:
                o = run(horizon, tau, k, on, trials, search_seq, budget)
                return o.work_h.sum(axis=1) / o.wall_h.sum(axis=1)

            grid = grid[::2]        # the file-system-only curve, for comparison and the figure
            choice = tiersearch.search(
                ettr_of, grid, local_floor_min, floor_min,
                lambda k: iv.two_tier_young(dl_min, delta_min, k, mtbf_min, q_loss),
                lambda t, k: iv.ettr_two_tier(t, k, dl_min, delta_min, mtbf_min, q_loss, rl_min,
                                              r.restart_min),
                fixed_local=fixed_local, fixed_pfs=fixed_pfs)
            sim, tier_curve = choice.pfs_only_sim, choice.curve
            tier_curve_every = choice.curve_every
            if choice.optimal_every >= max(tiersearch.K_SET):
                notes.append(f"the best schedule writes the file system as rarely as the search "
                             f"allows (every {choice.optimal_every} local checkpoints): no "
                             "simulated failure needs it; set checkpoint_interval_min for the "
                             "durability you want against losses the model leaves out")
            local_optimal, every_optimal = choice.optimal_local_min, choice.optimal_every
            local_used, every = choice.local_min, choice.every
        curve = [(float(g), float(s), iv.ettr_daly(float(g), delta_min, mtbf_min, r.restart_min))
                 for g, s in zip(grid, sim, strict=True)]
        optimal = max(floor_min, iv.refine_log_peak(grid, sim))
        if tiers is not None:
            optimal = every_optimal * local_optimal
    else:
        optimal = max(work_h * 60.0, floor_min)
        if tiers is not None:
            local_optimal, every_optimal = optimal, 1
            local_used = fixed_local if fixed_local is not None else optimal
            every = max(1, math.ceil(optimal / local_used - 1e-9))
        notes.append("no unexpected failures: one checkpoint at the end is enough")

    if tiers is None:
        if r.checkpoint_interval_min == "auto":
            used_min, source = optimal, "optimum"
        else:
            source = "scenario"
        local_source = None
    else:
        if fixed_local is not None and fixed_pfs is not None:
            local_used = fixed_local
            every = max(1, round(fixed_pfs / fixed_local),
                        math.ceil(floor_min / fixed_local - 1e-9))
            if abs(every * fixed_local - fixed_pfs) > 0.01 * fixed_pfs:
                notes.append(f"file-system checkpoints go with every {every}th local one: every "
                             f"{every * fixed_local:g} min instead of {fixed_pfs:g} min")
        used_min = fixed_pfs if (fixed_pfs is not None and fixed_local is None) else every * local_used
        source = "optimum" if fixed_pfs is None else "scenario"
        local_source = "optimum" if fixed_local is None else "scenario"
    budget = guard(used_min)
    main_h, factor = work_h, 1.0
    if finite and work_h > MAIN_FAILURES * rates.mtbf_h * e_est:
        main_h = MAIN_FAILURES * rates.mtbf_h * e_est
        factor = work_h / main_h
        notes.append(f"the run sees ~{work_h / rates.mtbf_h / e_est:,.0f} interruptions: about "
                     f"{MAIN_FAILURES:,} are simulated per trial and the totals stretched "
                     f"x{factor:.1f} (mean linearly, spread as the root)")

    if tiers is None:
        out = stretch(run(main_h, used_min, 1, False, r.trials, main_seq, budget,
                           count_causes=True, record=True), factor)
        pfs_only_ettr = None
    else:
        out = stretch(run(main_h, local_used, every, True, r.trials, main_seq, budget,
                           count_causes=True, record=True), factor)
        # file-system-only checkpoints at the same interval, on the search's trials and horizon
        # (the main run's length is set by its slowest schedule, so this one would double it)
        horizon = min(work_h, SEARCH_FAILURES * rates.mtbf_h * slow) if finite else work_h
        cmp = run(horizon, [local_used, used_min], [every, 1], [True, False],
                  min(r.trials, SEARCH_TRIALS), search_seq, budget)
        pfs_only_ettr = float(cmp.work_h[1].sum() / cmp.wall_h[1].sum())
        pfs_only_gain = float(cmp.work_h[0].sum() / cmp.wall_h[0].sum()) - pfs_only_ettr

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
    n_unexp = float(n_int.sum())
    lost_per_int = float(out.lost_h[0].sum()) / n_unexp * 60.0 if n_unexp > 0 else 0.0
    tier_fields: dict[str, Any] = {}
    if tiers is not None:
        dl_min = lt.blocking_s / 60.0
        tier_fields = dict(
            checkpoint_tiers=2, local_checkpoint_interval_min=local_used,
            local_interval_source=local_source, local_optimal_interval_min=local_optimal,
            pfs_every_local=every, optimal_pfs_every_local=every_optimal,
            local_checkpoint_replicas=replicas, local_checkpoint_medium=lt.medium,
            local_checkpoint_source=lt.source, local_checkpoint_blocking_s=lt.blocking_s,
            local_checkpoint_write_s=lt.persist_s, local_checkpoint_restore_s=lt.restore_s,
            local_restart_min=tiers.local_restart_h * 60.0, local_loss_share=q_loss,
            local_restore_share=(float(out.local_restores[0].sum()) / n_unexp if n_unexp > 0
                                 else 0.0),
            pfs_only_ettr_mean=pfs_only_ettr, ettr_gain_over_pfs_only=pfs_only_gain,
            two_tier_young_interval_min=(iv.two_tier_young(dl_min, delta_min, every_optimal or every,
                                                            mtbf_min, q_loss)
                                         if finite else math.inf),
            ettr_two_tier_first_order=(iv.ettr_two_tier(local_used, every, dl_min, delta_min,
                                                        mtbf_min, q_loss, tiers.local_restart_h * 60,
                                                        r.restart_min) if finite else 1.0),
            tier_curve=tier_curve, tier_curve_every=tier_curve_every)

    return ReliabilityResult(
        include_planned=bool(_opt(r, "include_planned")),
        lost_progress_per_interruption_min=lost_per_int, **tier_fields,
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
