"""The decision's headline in words: the route, its date and cost, how sure the answer is (the
route Monte Carlo's ``p_best``) and, with no target date, what each day sooner costs."""

from __future__ import annotations

from typing import Any

#: below this chance of being best, the answer is a knife edge and the headline says so
KNIFE_EDGE = 0.8


def _sooner(result: Any, o: Any) -> str:
    """With no target date: the earliest route (of those meeting a deadline scenario's run
    length) that trains sooner than ``o`` and what a day costs."""
    from clustertwin.fmt import usd

    conf = result.confidence
    faster = [x for x in result.options if x.meets_target and x.trained_by(conf) < o.trained_by(conf)]
    if not faster:
        return ""
    f = min(faster, key=lambda x: (x.trained_by(conf), x.cost_usd))
    days = (o.trained_by(conf) - f.trained_by(conf)).days
    extra = f.cost_usd - o.cost_usd
    if extra <= 0:
        return f"; {f.mode} trains {days:,} days sooner for {usd(-extra)} less"
    return f"; {f.mode} trains {days:,} days sooner for +{usd(extra)} ({usd(extra / days)} a day)"


def _close(result: Any, o: Any) -> str:
    if o.p_best is None or not result.knife_edge or result.best is None:
        return ""
    word = {"cost": "cheapest", "date": "earliest", "npv": "lowest NPV"}[result.objective]
    others = sorted((x for x in result.options if x.mode != o.mode and (x.p_best or 0) > 0),
                    key=lambda x: -(x.p_best or 0))
    tail = f"; {others[0].mode} otherwise" if others else ""
    return f" ({o.p_best:.0%} likely {word}{tail})"


def _sized(result: Any) -> str:
    """With ``decision.size_to_target``: the cheapest route whose own sized cluster meets the
    target (its GPUs, date and cost), "" when none does."""
    from clustertwin.fmt import usd

    met = [r for r in result.sized_rows if r.get("gpus") and r.get("meets_target")]
    if not met:
        return ""
    key = "trained_by_p90" if result.confidence == "p90" else "trained_by_p50"
    r = min(met, key=(lambda r: r[key]) if result.objective == "date" else (lambda r: r["cost_usd"]))
    return (f"Trained by {r[key]} ({result.confidence.upper()}) via {r['mode']} on {r['gpus']:,} GPUs "
            f"for {usd(r['cost_usd'])} (sized for the target)")


def headline(result: Any) -> str:
    """"Trained by DATE (P90) via ROUTE for $X", with the closeness of the answer and, without a
    target, the price of a sooner date."""
    from clustertwin.fmt import usd

    sized = _sized(result)
    if sized:
        return sized
    o = result.chosen()
    when = f"Trained by {o.trained_by(result.confidence).isoformat()} ({result.confidence.upper()})"
    if result.best is None and result.target_date is not None:
        return (f"Not trained by {result.target_date.isoformat()}: earliest {when[11:]} "
                f"via {o.mode} for {usd(o.cost_usd)}")
    line = f"{when} via {o.mode} for {usd(o.cost_usd)}" + _close(result, o)
    if result.target_date is None and result.objective != "date":
        line += _sooner(result, o)
    return line
