"""Drift that someone acts on: each flag names the metric, the plan's figure, what was
observed, the evidence and the action suggested.

Flags:

- ``step_time_s``: the recent steady step time outside the plan's band (the band of
  ``training.days_low`` / ``days_high`` applied to the step time);
- ``interruptions``: more interruptions than the 95th percentile of the plan's count by now
  (the top of its 90% range);
- ``lost_h_per_interruption``: interruptions costing more than :data:`COST_RATIO` x the plan's;
- ``loss_spikes`` / ``skipped_iterations``: at least :data:`CLUSTER_MIN` of them within
  :data:`CLUSTER_WINDOW_H` hours;
- ``suspect_nodes``: a node named in ``k`` interruptions when a culprit picked at random among the
  job's nodes for each interruption would reach ``k`` with probability under 1% / nodes (a
  Bonferroni bound over the nodes; interruptions whose node list is longer than
  :data:`NAMED_NODES_MAX` say nothing about one node and are left out).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clustertwin.track.forecast import Forecast
from clustertwin.track.observe import Observed
from clustertwin.track.planview import PlanView
from clustertwin.track.records import iso
from clustertwin.track.stream import RunHistory

COST_RATIO = 2.0
CLUSTER_MIN = 3
CLUSTER_WINDOW_H = 24.0
NAMED_NODES_MAX = 4
SUSPECT_ALPHA = 0.01


@dataclass(frozen=True)
class Flag:
    metric: str
    planned: float | str
    observed: float | str
    evidence: str
    action: str


def _poisson_sf(k: int, mean: float) -> float:
    """P(N >= k), N ~ Poisson(mean)."""
    if k <= 0:
        return 1.0
    p, cum = math.exp(-mean), 0.0
    for i in range(k):
        cum += p
        p *= mean / (i + 1)
    return max(0.0, 1.0 - cum)


def suspects(obs: Observed, nodes: int) -> list[tuple[str, int, float]]:
    """(node, interruptions naming it, chance probability) of the nodes failing too often."""
    counts: dict[str, int] = {}
    named = [x for x in obs.interruptions if 0 < len(x.nodes) <= NAMED_NODES_MAX]
    for x in named:
        for n in x.nodes:
            counts[n] = counts.get(n, 0) + 1
    total = max(nodes, len(counts), 1)
    mean = sum(len(x.nodes) for x in named) / total
    out = []
    for node, k in sorted(counts.items(), key=lambda kv: -kv[1]):
        p = _poisson_sf(k, mean)
        if k >= 2 and p < SUSPECT_ALPHA / total:
            out.append((node, k, p))
    return out


def _clustered(times: list[float]) -> tuple[int, float] | None:
    """(count, start) of the densest window of CLUSTER_WINDOW_H hours if it holds CLUSTER_MIN."""
    ts = sorted(times)
    best, at, j = 0, 0.0, 0
    for i, t in enumerate(ts):
        while t - ts[j] > CLUSTER_WINDOW_H * 3600.0:
            j += 1
        if i - j + 1 > best:
            best, at = i - j + 1, ts[j]
    return (best, at) if best >= CLUSTER_MIN else None


def flags(plan: PlanView, obs: Observed, history: RunHistory, fc: Forecast, nodes: int) -> list[Flag]:
    out = []
    s = obs.step_s_recent
    if s > plan.step_time_high_s or s < plan.step_time_low_s:
        slow = s > plan.step_time_high_s
        out.append(Flag("step_time_s", plan.step_time_s, s,
                        f"median step time over the last days {s:.3f} s, the plan's band "
                        f"{plan.step_time_low_s:.3f}-{plan.step_time_high_s:.3f} s",
                        ("re-run the acceptance checks (clustertwin check --nccl/--dcgm) to find a slow node "
                         "or link, then recalibrate the stack: plan --measured with track's measured.json")
                        if slow else "the plan is pessimistic: recalibrate with plan --measured measured.json"))
    n = len(obs.interruptions)
    if n > obs.expected_p95:
        out.append(Flag("interruptions", obs.expected_interruptions, n,
                        f"{n} interruptions in {obs.elapsed_h / 24:.1f} days; the plan's 90% range by now is "
                        f"{obs.expected_p5:.0f}-{obs.expected_p95:.0f}",
                        f"re-run the acceptance burn-in (clustertwin acceptance, check --dcgm) on the nodes "
                        f"involved; checkpoint every {fc.interval_min:.0f} min (Daly at the learnt MTBF "
                        f"{fc.mtbf_post_h:.1f} h) instead of {fc.interval_plan_min:.0f}"))
    if n:
        per = obs.lost_h / n
        if per > COST_RATIO * plan.cost_per_interruption_h:
            out.append(Flag("lost_h_per_interruption", plan.cost_per_interruption_h, per,
                            f"{obs.lost_h:.1f} h lost over {n} interruptions",
                            "shorten the restart path: checkpoint load time, scheduler requeue, hot spares"))
    for metric, times, what in (("loss_spikes", [x[0] for x in history.spikes], "loss spikes"),
                                ("skipped_iterations", [x[0] for x in history.bad_steps], "log intervals with skipped or nan iterations")):
        c = _clustered(times)
        if c is not None:
            out.append(Flag(metric, 0, c[0], f"{c[0]} {what} within {CLUSTER_WINDOW_H:g} h from {iso(c[1])}",
                            "inspect the data batches of those steps and screen for silent data corruption "
                            "(clustertwin check --dcgm with DCGM level-3 diagnostics)"))
    for node, k, p in suspects(obs, nodes):
        out.append(Flag("suspect_nodes", 0, node, f"{node} named in {k} interruptions (chance {p:.1e})",
                        f"drain {node} and re-run its acceptance check (clustertwin check --dcgm --burnin)"))
    return out
