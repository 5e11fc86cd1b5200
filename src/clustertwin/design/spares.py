"""How many hot-spare nodes a job needs, shared by the design, reliability, economics,
build-out and scheduling stages so that all of them count the same nodes.

``cluster.spare_nodes: auto`` resolves to the fewest spares for which at most 0.1% of
repair-needing failures find no spare waiting: nodes in repair are Poisson with mean
(repair-needing failure rate x repair time) for the job's failure profile.

A spare is only kept while it pays for itself: the k-th spare saves the job's nodes the repair
time of the failures that would otherwise find k - 1 spares busy (rate x P(k or more in repair)
x repair time x job nodes, node-hours per hour); below one node-hour per hour it costs more than it
saves. One DGX gets no spare (it would double the cluster to save minutes a year); 16,384 GPUs
keep the 0.1% rule's count.
"""

from __future__ import annotations

import math
from typing import Any

#: the scenario keys that size ``cluster.spare_nodes: auto`` (:func:`resolve_spare_nodes`),
#: read by every stage that counts the spares (a sweep's stage memo keys on them)
READS = ("reliability.failure_profile", "reliability.failures_per_1000_node_days", "reliability.repair_h")

#: Accepted share of repair-needing failures that find no spare node ready.
WAIT_SHARE = 1e-3


def poisson_cdf(k: int, mean: float) -> float:
    if mean <= 0:
        return 1.0
    return min(1.0, sum(math.exp(-mean + i * math.log(mean) - math.lgamma(i + 1)) for i in range(k + 1)))


def spares_needed(mean_in_repair: float, wait_share: float = WAIT_SHARE, limit: int = 10_002) -> int:
    """Fewest spare nodes for which at most ``wait_share`` of repair-needing failures find no
    spare (nodes in repair ~ Poisson(rate x repair time); arrivals see time averages).
    The CDF is summed once (it was re-summed per k: quadratic, hours for a mean of 1e6) and the
    search stops at ``limit``, past the cap of :func:`spares_worth_keeping`."""
    if mean_in_repair <= 0:
        return 0
    log_mean, cdf = math.log(mean_in_repair), 0.0
    for k in range(limit):
        cdf += math.exp(-mean_in_repair + k * log_mean - math.lgamma(k + 1))
        if 1.0 - min(1.0, cdf) <= wait_share:
            return k
    return limit


def spares_worth_keeping(mean_in_repair: float, repair_h: float, job_nodes: int) -> int:
    """Most spares that each save at least one node-hour per hour (see the module doc)."""
    if mean_in_repair <= 0 or repair_h <= 0:
        return 0
    rate_h = mean_in_repair / repair_h          # repair-needing failures per hour
    # the (k+1)-th spare spares the failures that find k nodes already in repair: P(N >= k+1);
    # the CDF is summed once, as poisson_cdf would term by term (re-summing per k was quadratic)
    log_mean, cdf, k = math.log(mean_in_repair), 0.0, 0
    while k < 10_000:
        cdf += math.exp(-mean_in_repair + k * log_mean - math.lgamma(k + 1))
        if rate_h * (1.0 - min(1.0, cdf)) * repair_h * job_nodes < 1.0:
            break
        k += 1
    return k


def _repair_rates(scenario: Any, catalog: Any, gpus: int) -> tuple[float, float, int]:
    """Mean nodes in repair, the repair time (h) and the job's nodes for ``gpus`` GPUs."""
    from clustertwin.design.failure_rates import profile_for, scenario_rates

    node = catalog.node(scenario.cluster.node)
    rates = scenario_rates(scenario, profile_for(scenario, catalog), gpus, node.gpus)
    mean = rates.unexpected_per_h * rates.repair_share * rates.repair_h
    return mean, float(rates.repair_h), max(1, math.ceil(gpus / node.gpus))


def resolve_spare_nodes(scenario: Any, catalog: Any, gpus: int) -> int:
    """``cluster.spare_nodes`` as a number: the scenario's, or the advised count for ``auto``
    (the 0.1% wait rule, capped by the spares worth keeping)."""
    given = scenario.cluster.spare_nodes
    if given != "auto":
        return int(given)
    mean, repair_h, job_nodes = _repair_rates(scenario, catalog, gpus)
    return min(spares_needed(mean), spares_worth_keeping(mean, repair_h, job_nodes))
