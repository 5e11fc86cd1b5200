"""The decision view: the answer and one row per route, the cash of each route as a figure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clustertwin.report import figures_flow

if TYPE_CHECKING:
    from clustertwin.decision.result import DecisionResult
    from clustertwin.report.views.base import Where


def rows(res: DecisionResult) -> list[tuple[str, str]]:
    from clustertwin.fmt import usd

    rows = [("answer", res.headline())]
    for o in res.options:
        mark = "yes" if o.meets_target else "no"
        rows.append((o.mode, f"{o.gpus:,} GPUs · start {o.start_date} · trained {o.trained_by_p50} "
                             f"(P90 {o.trained_by_p90}) · {usd(o.cost_usd)} · NPV {usd(o.npv_usd)} · "
                             f"peak cash {usd(o.cash_peak_usd)} · meets target: {mark}"))
    return rows


def figures(res: DecisionResult, where: Where | None = None) -> list[tuple[str, Any]]:  # noqa: ARG001
    """Cumulative cash out by route."""
    return [("cash by route", figures_flow.cash_figure(res))]
