"""Deadline mode: the smallest installed cluster whose best plan trains within the deadline.

Plan-level orchestration (it reads the training, design and reliability layers), so it sits
beside :mod:`clustertwin.plan`: :func:`train` is the training stage ``plan`` runs, the perf
stage's :func:`~clustertwin.perf.stage.estimate` on ``cluster.gpus`` or on the count solved
here.

``cluster.deadline_basis: wall-clock`` (the default) counts failures, checkpoints and restarts:
the solver needs ``tokens / tokens_per_s / ETTR <= deadline``. ETTR comes from a cheap closed
form per candidate (never the Monte Carlo): the failure profile's job MTBF at that size, the
blocking checkpoint time with default storage, the restart time, and Daly's complete model at
Daly's optimal interval (:mod:`clustertwin.reliability.interval`). ``plan`` then confirms with
the full reliability stage and, if the run still misses, solves again with the analytic ETTR
scaled by what the full stage found (``ettr_scale``). ``failure-free`` compares ``training.days``.

The walk doubles the node count until the deadline is met (or the batch stops the throughput
growing), then bisects on whole nodes. Each step is one job-size search (~0.1 s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from clustertwin.errors import InfeasibleError, Problem, ScenarioError
from clustertwin.perf.flops import model_flops_per_token
from clustertwin.perf.search import SearchResult
from clustertwin.perf.stage import READS as PERF_READS
from clustertwin.perf.stage import TrainingEstimate, estimate_with_search

#: scenario keys the training stage (:func:`train`) reads: the perf estimate's
#: (:data:`clustertwin.perf.stage.READS`)
READS = PERF_READS
#: and, solving a deadline on a wall-clock basis, the reliability keys of :func:`analytic_ettr`
DEADLINE_READS = ("reliability.failure_profile", "reliability.failures_per_1000_node_days",
                  "reliability.include_planned", "reliability.checkpoint_blocking_s",
                  "reliability.checkpoint_interval_min", "reliability.restart_min")


def reads(scenario: Any) -> tuple[str, ...]:
    """The scenario keys :func:`train` reads for this scenario."""
    c = scenario.cluster
    return READS + DEADLINE_READS if c.gpus is None and c.deadline_basis == "wall-clock" else READS


#: largest cluster the solver will consider, GPUs (the seeds' largest scale is 1,000,000)
MAX_GPUS = 2_000_000


def train(scenario: Any, catalog: Any, *, ettr_scale: float = 1.0) -> TrainingEstimate:
    """The training stage of a plan: the perf estimate on ``cluster.gpus``, or on the smallest
    installed count that meets ``cluster.deadline_days`` (``ettr_scale`` corrects the analytic
    ETTR after the full reliability stage, see the module doc)."""
    return train_with_search(scenario, catalog, ettr_scale=ettr_scale)[0]


def train_with_search(scenario: Any, catalog: Any, *,
                      ettr_scale: float = 1.0) -> tuple[TrainingEstimate, SearchResult]:
    """:func:`train` and the search it ranked (``clustertwin estimate`` shows more plans)."""
    installed, notes = scenario.cluster.gpus, []
    if installed is None and scenario.training is not None and scenario.model is not None:
        installed, notes = solve_gpus(scenario, catalog, ettr_scale)
    return estimate_with_search(scenario, catalog, installed=installed, notes=notes)


@dataclass(frozen=True)
class Trial:
    """One cluster size tried by the deadline solver, and what its best plan does there."""

    installed: int  #: GPUs installed (whole nodes)
    used: int  #: GPUs the best plan uses
    tokens_per_s: float
    step_time_s: float
    ettr: float

    def days(self, tokens: float) -> float:
        if self.tokens_per_s <= 0:
            return math.inf
        return tokens / self.tokens_per_s / self.ettr / 86400.0


def analytic_ettr(scenario: Any, catalog: Any, gpus: int, step_s: float) -> float:
    """Effective training time ratio of a ``gpus``-GPU job in closed form (Daly's complete
    model at Daly's interval; the checkpoint blocks for its write to default storage)."""
    from clustertwin.catalog.params import param_count
    from clustertwin.design.failure_rates import job_rates
    from clustertwin.perf.checkpoint import StorageRates, checkpoint_times
    from clustertwin.reliability import interval as iv

    r = scenario.reliability
    node = catalog.node(scenario.cluster.node)
    nodes = max(1, math.ceil(gpus / node.gpus))
    profile = catalog.get("failure_profile", r.failure_profile)
    override = None if r.failures_per_1000_node_days == "auto" else float(r.failures_per_1000_node_days)
    mtbf_min = job_rates(profile, gpus, node.gpus, override, include_planned=r.include_planned).mtbf_h * 60.0
    if not math.isfinite(mtbf_min) or mtbf_min <= 0:
        return 1.0
    node_bw = node.storage_nics * node.storage_nic_gbps / 8.0 if node.storage_nics else None
    ck = checkpoint_times(param_count(scenario.model).total, scenario.training.precision, gpus, nodes,
                          StorageRates(node_storage_gbps=node_bw))
    delta = (ck.write_s if r.checkpoint_blocking_s == "auto" else float(r.checkpoint_blocking_s)) / 60.0
    tau = iv.daly(delta, mtbf_min) if r.checkpoint_interval_min == "auto" else float(r.checkpoint_interval_min)
    tau = max(tau, step_s / 60.0, 1e-3)
    return max(iv.ettr_daly(tau, delta, mtbf_min, r.restart_min), 1e-6)


def _trial(scenario: Any, catalog: Any, installed: int, wall: bool, ettr_scale: float) -> Trial:
    from clustertwin.perf.stage import fastest_plan

    try:
        best = fastest_plan(scenario, catalog, installed)
    except ScenarioError:  # pinned degrees larger than this cluster (checked once up front)
        return Trial(installed, 0, 0.0, math.inf, 1.0)
    if best is None:
        return Trial(installed, 0, 0.0, math.inf, 1.0)
    used, tps, step = best
    ettr = analytic_ettr(scenario, catalog, used, step) * ettr_scale if wall else 1.0
    return Trial(installed, used, tps, step, min(ettr, 1.0))


def solve_gpus(scenario: Any, catalog: Any, ettr_scale: float = 1.0) -> tuple[int, list[str]]:
    """Installed GPUs (whole nodes) for the deadline, and a note saying how it was solved."""
    from clustertwin.perf.search import check_pinned
    from clustertwin.perf.stage import job_of, system_of

    c, t = scenario.cluster, scenario.training
    wall = c.deadline_basis == "wall-clock"
    unit = catalog.node(c.node).gpus
    job, sys = job_of(scenario, catalog), system_of(scenario, catalog)
    check_pinned(job, None, t.pinned, scenario.source, installed=MAX_GPUS,
                 exact_batch=t.batch_rounding == "exact")  # pin mistakes, once, not per trial
    need_tps = t.tokens / (c.deadline_days * 86400.0)
    guess = need_tps * model_flops_per_token(job.shape, job.seq) / (0.4 * sys.peak(job.precision))
    nodes = max(1, math.ceil(guess / unit / 4))
    trials: dict[int, Trial] = {}

    def ok(n: int) -> bool:
        if n not in trials:
            trials[n] = _trial(scenario, catalog, n * unit, wall, ettr_scale)
        return trials[n].days(t.tokens) <= c.deadline_days

    lo, hi = 0, None
    best_tps = 0.0
    while nodes * unit <= MAX_GPUS:
        if ok(nodes):
            hi = nodes
            break
        tps = trials[nodes].tokens_per_s
        if best_tps > 0 and tps < best_tps * 1.02 and nodes * unit >= 64 * unit:
            break  # the batch no longer lets more GPUs help
        best_tps, lo = max(best_tps, tps), nodes
        nodes *= 2
    if hi is None:
        if not trials:  # the first guess was past the largest cluster: price a ladder of sizes
            n = 1
            while n * unit <= MAX_GPUS:
                ok(n)
                n *= 2
        raise _cannot(scenario, trials, wall)
    while hi - lo > max(1, hi // 100):  # whole nodes; within 1% on large clusters
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    tr = trials[hi]
    gpus = math.ceil(tr.used / unit) * unit  # install what the best plan uses, in whole nodes
    basis = (f"{c.deadline_basis} days (failures, checkpoints, restarts: analytic ETTR {tr.ettr:.1%})"
             if wall else "failure-free days")
    return gpus, [f"GPU count solved for a {c.deadline_days:g}-day deadline in {basis}: "
                  f"{gpus:,} GPUs ({gpus // unit:,} nodes), {tr.days(t.tokens):.1f} days expected"]


def _cannot(scenario: Any, trials: dict[int, Trial], wall: bool) -> InfeasibleError:
    c, t = scenario.cluster, scenario.training
    best = min(trials.values(), key=lambda tr: tr.days(t.tokens))
    days = best.days(t.tokens)
    what = "wall-clock days" if wall else "failure-free days"
    return InfeasibleError([Problem(
        scenario.source, "cluster.deadline_days",
        f"a {c.deadline_days:g}-day deadline cannot be met: with a global batch of "
        f"{t.batch_seqs:,} sequences no cluster up to {max(tr.installed for tr in trials.values()):,} GPUs trains "
        f"{t.tokens:.3g} tokens in time; the nearest deadline that can be met is "
        f"{math.ceil(days * 10) / 10:g} {what} ({best.installed:,} GPUs); or enlarge the batch")])

