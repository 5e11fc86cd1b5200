"""The deadline solver per route (issue 21): ``decision.size_to_target: true`` sizes the
cluster of each route so that it trains by ``decision.target_date``.

Plan-level orchestration beside :mod:`clustertwin.deadline`: for each route of
``decision.options`` the wall-clock days left between the route's start date (from the plan
as given, P50 or P90 per ``decision.confidence``) and the target become ``cluster.deadline_days``,
and the whole plan is made again in deadline mode (the solver, the design, reliability,
economics, build-out and this route's decision). One round: a resized cluster's own start date
(a different delivery time or build-out) is reported, not solved again, so a route may still
miss by a little; its ``meets_target`` says so.
"""

from __future__ import annotations

from typing import Any

from clustertwin.errors import UserError

#: the deadline solver's range (``cluster.deadline_days``)
MIN_DEADLINE_DAYS, MAX_DEADLINE_DAYS = 1.0, 1000.0


def _days_left(plan: Any, mode: str) -> float:
    s = plan.scenario
    o = plan.decision.option(mode)
    start = o.start_date_p90 if s.decision.confidence == "p90" else o.start_date
    return float((s.decision.target_date - start).days)


def size_routes(plan: Any, catalog: Any, make_plan: Any) -> tuple[dict[str, Any], ...]:
    """``{mode, gpus, deadline_days, start_date, trained_by_p50, trained_by_p90, cost_usd,
    meets_target, error}`` per route: the route's own cluster solved for the target."""
    from clustertwin.scenario import with_updates

    s = plan.scenario
    out = []
    for o in plan.decision.options:
        row: dict[str, Any] = {"mode": o.mode, "gpus": None, "deadline_days": None, "error": None}
        days = _days_left(plan, o.mode)
        if days < MIN_DEADLINE_DAYS:
            row["error"] = f"starts {o.mode} after the target ({-days:.0f} days late before training)"
            out.append(row)
            continue
        days = min(days, MAX_DEADLINE_DAYS)
        row["deadline_days"] = days
        try:
            s2 = with_updates(s, cluster={"gpus": None, "deadline_days": days},
                              decision={"options": [o.mode], "size_to_target": False})
            sized = make_plan(s2, catalog).decision.option(o.mode)
        except UserError as exc:  # the deadline cannot be met at any size, or the input breaks
            row["error"] = "; ".join(exc.lines())[:300]
            out.append(row)
            continue
        row.update(gpus=sized.gpus, start_date=sized.start_date.isoformat(),
                   trained_by_p50=sized.trained_by_p50.isoformat(),
                   trained_by_p90=sized.trained_by_p90.isoformat(), cost_usd=sized.cost_usd,
                   meets_target=sized.meets_target)
        out.append(row)
    return tuple(out)
