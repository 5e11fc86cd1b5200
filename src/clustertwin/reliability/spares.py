"""How many hot-spare nodes a job needs, shared by the design, reliability, economics,
build-out and scheduling stages so that all of them count the same nodes.

``cluster.spare_nodes: auto`` resolves to the fewest spares for which at most 0.1% of
repair-needing failures find no spare waiting: nodes in repair are Poisson with mean
(repair-needing failure rate x repair time) for the job's failure profile.
"""

from __future__ import annotations

import math
from typing import Any

#: Accepted share of repair-needing failures that find no spare node ready.
WAIT_SHARE = 1e-3


def poisson_cdf(k: int, mean: float) -> float:
    if mean <= 0:
        return 1.0
    return min(1.0, sum(math.exp(-mean + i * math.log(mean) - math.lgamma(i + 1)) for i in range(k + 1)))


def spares_needed(mean_in_repair: float, wait_share: float = WAIT_SHARE) -> int:
    """Fewest spare nodes for which at most ``wait_share`` of repair-needing failures find no
    spare (nodes in repair ~ Poisson(rate x repair time); arrivals see time averages)."""
    k = 0
    while 1.0 - poisson_cdf(k, mean_in_repair) > wait_share:
        k += 1
    return k


def mean_nodes_in_repair(scenario: Any, catalog: Any, gpus: int) -> float:
    from clustertwin.reliability.profiles import job_rates

    r = scenario.reliability
    profile = catalog.get("failure_profile", r.failure_profile, source=scenario.source,
                          path="reliability.failure_profile")
    node = catalog.node(scenario.cluster.node)
    override = None if r.failures_per_1000_node_days == "auto" else float(r.failures_per_1000_node_days)
    rates = job_rates(profile, gpus, node.gpus, override)
    repair = getattr(r, "repair_h", "auto")
    repair_h = rates.repair_h if repair == "auto" else float(repair)
    return rates.unexpected_per_h * rates.repair_share * repair_h


def resolve_spare_nodes(scenario: Any, catalog: Any, gpus: int) -> int:
    """``cluster.spare_nodes`` as a number: the scenario's, or the advised count for ``auto``."""
    given = scenario.cluster.spare_nodes
    if given != "auto":
        return int(given)
    return spares_needed(mean_nodes_in_repair(scenario, catalog, gpus))
