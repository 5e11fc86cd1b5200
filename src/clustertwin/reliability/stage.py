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

The parts, in the order :func:`analyze` calls them: :func:`.inputs.resolve_inputs` (spares,
rates, checkpoint and tier times, interval floors and checks), :func:`.search.choose_intervals`
(the interval search, single- or two-tier, and the schedule used), the main run here (with
stretching) and the :class:`.result.ReliabilityResult`; :mod:`.runs` is one simulated batch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clustertwin.reliability import interval as iv
from clustertwin.reliability.check import check_keys
from clustertwin.reliability.inputs import StageInputs, resolve_inputs
from clustertwin.reliability.montecarlo import Outcome, stretch
from clustertwin.reliability.result import CATEGORIES, ReliabilityResult
from clustertwin.reliability.runs import MAX_EVENTS, Draws, event_budget, run
from clustertwin.reliability.search import (
    SEARCH_FAILURES,
    SEARCH_POINTS,
    SEARCH_TRIALS,
    Intervals,
    choose_intervals,
    search_horizon,
)

#: a main run of more interruptions than this simulates about this many per trial and
#: stretches the sums (renewal-reward: each trial's totals grow linearly, their spread as the
#: square root); a 1,000,000-GPU run sees ~24,000 interruptions and would take a minute
MAIN_FAILURES = 1000
#: scenario keys :func:`analyze` reads (a section name covers the whole section); also, for a
#: reliability stage unexpectedly, ``economics.cloud_usd_per_gpu_hour``: it prices the wasted
#: GPU-hours
READS = ("source", "model", "training", "cluster", "reliability", "economics.cloud_usd_per_gpu_hour")


def analyze(scenario: Any, catalog: Any, estimate: Any, design: Any = None) -> ReliabilityResult:
    """Reliability of the training run in ``estimate`` on the cluster of ``scenario``; without
    an estimate (design-only plan), node-level reliability of the shared cluster."""
    if estimate is None:
        from clustertwin.reliability.cluster import cluster_reliability

        return cluster_reliability(scenario, catalog, design)
    check_keys(scenario)
    notes: list[str] = []
    inp = resolve_inputs(scenario, catalog, estimate, design, notes)
    main_seq, search_seq = np.random.SeedSequence(inp.r.seed).spawn(2)
    chosen = choose_intervals(inp, search_seq, notes)
    out = _main_run(inp, chosen, main_seq, notes)
    pfs_only = _pfs_only(inp, chosen, search_seq) if inp.tiers is not None else None
    return _result(scenario, estimate, inp, chosen, out, pfs_only, notes)


def _main_run(inp: StageInputs, chosen: Intervals, main_seq: Any, notes: list[str]) -> Outcome:
    """The full Monte Carlo of the chosen schedule; a run of more than ``MAIN_FAILURES``
    interruptions is simulated that far and stretched."""
    rates, work_h = inp.rates, inp.work_h
    main_h, factor = work_h, 1.0
    if inp.finite and work_h > MAIN_FAILURES * rates.mtbf_h * inp.e_est:
        main_h = MAIN_FAILURES * rates.mtbf_h * inp.e_est
        factor = work_h / main_h
        notes.append(f"the run sees ~{work_h / rates.mtbf_h / inp.e_est:,.0f} interruptions: about "
                     f"{MAIN_FAILURES:,} are simulated per trial and the totals stretched "
                     f"x{factor:.1f} (mean linearly, spread as the root)")
    # single tier: every checkpoint to the file system; two tiers: local, every k-th also there
    local, every, on = ((chosen.used_min, 1, False) if inp.tiers is None
                        else (chosen.local_used, chosen.every, True))
    return stretch(run(inp, main_h, local, every, on,
                       Draws(inp.r.trials, main_seq, event_budget(inp, chosen.used_min)),
                       count_causes=True, record=True), factor)


def _pfs_only(inp: StageInputs, chosen: Intervals, search_seq: Any) -> tuple[float, float]:
    """ETTR of file-system-only checkpoints at the chosen interval and the two-tier gain over
    it, on the search's trials and horizon (the main run's length is set by its slowest
    schedule, so this one would double it)."""
    horizon = search_horizon(inp) if inp.finite else inp.work_h
    cmp = run(inp, horizon, [chosen.local_used, chosen.used_min], [chosen.every, 1], [True, False],
              Draws(min(inp.r.trials, SEARCH_TRIALS), search_seq, event_budget(inp, chosen.used_min)))
    ettr = float(cmp.work_h[1].sum() / cmp.wall_h[1].sum())
    return ettr, float(cmp.work_h[0].sum() / cmp.wall_h[0].sum()) - ettr


def _losses(inp: StageInputs, out: Outcome, notes: list[str]) -> dict[str, Any]:
    """Lost GPU-hours by category, interruptions by cause and category, and their spread."""
    gpus, rates, profile = inp.gpus, inp.rates, inp.profile
    wall, n_int = out.wall_h[0], out.interruptions[0]
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
                     f"for repairs with {inp.spares} spare nodes")
    n_unexp = float(n_int.sum())
    p5, p95 = np.percentile(n_int, (5, 95))             # one call: the values of two
    return dict(
        lost_progress_per_interruption_min=(float(out.lost_h[0].sum()) / n_unexp * 60.0
                                            if n_unexp > 0 else 0.0),
        interruptions_mean=float(n_int.mean()), interruptions_p5=float(p5),
        interruptions_p95=float(p95),
        planned_interruptions_mean=float(out.planned[0].mean()),
        by_cause=by_cause, by_category=by_category,
        lost_gpu_hours=lost_total, lost_gpu_hours_by_category=lost_cat)


def _tier_fields(inp: StageInputs, chosen: Intervals, out: Outcome,
                 pfs_only: tuple[float, float]) -> dict[str, Any]:
    """The two-tier schedule's fields of the result."""
    assert inp.lt is not None and inp.tiers is not None
    lt, tiers, r, q_loss = inp.lt, inp.tiers, inp.r, inp.q_loss
    dl_min = lt.blocking_s / 60.0
    n_unexp = float(out.interruptions[0].sum())
    every, every_optimal, local_used = chosen.every, chosen.every_optimal, chosen.local_used
    return dict(
        checkpoint_tiers=2, local_checkpoint_interval_min=local_used,
        local_interval_source=chosen.local_source, local_optimal_interval_min=chosen.local_optimal,
        pfs_every_local=every, optimal_pfs_every_local=every_optimal,
        local_checkpoint_replicas=inp.replicas, local_checkpoint_medium=lt.medium,
        local_checkpoint_source=lt.source, local_checkpoint_blocking_s=lt.blocking_s,
        local_checkpoint_write_s=lt.persist_s, local_checkpoint_restore_s=lt.restore_s,
        local_restart_min=tiers.local_restart_h * 60.0, local_loss_share=q_loss,
        local_restore_share=(float(out.local_restores[0].sum()) / n_unexp if n_unexp > 0
                             else 0.0),
        pfs_only_ettr_mean=pfs_only[0], ettr_gain_over_pfs_only=pfs_only[1],
        two_tier_young_interval_min=(iv.two_tier_young(dl_min, inp.delta_min, every_optimal or every,
                                                        inp.mtbf_min, q_loss)
                                     if inp.finite else math.inf),
        ettr_two_tier_first_order=(iv.ettr_two_tier(local_used, every, (dl_min, inp.delta_min),
                                                    inp.mtbf_min, q_loss,
                                                    (tiers.local_restart_h * 60, r.restart_min))
                                   if inp.finite else 1.0),
        tier_curve=chosen.tier_curve, tier_curve_every=chosen.tier_curve_every)


def _result(scenario: Any, estimate: Any, inp: StageInputs, chosen: Intervals, out: Outcome,
            pfs_only: tuple[float, float] | None, notes: list[str]) -> ReliabilityResult:
    """The frozen result: losses priced at the scenario's cloud rate."""
    r, rates, ck = inp.r, inp.rates, inp.ck
    ettr, wall = out.ettr[0], out.wall_h[0]
    price = float(scenario.economics.cloud_usd_per_gpu_hour)
    losses = _losses(inp, out, notes)
    lost_total, lost_cat = losses["lost_gpu_hours"], losses["lost_gpu_hours_by_category"]
    n_all = float(out.interruptions[0].mean() + out.planned[0].mean())
    names = list(rates.causes) + ["planned maintenance"]
    timeline = tuple((t, "end" if c < 0 else names[c], a, b, e) for t, c, a, b, e in out.timeline)
    lam_all = rates.unexpected_per_h + rates.planned_per_h
    tier_fields = _tier_fields(inp, chosen, out, pfs_only) if pfs_only is not None else {}
    used_min = chosen.used_min
    ettr_p5, ettr_p95 = np.percentile(ettr, (5, 95))
    return ReliabilityResult(
        include_planned=bool(r.include_planned), **losses, **tier_fields,
        gpus=inp.gpus, nodes=inp.nodes, spare_nodes=inp.spares, failure_profile=inp.profile.id,
        failures_per_1000_node_days=rates.per_1000_node_days, trials=r.trials, seed=r.seed,
        training_days=float(estimate.days), restart_min=r.restart_min, repair_h=rates.repair_h,
        nodes_in_repair_mean=inp.in_repair, spare_nodes_advised=inp.spares_advised,
        mtbf_h=rates.mtbf_h, mtbi_all_h=1.0 / lam_all if lam_all > 0 else math.inf,
        checkpoint_size_gb=ck.size_gb, checkpoint_per_gpu_gb=ck.per_gpu_gb,
        checkpoint_write_s=ck.write_s, checkpoint_blocking_s=inp.blocking_s,
        checkpoint_persist_s=inp.persist_s, checkpoint_restore_s=ck.restore_s,
        checkpoint_nvme_write_s=ck.nvme_write_s, storage_write_gbps=ck.write_gbps,
        storage_read_gbps=ck.read_gbps, storage_source=ck.storage_source,
        checkpoint_interval_min=used_min, interval_source=chosen.source,
        optimal_interval_min=chosen.optimal, young_interval_min=inp.young,
        daly_interval_min=inp.daly, min_interval_min=inp.floor_min,
        ettr_mean=float(ettr.mean()), ettr_p5=float(ettr_p5), ettr_p95=float(ettr_p95),
        ettr_daly=(iv.ettr_daly(used_min, inp.delta_min, inp.mtbf_min, r.restart_min)
                   if inp.finite else 1.0),
        effective_days=float(wall.mean()) / 24.0,
        effective_days_p95=float(np.percentile(wall, 95)) / 24.0,
        usd_per_gpu_hour=price, wasted_usd=lost_total * price,
        wasted_usd_by_category={k: v * price for k, v in lost_cat.items()},
        wasted_usd_per_interruption=lost_total * price / n_all if n_all > 0 else 0.0,
        curve=chosen.curve, timeline=timeline, notes=tuple(notes),
    )


__all__ = ["analyze", "CATEGORIES", "MAX_EVENTS", "SEARCH_FAILURES",
           "SEARCH_POINTS", "SEARCH_TRIALS"]
