"""The deadline solver per route (issue 21): ``decision.size_to_target: true`` sizes the
cluster of each route so that it trains by ``decision.target_date``.

Plan-level orchestration beside :mod:`clustertwin.deadline`: for each route of
``decision.options`` the wall-clock days left between the route's start date (P50 or P90 per
``decision.confidence``) and the target become ``cluster.deadline_days``, and the whole plan is
made again in deadline mode (the solver, the design, reliability, economics, build-out and this
route's decision). A resized cluster has its own start date (a smaller block of colocation
space or a smaller order arrives sooner), so the solve is repeated from the sized cluster's
start, less each round's miss, until it trains within :data:`TOLERANCE_DAYS` before the target
(issue 38: to convergence, at most :data:`ROUNDS` plans).
A route that starts after the target at the plan's size is first tried at smaller sizes
(halving, at most :data:`SHRINKS` times) to find a start date before the target.
"""

from __future__ import annotations

from typing import Any

from clustertwin.errors import UserError

#: the deadline solver's range (``cluster.deadline_days``)
MIN_DEADLINE_DAYS, MAX_DEADLINE_DAYS = 1.0, 1000.0
ROUNDS, SHRINKS = 4, 4
#: a sized route that trains this many days before the target is converged
TOLERANCE_DAYS = 7.0


def _days_left(scenario: Any, o: Any) -> float:
    """Days from the route's start (at the decision's confidence) to the target."""
    start = o.start_date_p90 if scenario.decision.confidence == "p90" else o.start_date
    return float((scenario.decision.target_date - start).days)


def _one(s: Any, mode: str, catalog: Any, make_plan: Any, **cluster: Any) -> Any:
    from clustertwin.scenario import with_updates

    s2 = with_updates(s, cluster=cluster, decision={"options": [mode], "size_to_target": False})
    return make_plan(s2, catalog).decision.option(mode)


def _start_in_time(plan: Any, mode: str, catalog: Any, make_plan: Any) -> tuple[float, Any]:
    """Days left after the route's start, at the plan's size or the first smaller one (halving)
    that starts before the target."""
    s = plan.scenario
    o = plan.decision.option(mode)
    days, gpus = _days_left(s, o), o.gpus
    for _ in range(SHRINKS):
        if days >= MIN_DEADLINE_DAYS or gpus <= 16:
            break
        gpus //= 2
        try:
            o = _one(s, mode, catalog, make_plan, gpus=gpus, deadline_days=None)
        except UserError:
            break
        days = _days_left(s, o)
    return days, o


def _solve(plan: Any, mode: str, catalog: Any, make_plan: Any, row: dict[str, Any]) -> Any:
    """The route's cluster solved for the target, repeated from each sized cluster's start."""
    s = plan.scenario
    days, sized = _start_in_time(plan, mode, catalog, make_plan)
    if days < MIN_DEADLINE_DAYS:
        row["error"] = f"starts {mode} after the target ({-days:.0f} days late before training)"
        return None
    target, conf = s.decision.target_date, s.decision.confidence
    best, late = None, MAX_DEADLINE_DAYS + 1.0   # best sized cluster meeting; least deadline that missed
    for k in range(ROUNDS):
        days = min(days, MAX_DEADLINE_DAYS)
        row["deadline_days"], row["rounds"] = days, k + 1
        sized = _one(s, mode, catalog, make_plan, gpus=None, deadline_days=days)
        # the solver meets wall-clock days of failures; the route adds its start date and the
        # other goodput losses: take the miss (or the slack) off the next round's deadline
        miss = float((sized.trained_by(conf) - target).days)
        if miss <= 0:
            best = sized if best is None or sized.cost_usd < best.cost_usd else best
            row["deadline_days"] = days
        else:
            late = min(late, days)
        nxt = days - miss - (1.0 if miss > 0 else 0.0)
        if -TOLERANCE_DAYS <= miss <= 0 or nxt < MIN_DEADLINE_DAYS or nxt >= late:
            break
        days = nxt
    return best or sized


def size_routes(plan: Any, catalog: Any, make_plan: Any) -> tuple[dict[str, Any], ...]:
    """``{mode, gpus, deadline_days, start_date, trained_by_p50, trained_by_p90, cost_usd,
    meets_target, rounds, error}`` per route: the route's own cluster solved for the target."""
    out = []
    for o in plan.decision.options:
        row: dict[str, Any] = {"mode": o.mode, "gpus": None, "deadline_days": None, "error": None}
        try:
            sized = _solve(plan, o.mode, catalog, make_plan, row)
        except UserError as exc:  # the deadline cannot be met at any size, or the input breaks
            row["error"] = "; ".join(exc.lines())[:300]
            sized = None
        if sized is not None:
            row.update(gpus=sized.gpus, start_date=sized.start_date.isoformat(),
                       trained_by_p50=sized.trained_by_p50.isoformat(),
                       trained_by_p90=sized.trained_by_p90.isoformat(), cost_usd=sized.cost_usd,
                       meets_target=sized.meets_target)
        out.append(row)
    return tuple(out)
