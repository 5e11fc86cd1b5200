"""The checkpoint-interval search of the reliability stage, and the schedule it settles on.

Single tier: the simulated ETTR on a log grid of ``SEARCH_POINTS`` intervals around the Daly
optimum (common random numbers keep the curve smooth), refined by a parabola on a log axis.
Two tiers: :func:`.tiersearch.search` on the pairs (local interval, ``k``), with the
file-system-only curve on every other grid point. Without unexpected failures one checkpoint
at the end is enough. :func:`choose_intervals` then applies what the scenario fixes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from clustertwin.reliability import interval as iv
from clustertwin.reliability import tiersearch
from clustertwin.reliability.inputs import StageInputs
from clustertwin.reliability.runs import Draws, event_budget, run

#: trials and horizon of the interval search (common random numbers keep it smooth)
SEARCH_TRIALS = 256
SEARCH_FAILURES = 400
SEARCH_POINTS = 25

Curve = tuple[tuple[float, float, float], ...]


@dataclass(frozen=True)
class Intervals:
    """The search's findings and the schedule used, minutes (``every``: local checkpoints per
    file-system checkpoint; local fields None for a single-tier schedule)."""

    curve: Curve                        #: (interval, simulated ETTR, first-order ETTR)
    optimal: float
    used_min: float = math.nan
    source: str = "optimum"
    every: int = 1
    local_used: float | None = None
    local_optimal: float | None = None
    every_optimal: int | None = None
    local_source: str | None = None
    tier_curve: Curve = ()
    tier_curve_every: int | None = None


def _search_grid(floor_min: float, daly_min: float) -> np.ndarray:
    centre = max(daly_min, 2.0 * floor_min)
    lo = max(floor_min, centre / 8.0)
    hi = max(centre * 8.0, lo * 4.0)
    return np.geomspace(lo, hi, SEARCH_POINTS)


def search_horizon(inp: StageInputs) -> float:
    """Hours simulated per search trial: about ``SEARCH_FAILURES`` failures, at most the run."""
    return min(inp.work_h, SEARCH_FAILURES * inp.rates.mtbf_h * inp.slow)


def _ettr(out: Any) -> np.ndarray:
    return out.work_h.sum(axis=1) / out.wall_h.sum(axis=1)


def _two_tier(inp: StageInputs, grid: np.ndarray, simulate: Any, notes: list[str]) -> Intervals:
    """The two-tier search; ``grid`` is the file-system-only curve's intervals."""
    assert inp.lt is not None and inp.tiers is not None
    r, mtbf_min, delta_min, q_loss = inp.r, inp.mtbf_min, inp.delta_min, inp.q_loss
    dl_min, rl_min = inp.lt.blocking_s / 60.0, inp.tiers.local_restart_h * 60.0
    choice = tiersearch.search(
        simulate, grid,
        tiersearch.Bounds(inp.local_floor_min, inp.floor_min, inp.fixed_local, inp.fixed_pfs),
        lambda k: iv.two_tier_young(dl_min, delta_min, k, mtbf_min, q_loss),
        lambda t, k: iv.ettr_two_tier(t, k, (dl_min, delta_min), mtbf_min, q_loss,
                                      (rl_min, r.restart_min)))
    if choice.optimal_every >= max(tiersearch.K_SET):
        notes.append(f"the best schedule writes the file system as rarely as the search "
                     f"allows (every {choice.optimal_every} local checkpoints): no "
                     "simulated failure needs it; set checkpoint_interval_min for the "
                     "durability you want against losses the model leaves out")
    return Intervals(curve=_curve(inp, grid, choice.pfs_only_sim),
                     optimal=choice.optimal_every * choice.optimal_local_min,
                     every=choice.every, local_used=choice.local_min,
                     local_optimal=choice.optimal_local_min, every_optimal=choice.optimal_every,
                     tier_curve=choice.curve, tier_curve_every=choice.curve_every)


def _curve(inp: StageInputs, grid: np.ndarray, sim: np.ndarray) -> Curve:
    return tuple((float(g), float(s), iv.ettr_daly(float(g), inp.delta_min, inp.mtbf_min,
                                                   inp.r.restart_min))
                 for g, s in zip(grid, sim, strict=True))


def _search(inp: StageInputs, search_seq: Any, notes: list[str]) -> Intervals:
    """The simulated-ETTR search over file-system (and local) intervals."""
    grid = _search_grid(inp.floor_min, inp.daly)
    budget = event_budget(inp, float(grid[len(grid) // 2]))
    horizon = search_horizon(inp)
    trials = min(inp.r.trials, SEARCH_TRIALS)
    if inp.tiers is None:
        sim = _ettr(run(inp, horizon, grid, 1, False, Draws(trials, search_seq, budget)))
        return Intervals(curve=_curve(inp, grid, sim),
                         optimal=max(inp.floor_min, iv.refine_log_peak(grid, sim)))

    def simulate(tau: np.ndarray, k: np.ndarray, on: np.ndarray) -> np.ndarray:
        return _ettr(run(inp, horizon, tau, k, on, Draws(trials, search_seq, budget)))

    # every other grid point: the file-system-only curve, for comparison and the figure
    return _two_tier(inp, grid[::2], simulate, notes)


def _no_failures(inp: StageInputs, notes: list[str]) -> Intervals:
    """Without unexpected failures: one checkpoint at the end of the run."""
    optimal = max(inp.work_h * 60.0, inp.floor_min)
    found = Intervals(curve=(), optimal=optimal)
    if inp.tiers is not None:
        local_used = inp.fixed_local if inp.fixed_local is not None else optimal
        found = Intervals(curve=(), optimal=optimal, local_optimal=optimal, every_optimal=1,
                          local_used=local_used,
                          every=max(1, math.ceil(optimal / local_used - 1e-9)))
    notes.append("no unexpected failures: one checkpoint at the end is enough")
    return found


def _schedule(inp: StageInputs, found: Intervals, notes: list[str]) -> Intervals:
    """The intervals used: the optimum where the scenario says ``auto``, else its numbers."""
    fixed_pfs, fixed_local = inp.fixed_pfs, inp.fixed_local
    if inp.tiers is None:
        if fixed_pfs is None:
            return replace(found, used_min=found.optimal, source="optimum")
        return replace(found, used_min=fixed_pfs, source="scenario")
    local_used, every = found.local_used, found.every
    if fixed_local is not None and fixed_pfs is not None:
        local_used = fixed_local
        every = max(1, round(fixed_pfs / fixed_local),
                    math.ceil(inp.floor_min / fixed_local - 1e-9))
        if abs(every * fixed_local - fixed_pfs) > 0.01 * fixed_pfs:
            notes.append(f"file-system checkpoints go with every {every}th local one: every "
                         f"{every * fixed_local:g} min instead of {fixed_pfs:g} min")
    used_min = fixed_pfs if (fixed_pfs is not None and fixed_local is None) else every * local_used
    return replace(found, used_min=used_min, local_used=local_used, every=every,
                    source="optimum" if fixed_pfs is None else "scenario",
                    local_source="optimum" if fixed_local is None else "scenario")


def choose_intervals(inp: StageInputs, search_seq: Any, notes: list[str]) -> Intervals:
    """Search the intervals (when there are unexpected failures) and settle the schedule."""
    if inp.finite and inp.rates.unexpected_per_h > 0:
        found = _search(inp, search_seq, notes)
    else:
        found = _no_failures(inp, notes)
    return _schedule(inp, found, notes)
