"""Node-level reliability of a shared cluster (a design-only plan: no training job).

Without a job there is no checkpoint interval or ETTR; what a shared cluster's operator needs is
how often nodes fail, how long a node runs between failures, and how many are in repair. The
rates come from the same failure profile the job analysis uses (``job_rates`` over every
installed GPU), so the two answers agree where they overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from clustertwin.design.failure_rates import HOURS_PER_DAY, profile_for, scenario_rates
from clustertwin.design.spares import resolve_spare_nodes


@dataclass(frozen=True)
class ClusterReliability:
    """Failure rates of the whole installed cluster, per day and per node."""

    gpus: int
    nodes: int
    spare_nodes: int
    failure_profile: str
    failures_per_1000_node_days: float
    failures_per_day: float           #: unexpected node failures, whole cluster
    planned_per_day: float
    node_mtbf_h: float                #: one node's mean time between failures
    cluster_mtbf_h: float             #: time between failures anywhere in the cluster
    nodes_in_repair_mean: float
    by_cause_per_day: dict[str, float]
    notes: tuple[str, ...] = ()

    def to_contract(self) -> dict[str, Any]:
        return {"mode": "cluster", "gpus": self.gpus, "nodes": self.nodes,
                "spare_nodes": self.spare_nodes, "failure_profile": self.failure_profile,
                "failures_per_1000_node_days": self.failures_per_1000_node_days,
                "failures_per_day": self.failures_per_day, "planned_per_day": self.planned_per_day,
                "node_mtbf_h": self.node_mtbf_h, "mtbf_h": self.cluster_mtbf_h,
                "nodes_in_repair_mean": self.nodes_in_repair_mean,
                "by_cause_per_day": dict(self.by_cause_per_day), "notes": list(self.notes)}


def cluster_reliability(scenario: Any, catalog: Any, design: Any = None) -> ClusterReliability:
    """Node-level failure rates of every installed GPU's node (spares included)."""
    node = catalog.node(scenario.cluster.node)
    profile = profile_for(scenario, catalog)
    gpus = int((design.gpus if design is not None else None) or scenario.cluster.gpus or 0)
    nodes = max(1, math.ceil(gpus / node.gpus))
    spares = design.spare_nodes if design is not None else None
    if spares is None:
        spares = resolve_spare_nodes(scenario, catalog, gpus)
    rates = scenario_rates(scenario, profile, gpus, node.gpus)
    per_day = rates.unexpected_per_h * HOURS_PER_DAY
    return ClusterReliability(
        gpus=gpus, nodes=nodes, spare_nodes=int(spares), failure_profile=profile.id,
        failures_per_1000_node_days=rates.per_1000_node_days, failures_per_day=per_day,
        planned_per_day=rates.planned_per_h * HOURS_PER_DAY,
        node_mtbf_h=rates.mtbf_h * nodes, cluster_mtbf_h=rates.mtbf_h,
        nodes_in_repair_mean=rates.unexpected_per_h * rates.repair_share * rates.repair_h,
        by_cause_per_day={c: v * HOURS_PER_DAY for c, v in zip(rates.causes, rates.rates_per_h, strict=True)},
        notes=("design-only plan: node-level reliability of the shared cluster (no job, so no "
               "checkpoint interval or ETTR)",))
