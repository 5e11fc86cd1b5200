"""The route Monte Carlo (``decision.uncertainty``): how sure is the answer?

Inputs drawn (independently, each on a normal spread between its P10 and P90 multiplier):
GPU lead time (each route's own ready/start P50-P90 without the utility: the generation's order
lead time and the build-out's go-live; one draw shared by every route, one market), the
region's utility interconnection time (a greenfield build's start is the later of its own and a
lognormal draw through the region's P50/P90 for the facility's MW), the MFU band
(the training stack's calibration band, ``training.days_low/high``), ETTR (each route's own
wall-clock P50-P90 from the reliability stage), hardware price, rental price (lease and on
demand), colocation rent and resale value (catalog ``route uncertainty``).

Vectorised, seeded: every route is priced again at each input's P10 and P90 (the same builders
the decision uses), and a draw's cost is the route's P50 cost plus each input's effect, linear
on each side of the P50 between those two prices. Dates move with the lead time and the
wall-clock multipliers. Out: per route ``p_meets_target`` and ``p_best`` (best on the objective
among the routes meeting the target in that draw), the drivers (inputs that move the margin
between the best route and the runner-up most) and the break-even multiplier of each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from clustertwin.decision.routes import route

Z90 = 1.2816   #: the normal quantile of P90 (P10 at -Z90)
COST_INPUTS = ("mfu", "ettr", "hardware_price", "rental_price", "colo_rent", "resale")
INPUTS = ("gpu_lead_time", *COST_INPUTS)


@dataclass(frozen=True)
class Outcome:
    """The route Monte Carlo's answer: chances to meet the target and to be best, and drivers."""

    p_meets: dict[str, float]
    p_best: dict[str, float]
    drivers: tuple[dict[str, Any], ...]
    break_even: tuple[dict[str, Any], ...]


def _spread(catalog: Any, key: str) -> tuple[float, float]:
    u = route(catalog, "uncertainty")
    return u.value(f"{key}_p10"), u.value(f"{key}_p90")


def bounds(catalog: Any, inp: Any, wall: tuple[float, float]) -> dict[str, tuple[float, float]]:
    """(P10, P90) multiplier of each cost input for a route with wall-clock days ``wall``."""
    ettr_hi = wall[1] / wall[0] if wall[0] > 0 else 1.0
    return {"mfu": inp.mfu_band, "ettr": (max(0.5, 2.0 - ettr_hi), ettr_hi),
            "hardware_price": _spread(catalog, "hardware_price"),
            "rental_price": _spread(catalog, "rental_price"),
            "colo_rent": _spread(catalog, "colo_rent"), "resale": _spread(catalog, "resale")}


#: the :class:`~clustertwin.decision.inputs.Inputs` fields each cost input multiplies
MOVES = {"mfu": ("wall_p50", "wall_p90"), "ettr": ("wall_p50", "wall_p90"),
         "hardware_price": ("it_capex", "fitout_capex"), "rental_price": ("rental_scale",),
         "colo_rent": ("colo_scale",), "resale": ("resale_scale",)}


def moved(inp: Any, name: str, m: float) -> Any:
    """``inp`` with one input multiplied by ``m``."""
    return inp.scaled(m, *MOVES[name])


def multiplier(z: np.ndarray, lo: float | np.ndarray, hi: float | np.ndarray) -> np.ndarray:
    """A normal draw ``z`` mapped to a multiplier: 1 at z = 0, ``lo`` at P10, ``hi`` at P90
    (``lo``/``hi`` a column per route broadcast against a row of draws: a row per route)."""
    return np.clip(1.0 + np.where(z > 0, hi - 1.0, 1.0 - lo) * z / Z90, 0.05, None)


@dataclass(frozen=True)
class RouteSpread:
    """One route's P50 score and dates, and its score at each cost input's P10 and P90."""

    mode: str
    score: float
    low: np.ndarray          #: score at each COST_INPUTS' P10
    high: np.ndarray
    start: tuple[float, float]
    wall: tuple[float, float]
    mults: np.ndarray        #: (len(COST_INPUTS), 2) the P10/P90 multipliers used
    grid: tuple[float, float] = (0.0, 0.0)  #: the region's interconnection wait (P50, P90); 0: none


def spread_of(mode: str, inp: Any, catalog: Any, settings: Any, build: Callable[..., Any],
              score: Callable[[Any], float], base: Any = None) -> RouteSpread:
    """Price route ``mode`` (``build(inputs)`` -> Option) at the P50 and at each input's P10/P90;
    ``base``: ``build(inp)`` when the caller has it already."""
    base = build(inp) if base is None else base
    b = bounds(catalog, inp, base.wall)
    lows, highs, mults = [], [], []
    for name in COST_INPUTS:
        lo, hi = b[name]
        lows.append(score(build(moved(inp, name, lo))) if lo != 1.0 else score(base))
        highs.append(score(build(moved(inp, name, hi))) if hi != 1.0 else score(base))
        mults.append((lo, hi))
    start = base.start if base.start_own is None else base.start_own
    return RouteSpread(mode, score(base), np.array(lows), np.array(highs), start, base.wall,
                       np.array(mults), base.grid)


def interconnection(z: np.ndarray, grid: tuple[float, float]) -> np.ndarray:
    """Days to energisation for normal draws ``z``: lognormal with the region's P50 as its
    median and its P90 at the 90th percentile (0 days where there is no wait)."""
    p50, p90 = grid
    if p50 <= 0:
        return np.zeros_like(z)
    sigma = np.log(max(p90, p50) / p50) / Z90
    return p50 * np.exp(sigma * z)


def simulate(spreads: list[RouteSpread], target_days: float | None, objective: str,
             samples: int, seed: int, deadline: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(meets, best) boolean arrays of shape (samples, routes); ``deadline``: wall-clock days the
    run must fit in (a deadline scenario's). Every route in one pass, a row per route."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((samples, len(INPUTS))).T.copy()  # a row of draws per input
    z_grid = rng.standard_normal(samples)  # the region's utility: one queue, every greenfield build
    score = _scores(spreads, z[1:]).T
    s0, s1 = _column([r.start[0] for r in spreads]), _column([r.start[1] for r in spreads])
    lead = s0 + (s1 - s0) * z[0] / Z90
    lead = np.maximum(lead, np.maximum(0.0, s0 - (s1 - s0)))
    lead = np.maximum(lead, np.stack([interconnection(z_grid, r.grid) for r in spreads]))
    m = np.array([r.mults for r in spreads])[:, :, :, None]  # (routes, inputs, P10/P90, 1)
    wall = (_column([r.wall[0] for r in spreads]) * multiplier(z[1], m[:, 0, 0], m[:, 0, 1])
            * multiplier(z[2], m[:, 1, 0], m[:, 1, 1]))
    day = (lead + wall).T
    meets = np.ones_like(day, dtype=bool) if target_days is None else day <= target_days
    if deadline is not None:
        meets &= wall.T <= deadline + 0.5
    key = day if objective == "date" else score
    ranked = np.where(meets, key, np.inf)
    best = np.zeros_like(meets)
    anyone = meets.any(axis=1)
    best[np.arange(len(best))[anyone], np.argmin(ranked, axis=1)[anyone]] = True
    return meets, best


def _column(values: list[float]) -> np.ndarray:
    return np.array(values, dtype=float)[:, None]


def _scores(spreads: list[RouteSpread], z: np.ndarray) -> np.ndarray:
    """(routes, samples) scores for the cost inputs' draws ``z`` (a row per input): the P50
    score plus each input's effect in input order, linear on each side of its P50."""
    base = _column([r.score for r in spreads])
    up = np.array([r.high for r in spreads]) - base  # (routes, inputs): P90 less P50
    down = base - np.array([r.low for r in spreads])
    total = None
    for k, zk in enumerate(z):
        effect = np.where(zk > 0, up[:, k:k + 1], down[:, k:k + 1]) * zk / Z90
        total = effect if total is None else total + effect
    return base + total


def drivers(spreads: list[RouteSpread], best: str, runner: str | None, top: int = 5) -> tuple[dict[str, Any], ...]:
    """The inputs that move the margin between the best route and the runner-up most (the best
    route's own cost swing without a runner-up), with the best route's cost at each end."""
    b = next(r for r in spreads if r.mode == best)
    u = next((r for r in spreads if r.mode == runner), None)
    rows = []
    for k, name in enumerate(COST_INPUTS):
        if u is not None:
            swing = max(abs((u.low[k] - b.low[k]) - (u.score - b.score)),
                        abs((u.high[k] - b.high[k]) - (u.score - b.score)))
        else:
            swing = abs(b.high[k] - b.low[k])
        rows.append((swing, {"input": name, "low": float(b.mults[k][0]), "high": float(b.mults[k][1]),
                             "cost_low_usd": float(b.low[k]), "cost_high_usd": float(b.high[k])}))
    rows.sort(key=lambda t: -t[0])
    return tuple(r for s, r in rows[:top] if s > 0)


def break_even(spreads: list[RouteSpread], best: str, runner: str | None) -> tuple[dict[str, Any], ...]:
    """Per input, the multiplier (linear beyond its P10/P90) at which the runner-up costs as much
    as the best route; inputs that cannot close the margin between x0.2 and x5 are left out."""
    b = next(r for r in spreads if r.mode == best)
    u = next((r for r in spreads if r.mode == runner), None)
    if u is None:
        return ()
    margin = u.score - b.score
    out = []
    for k, name in enumerate(COST_INPUTS):
        for side, m in ((0, b.mults[k][0]), (1, b.mults[k][1])):
            d_margin = ((u.low if side == 0 else u.high)[k] - (b.low if side == 0 else b.high)[k]) - margin
            if m == 1.0 or d_margin == 0 or np.sign(d_margin) != -np.sign(margin):
                continue
            x = 1.0 + (m - 1.0) * (-margin / d_margin)
            if 0.2 <= x <= 5.0:
                out.append({"input": name, "multiplier": round(float(x), 4), "route": runner})
    return tuple(out)
