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
    if res.margin_usd is not None:
        rows.append(("margin", f"{usd(res.margin_usd)} to the runner-up ({res.basis} basis)"))
    if res.drivers:
        rows.append(("drivers", ", ".join(f"{d['input'].replace('_', ' ')} (x{d['low']:.2f}-x{d['high']:.2f}: "
                                          f"{usd(d['cost_low_usd'])}-{usd(d['cost_high_usd'])})"
                                          for d in res.drivers)))
    if res.break_even:
        rows.append(("break-even", ", ".join(f"{b['input'].replace('_', ' ')} x{b['multiplier']:.2f} -> {b['route']}"
                                             for b in res.break_even)))
    for o in res.options:
        mark = "yes" if o.meets_target else "no"
        rows.append((o.mode, f"{o.gpus:,} GPUs · start {o.start_date} · trained {o.trained_by_p50} "
                             f"(P90 {o.trained_by_p90}) · {usd(o.cost_usd)} · NPV {usd(o.npv_usd)} · "
                             f"peak cash {usd(o.cash_peak_usd)} · meets target: {mark}"))
    return rows


def figures(res: DecisionResult, where: Where | None = None) -> list[tuple[str, Any]]:  # noqa: ARG001
    """Cumulative cash out by route; what moves the answer (the route Monte Carlo's drivers)."""
    out = [("cash by route", figures_flow.cash_figure(res))]
    if res.drivers:
        out.append(("what moves the answer", tornado(res)))
    return out


def tornado(res: DecisionResult) -> Any:
    """The recommended route's cost at each driver's P10 and P90 (route Monte Carlo inputs)."""
    import plotly.graph_objects as go

    base = res.chosen().cost_usd / 1e6
    drivers = list(reversed(res.drivers))
    names = [f"{d['input'].replace('_', ' ')} x{d['low']:.2f}-x{d['high']:.2f}" for d in drivers]
    fig = go.Figure()
    for end, key in (("P10", "cost_low_usd"), ("P90", "cost_high_usd")):
        fig.add_trace(go.Bar(y=names, x=[d[key] / 1e6 - base for d in drivers], base=base,
                             orientation="h", name=f"input at its {end}"))
    fig.update_layout(title=f"{res.chosen().mode}: cost ($M, {res.basis} basis) as each input moves",
                      barmode="overlay", xaxis_title="$M", height=320)
    return fig
