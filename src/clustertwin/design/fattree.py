"""Fat-tree counting: a (folded-Clos) tree of identical k-port switches, 1 to 4 tiers.

:func:`size_fabric` is the pure counting rule, usable by any stage::

    leaves  = ceil(endpoints / d)                 d = leaf downlinks, u = k - d uplinks
    2 tiers : spines = smallest divisor S of u with S * k >= leaves * u
              (every leaf sends u / S parallel links to every spine)
    3 tiers : pods of k/2 leaves and u spines (spines k/2 down, k/2 up); a partial last pod
              gets the smallest divisor of u that carries its uplinks; per spine position,
              cores = ceil(pods * k/2 / k) (the links of a position spread over its cores;
              a core takes at most k).
    4 tiers : (the "further tier", only when asked for) super-pods of k/2 pods: per spine
              position the third tier keeps k/2 ports up; per third-tier position the fourth
              tier has ceil(super-pods * k/2 / k) switches.

With u = k/2 this reproduces the NVIDIA DGX SuperPOD tables (1-64 SU of DGX H100/B200 on
64-port NDR, 1-18 SU of DGX B300 on 144-port XDR, the twin-plane Spectrum-X rows) and the
fat-tree limits k^2/2 (2 tiers), k^3/4 (3 tiers) and k^4/8 (4 tiers) -
shared/research/datacenter-anchors.md 2.2. Leaf oversubscription r:1 sets u = ceil(k / (r + 1)),
d = k - u (so the real ratio is <= r).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from clustertwin.errors import InfeasibleError, Problem, ScenarioError

#: tiers of one plane before the design reaches for rail separation or a further tier
MAX_TIERS = 3
#: the further tier a plane may take when rail separation is not enough
FURTHER_TIERS = 4


def smallest_divisor_at_least(n: int, need: float) -> int:
    """Smallest divisor of ``n`` that is >= ``need`` (``n`` itself at worst)."""
    for s in range(max(1, math.ceil(need - 1e-9)), n + 1):
        if n % s == 0:
            return s
    return n


def modules(used: np.ndarray | int, ppc: int) -> int:
    """Transceiver modules for ports ``used`` per switch at ``ppc`` ports per cage."""
    return int(np.sum(-(-np.asarray(used) // ppc)))


def leaf_split(switch_ports: int, oversubscription: float) -> tuple[int, int]:
    """(downlinks, uplinks) of a leaf for a requested down:up ratio (actual ratio <= requested)."""
    up = math.ceil(switch_ports / (oversubscription + 1.0) - 1e-9)
    return switch_ports - up, up


def max_endpoints(switch_ports: int, tiers: int, oversubscription: float = 1.0) -> int:
    """Most endpoint ports a fat tree of ``tiers`` levels reaches: k, k*d, k*(k/2)*d, ..."""
    k = switch_ports
    d, _ = leaf_split(k, oversubscription)
    if tiers <= 1:
        return k
    return k * (k // 2) ** (tiers - 2) * d


@dataclass(frozen=True)
class FabricSize:
    """Switch and link counts of one fat tree (one plane). Ports at the endpoint speed.

    ``core`` counts every switch above the spines; ``upper_tiers`` splits it by tier (one
    entry for 3 tiers, two for 4); ``spine_core_links`` every link above the spines."""

    endpoints: int              #: endpoint ports the tree is sized for
    radix: int                  #: switch ports k
    oversubscription: float     #: actual leaf down:up ratio
    tiers: int
    leaf: int
    spine: int
    core: int
    leaf_down: int              #: ports per leaf facing endpoints
    leaf_up: int                #: ports per leaf facing spines (0 in 1 tier)
    pods: int                   #: 3-tier pods (1 otherwise)
    leaf_spine_links: int
    spine_core_links: int
    spine_groups: tuple[tuple[int, int], ...]  #: (spines, ports used on each)
    core_groups: tuple[tuple[int, int], ...]   #: (cores, ports used on each)
    upper_tiers: tuple[int, ...] = ()          #: switches per tier above the spine

    @property
    def switches(self) -> int:
        return self.leaf + self.spine + self.core

    @property
    def node_leaf_links(self) -> int:
        return self.endpoints

    @property
    def links(self) -> int:
        return self.endpoints + self.leaf_spine_links + self.spine_core_links


def _infeasible(endpoints: int, k: int, r: float, tiers: int, source: str,
                path: str) -> InfeasibleError:
    limit = max_endpoints(k, tiers, r)
    hints = []
    top = k * (k // 2) ** (tiers - 2)
    need_d = math.ceil(endpoints / top)
    if need_d <= k - 1:
        hints.append(f"raise cluster.fabric.oversubscription to >= {need_d / (k - need_d):.2f}")
    k2 = k + 2
    while max_endpoints(k2, tiers, r) < endpoints:
        k2 += 2
    hints.append(f"a switch with >= {k2} ports at this speed")
    hints.append(f"at most {limit:,} endpoint ports per plane")
    return InfeasibleError([Problem(source, path,
        f"{endpoints:,} endpoint ports need more than {tiers} tiers of {k}-port switches "
        f"(limit {limit:,} at {r:g}:1); nearest changes: {', or '.join(hints)}")])


def _pods(n_leaf: int, u: int, half: int) -> tuple[int, int, list[tuple[int, int]]]:
    """(pods, spines, spine groups as (spines, ports used)) of pods of ``half`` leaves whose
    spines keep ``half`` ports up."""
    full, last = divmod(n_leaf, half)
    groups = [(full * u, 2 * half)] if full else []
    n_spine = full * u
    if last:
        s_last = smallest_divisor_at_least(u, last * u / half)
        groups.append((s_last, last * u // s_last + half))
        n_spine += s_last
    return math.ceil(n_leaf / half), n_spine, groups


def size_fabric(endpoints: int, switch_ports: int, oversubscription: float = 1.0, *,
                leaves: int | None = None, max_tiers: int = MAX_TIERS,
                source: str = "<memory>",
                path: str = "cluster.fabric.technology") -> FabricSize:
    """Size one fat-tree plane for ``endpoints`` ports on ``switch_ports``-port switches.

    ``leaves`` forces the leaf count (rail-optimized callers size whole SUs); otherwise it is
    ``ceil(endpoints / downlinks)`` and a build that fits one switch is a single tier.
    Raises ScenarioError for oversubscription < 1 and InfeasibleError past ``max_tiers``.
    """
    k, r = int(switch_ports), float(oversubscription)
    if r < 1.0:
        raise ScenarioError([Problem(source, "cluster.fabric.oversubscription",
            f"oversubscription {r:g} is below 1 (more uplinks than downlinks buys nothing); "
            "use 1.0 for non-blocking")])
    if k < 2:
        raise ScenarioError([Problem(source, path, f"a switch needs at least 2 ports, got {k}")])
    endpoints = int(endpoints)
    if endpoints < 1:
        raise ValueError("endpoints must be >= 1")
    if leaves is None and endpoints <= k:
        return FabricSize(endpoints, k, float(endpoints), 1, 1, 0, 0, k, 0, 1, 0, 0, (), ())
    d, u = leaf_split(k, r)
    if d < 1:
        raise ScenarioError([Problem(source, "cluster.fabric.oversubscription",
                                     f"{r:g}:1 leaves no downlinks on a {k}-port switch")])
    n_leaf = math.ceil(endpoints / d) if leaves is None else int(leaves)
    if n_leaf * d < endpoints:
        raise ValueError(f"{n_leaf} leaves of {d} downlinks cannot hold {endpoints} ports")
    actual = d / u
    if n_leaf <= k and max_tiers >= 2:
        s = smallest_divisor_at_least(u, n_leaf * u / k)
        return FabricSize(endpoints, k, actual, 2, n_leaf, s, 0, d, u, 1, n_leaf * u, 0,
                          ((s, n_leaf * u // s),), ())
    half = k // 2
    pods, n_spine, groups = _pods(n_leaf, u, half)
    if pods <= k and max_tiers >= 3:
        c = _spread(pods * half, k, half)
        n_core = u * c
        return FabricSize(endpoints, k, actual, 3, n_leaf, n_spine, n_core, d, u, pods,
                          n_leaf * u, n_spine * half, tuple(groups),
                          ((n_core, math.ceil(pods * half / c)),), (n_core,))
    if max_tiers < 4 or pods > k * half:
        raise _infeasible(endpoints, k, r, min(max_tiers, FURTHER_TIERS), source, path)
    return _four_tiers(LeafLayer(endpoints, k, actual, n_leaf, d, u), pods, n_spine, groups)


def _spread(links: int, k: int, positions: int) -> int:
    """Switches of one position group taking ``links`` spread evenly (each takes <= k): the
    fewest that carry them, at most one per link of a position (``positions``)."""
    return min(positions, max(1, math.ceil(links / k - 1e-9)))


class LeafLayer(NamedTuple):
    """A tree's endpoints and its leaf layer: ``endpoints`` asked, switch radix ``k``,
    ``actual`` endpoints built, ``n_leaf`` leaves of ``d`` downlinks and ``u`` uplinks."""

    endpoints: int
    k: int
    actual: int
    n_leaf: int
    d: int
    u: int


def _four_tiers(leaf: LeafLayer, pods: int, n_spine: int, groups) -> FabricSize:
    """A fourth tier over super-pods of k/2 pods (see the module docstring)."""
    endpoints, k, actual, n_leaf, d, u = leaf
    half = k // 2
    sp_full, sp_last = divmod(pods, half)
    # third tier: per spine position, one switch per pod of the super-pod (k/2 down, k/2 up)
    t3 = u * (sp_full * half + sp_last)
    superpods = math.ceil(pods / half)
    c4 = _spread(superpods * half, k, half)
    t4 = u * half * c4
    t3_links = t3 * half
    return FabricSize(endpoints, k, actual, 4, n_leaf, n_spine, t3 + t4, d, u, pods,
                      n_leaf * u, n_spine * half + t3_links, tuple(groups),
                      ((t3, 2 * half), (t4, math.ceil(t3_links / t4))), (t3, t4))
