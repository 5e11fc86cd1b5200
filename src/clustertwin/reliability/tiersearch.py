"""Choosing the intervals of a two-tier checkpoint schedule on the simulated ETTR.

The file-system (PFS) interval is a whole multiple ``k`` of the local one (a nested schedule,
as trainers save "every N steps" to each tier), so a schedule is a pair ``(tau, k)``. The
search simulates a 2-D grid of pairs in one vectorized :func:`.tiers.simulate_tiers` call with
common random numbers: ``LOCAL_POINTS`` local intervals, log-spaced to cover the first-order
optimum :func:`.interval.two_tier_young` of every ``k``, times ``k`` doubling over ``K_SET``.
The best grid pair is then refined along each axis by a parabola through it and its two
neighbours on a log axis (the local interval at the best ``k``; ``k`` at the best local
interval, rounded to a whole number). Pairs whose PFS interval is shorter than one PFS write are
left out, and so are pairs whose first-order ETTR (:func:`.interval.ettr_two_tier`) is more
than ``FILTER_MARGIN`` below the best pair's: a simulation runs until its slowest schedule is
done, so hopeless pairs would set its length. ``k`` stops at 64: with peer replicas no simulated failure needs the file system, so
the optimum would be to never write it; the result then notes that the bound was reached.

When the scenario fixes one of the two intervals the other is chosen on a finer line of pairs
simulated in the same call (``k`` for a fixed local interval; ``tau = pfs / k`` for a fixed PFS
interval). The file-system-only curve (ETTR against the PFS interval, the single-tier picture)
rides along in the same call too, so the two are compared on the same failures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from clustertwin.reliability.interval import refine_log_peak

K_SET = (1, 2, 4, 8, 16, 32, 64)
LOCAL_POINTS = 11
LINE_POINTS = 16
#: pairs more than this below the best first-order ETTR are not simulated
FILTER_MARGIN = 0.1


@dataclass(frozen=True)
class TwoTierChoice:
    """Minutes of compute; ``every`` local checkpoints per PFS checkpoint."""

    local_min: float
    every: int
    optimal_local_min: float
    optimal_every: int
    curve: tuple[tuple[float, float, float], ...]   #: (local_min, simulated, first order), best grid k
    curve_every: int
    pfs_only_sim: np.ndarray                         #: simulated ETTR on ``pfs_grid``




def _promising(pairs: list[tuple[float, int]],
               first_order: Callable[[float, int], float]) -> list[tuple[float, int]]:
    if not pairs:
        return pairs
    fo = np.array([first_order(t, k) for t, k in pairs])
    return [p for p, e in zip(pairs, fo, strict=True) if e >= fo.max() - FILTER_MARGIN]


def local_grid(local_floor: float, centres: list[float]) -> np.ndarray:
    """Log-spaced local intervals covering a quarter of the smallest to four times the largest
    first-order optimum, never below the local floor."""
    lo = max(local_floor, min(centres) / 4.0)
    hi = max(max(centres) * 4.0, lo * 4.0)
    return np.geomspace(lo, hi, LOCAL_POINTS)


@dataclass(frozen=True)
class Bounds:
    """Each tier's interval limits (minutes): the shortest local and file-system intervals
    allowed, and an interval the scenario fixes (None = searched)."""

    local_floor: float
    pfs_floor: float
    fixed_local: float | None = None
    fixed_pfs: float | None = None


def search(simulate: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
           pfs_grid: np.ndarray, bounds: Bounds,
           young_k: Callable[[int], float], first_order: Callable[[float, int], float]) -> TwoTierChoice:
    """``simulate(local_min, every, local_on) -> ETTR`` per configuration (arrays, minutes);
    ``young_k(k)`` the first-order optimal local interval for ``k``; ``first_order(tau, k)`` the
    closed-form ETTR for the curve. Floors in minutes: one local checkpoint (stall and
    background write) and one PFS checkpoint."""
    local_floor, pfs_floor = bounds.local_floor, bounds.pfs_floor
    fixed_local, fixed_pfs = bounds.fixed_local, bounds.fixed_pfs
    grid = local_grid(local_floor, [young_k(k) for k in K_SET])
    pairs = _promising([(float(t), k) for k in K_SET for t in grid
                        if k * t >= pfs_floor * (1 - 1e-12)], first_order)
    taus, ks = [t for t, _ in pairs], [k for _, k in pairs]
    n_pair = len(taus)
    line: list[tuple[float, int]] = []
    if fixed_local is not None and fixed_pfs is None:
        k_min = max(1, math.ceil(pfs_floor / fixed_local - 1e-9))
        k_line = np.unique(np.round(k_min * np.geomspace(1, 32, LINE_POINTS)).astype(int))
        line = _promising([(fixed_local, int(k)) for k in k_line], first_order)
    elif fixed_pfs is not None and fixed_local is None:
        k_max = max(1, min(64, math.floor(fixed_pfs / local_floor + 1e-9)))
        k_line = np.unique(np.round(np.geomspace(1, k_max, LINE_POINTS)).astype(int))
        line = _promising([(fixed_pfs / k, int(k)) for k in k_line], first_order)
    all_tau = np.array(taus + [t for t, _ in line] + list(pfs_grid), dtype=float)
    all_k = np.array(ks + [k for _, k in line] + [1] * len(pfs_grid), dtype=float)
    all_on = np.array([True] * (n_pair + len(line)) + [False] * len(pfs_grid))
    ettr = np.asarray(simulate(all_tau, all_k, all_on), dtype=float)
    pair_e, line_e, pfs_e = ettr[:n_pair], ettr[n_pair:n_pair + len(line)], ettr[n_pair + len(line):]

    best = int(np.argmax(pair_e))
    k_grid, t_grid = ks[best], taus[best]
    col = [i for i in range(n_pair) if taus[i] == t_grid]
    k_best = k_grid
    if len(col) >= 3:
        k_best = max(1, round(refine_log_peak(np.array([ks[i] for i in col], dtype=float), pair_e[col])))
    row = [i for i in range(n_pair) if ks[i] == k_grid]
    x = np.array([taus[i] for i in row])
    y = pair_e[row]
    tau_best = max(refine_log_peak(x, y), local_floor, pfs_floor / k_best)
    curve = tuple((float(t), float(e), first_order(float(t), k_grid))
                  for t, e in zip(x, y, strict=True))

    if line:
        j = int(np.argmax(line_e))
        used_tau, used_k = line[j]
    elif fixed_local is not None and fixed_pfs is not None:
        used_tau, used_k = fixed_local, max(1, round(fixed_pfs / fixed_local))
    else:
        used_tau, used_k = tau_best, k_best
    return TwoTierChoice(float(used_tau), int(used_k), float(tau_best), int(k_best), curve, k_grid,
                         pfs_e)
