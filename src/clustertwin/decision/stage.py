"""``decide``: the decision stage (pure). Per route, when the model is trained and for how much;
the best route is the cheapest one that meets the target at the chosen confidence."""

from __future__ import annotations

from typing import Any

from clustertwin.decision import cash
from clustertwin.decision.inputs import gather
from clustertwin.decision.options import BUILDERS, Option, gpus_to_meet
from clustertwin.decision.result import DecisionOption, DecisionResult, day_date
from clustertwin.decision.routes import residual_curve


def _option(o: Option, start: Any, settings: Any, node_gpus: int) -> DecisionOption:
    t50 = day_date(start, o.start[0] + o.wall[0])
    t90 = day_date(start, o.start[1] + o.wall[1])
    target = settings.target_date
    met = target is None or (t90 if settings.confidence == "p90" else t50) <= target
    return DecisionOption(
        mode=o.mode, gpus=o.gpus, ready_date=day_date(start, o.ready[0]),
        start_date=day_date(start, o.start[0]), trained_by_p50=t50, trained_by_p90=t90,
        cost_usd=float(o.flows.sum()), npv_usd=cash.npv(o.flows, settings.discount_rate),
        cash_peak_usd=cash.peak(o.flows), meets_target=met,
        ready_date_p90=day_date(start, o.ready[1]), start_date_p90=day_date(start, o.start[1]),
        wall_clock_days_p50=o.wall[0], wall_clock_days_p90=o.wall[1], capex_usd=o.capex_usd,
        residual_usd=o.residual_usd,
        cost_amortized_usd=float(o.flows.sum()) if o.amortized_usd is None else o.amortized_usd,
        cash_flow_usd_per_month=tuple(float(v) for v in o.flows),
        gpus_to_meet_target=(None if target is None else
                             gpus_to_meet(o, (target - start).days, node_gpus, settings.confidence)),
        notes=o.notes)


def best_of(options: list[DecisionOption], settings: Any) -> tuple[str | None, list[str]]:
    """The cheapest option meeting the target, or None and a warning naming the earliest."""
    met = [o for o in options if o.meets_target]
    if met:
        return min(met, key=lambda o: o.cost_usd).mode, []
    conf = settings.confidence
    first = min(options, key=lambda o: (o.trained_by(conf), o.cost_usd))
    return None, [f"no route trains the model by {settings.target_date} at {conf.upper()}: the earliest is "
                  f"{first.trained_by(conf)} via {first.mode}"]


def decide(scenario: Any, catalog: Any, training: Any, design: Any, reliability: Any,
           economics: Any, buildout: Any) -> DecisionResult | None:
    """Every route of ``decision.options`` dated and priced; None for a design-only plan or when
    economics did not run (nothing to price)."""
    if training is None or economics is None:
        return None
    settings = scenario.decision
    inp = gather(scenario, catalog, training, design, reliability, economics, buildout)
    curve = residual_curve(catalog, settings.residual_frac_per_year)
    built = [BUILDERS[m](inp, catalog, settings, curve) for m in settings.options]
    options = [_option(o, inp.start, settings, inp.node_gpus) for o in built]
    best, warnings = best_of(options, settings)
    notes = [inp.staff_note, "owned routes: cost = cash spent minus resale of the hardware at the run's end"]
    notes += [n for o in options for n in o.notes]
    if settings.target_date is None:
        notes.append("no decision.target_date: every route meets it; best = the cheapest")
    return DecisionResult(options=tuple(options), best=best, target_date=settings.target_date,
                          confidence=settings.confidence, start=settings.start,
                          discount_rate=settings.discount_rate, warnings=tuple(warnings),
                          notes=tuple(dict.fromkeys(notes)))
