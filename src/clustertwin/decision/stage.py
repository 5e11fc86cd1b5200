"""``decide``: the decision stage (pure). Per route, when the model is trained and for how much
on both cost bases; the best route is the one meeting the target at the chosen confidence with
the lowest cost on the chosen basis (``decision.objective: cost``), the earliest trained-by
(``date``) or the lowest net present value (``npv``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from clustertwin.decision import cash
from clustertwin.decision.inputs import Inputs, Upstream, gather
from clustertwin.decision.options import BUILDERS, Option, cloud_gpus, gpus_to_meet
from clustertwin.decision.result import DecisionOption, DecisionResult, day_date

HOURS_PER_DAY = 24.0
#: a run solved for a deadline may end within this part of a day past it (the solver's rounding)
DEADLINE_SLACK_DAYS = 0.5


def usage_flows(o: Option) -> np.ndarray:
    """The usage-basis cost spread evenly over the run (its cash flows for the NPV)."""
    return cash.spread(np.zeros(1), o.start[0], o.start[0] + o.wall[0],
                       o.usage_usd / max(o.wall[0], 1e-9))


def _option(o: Option, start: Any, settings: Any, node_gpus: int, deadline: float | None = None) -> DecisionOption:
    """The contract's option; ``deadline``: a deadline scenario's ``cluster.deadline_days``, the
    wall-clock days the run must fit in on every route (its mean, the deadline solver's basis)."""
    t50 = day_date(start, o.start[0] + o.wall[0])
    t90 = day_date(start, o.start[1] + o.wall[1])
    target = settings.target_date
    k = 1 if settings.confidence == "p90" else 0
    met = target is None or (t90 if k else t50) <= target
    met = met and (deadline is None or o.wall[0] <= deadline + DEADLINE_SLACK_DAYS)
    exit_usd = float(o.flows.sum())
    flows = o.flows if settings.basis == "exit" else usage_flows(o)
    cost = exit_usd if settings.basis == "exit" else o.usage_usd
    return DecisionOption(
        mode=o.mode, gpus=o.gpus, ready_date=day_date(start, o.ready[0]),
        start_date=day_date(start, o.start[0]), trained_by_p50=t50, trained_by_p90=t90,
        cost_usd=cost, npv_usd=cash.npv(flows, settings.discount_rate),
        cash_peak_usd=cash.peak(o.flows), meets_target=met,
        ready_date_p90=day_date(start, o.ready[1]), start_date_p90=day_date(start, o.start[1]),
        wall_clock_days_p50=o.wall[0], wall_clock_days_p90=o.wall[1], capex_usd=o.capex_usd,
        residual_usd=o.residual_usd, cost_usage_usd=o.usage_usd, cost_exit_usd=exit_usd,
        usd_per_gpu_hour=cost / max(o.gpus * o.wall[0] * HOURS_PER_DAY, 1e-9),
        hardware_lead_days_p50=o.lead_days, mfu=o.mfu, commitment_months=o.commitment_months,
        cash_flow_usd_per_month=tuple(float(v) for v in flows),
        gpus_to_meet_target=(None if target is None else
                             gpus_to_meet(o, (target - start).days, node_gpus, settings.confidence)),
        notes=o.notes)


def objective_key(settings: Any) -> Callable[[DecisionOption], Any]:
    conf = settings.confidence
    if settings.objective == "date":
        return lambda o: (o.trained_by(conf), o.cost_usd)
    if settings.objective == "npv":
        return lambda o: o.npv_usd
    return lambda o: o.cost_usd


def best_of(options: list[DecisionOption], settings: Any) -> tuple[str | None, list[str]]:
    """The option meeting the target that is best on ``decision.objective``, or None and a
    warning naming the earliest."""
    met = [o for o in options if o.meets_target]
    if met:
        return min(met, key=objective_key(settings)).mode, []
    conf = settings.confidence
    first = min(options, key=lambda o: (o.trained_by(conf), o.cost_usd))
    return None, [f"no route trains the model by {settings.target_date} at {conf.upper()}: the earliest is "
                  f"{first.trained_by(conf)} via {first.mode}"]


def _route_inputs(mode: str, inp: Inputs, catalog: Any, settings: Any, replan: Any,
                  notes: list[str]) -> Inputs:
    """The run as this route runs it: the cloud route at its cap is planned again at its own GPU
    count (``replan(gpus) -> (wall_p50, wall_p90, mfu, gpus the run uses)``: MFU, ETTR and
    goodput of its own; the spare nodes a cluster of that size keeps are not rented)."""
    if mode != "cloud":
        return inp
    gpus = cloud_gpus(inp, catalog, settings)
    if gpus >= inp.gpus:
        return inp
    if replan is None:  # no planner at hand: hold the GPU-days (progress proportional to GPUs)
        scale = inp.gpus / gpus
        notes.append(f"cloud: {inp.gpus:,} GPUs is past the {gpus:,} one account gets on demand; "
                     f"the run uses {gpus:,} and takes {scale:.1f}x as long (GPU-days held)")
        return dataclasses.replace(inp, gpus=gpus, wall_p50=inp.wall_p50 * scale, wall_p90=inp.wall_p90 * scale)
    w50, w90, mfu, used = replan(gpus)
    gpus = int(used)
    notes.append(f"cloud: {inp.gpus:,} GPUs is past the {gpus:,} one account gets on demand; the run "
                 f"is planned again on {gpus:,} GPUs (MFU {mfu:.1%}, {w50:,.0f} wall-clock days)")
    return dataclasses.replace(inp, gpus=gpus, wall_p50=w50, wall_p90=max(w50, w90), mfu=mfu)


def decide(scenario: Any, catalog: Any, upstream: Upstream, replan: Any = None) -> DecisionResult | None:
    """Every route of ``decision.options`` dated and priced from the earlier stages' results;
    None for a design-only plan or when economics did not run (nothing to price).
    ``replan(gpus)`` plans the run at another GPU count (the plan supplies it; without it a
    route at another count holds the run's GPU-days)."""
    training, design, reliability, economics, buildout = upstream
    if training is None or economics is None:
        return None
    settings = scenario.decision
    inp = gather(scenario, catalog, training, design, reliability, economics, buildout)
    route_notes: list[str] = []
    route_inp = {m: _route_inputs(m, inp, catalog, settings, replan, route_notes) for m in settings.options}
    built = {m: BUILDERS[m](route_inp[m], catalog, settings) for m in settings.options}
    deadline = inp.deadline_days
    options = [_option(o, inp.start, settings, inp.node_gpus, deadline) for o in built.values()]
    best, warnings = best_of(options, settings)
    options, extra = _uncertain(options, best, built, route_inp, catalog, settings, inp)
    notes = [inp.staff_note, BASIS_NOTES[settings.basis], *route_notes]
    notes += [n for o in options for n in o.notes]
    if deadline is not None:
        own = scenario.cluster.deadline_days
        notes.append(f"cluster.deadline_days {own:g}: a route meets the target only if its run fits in "
                     f"{own:g} days of failures and restarts ({deadline:.1f} wall-clock days with the other goodput losses)")
    elif settings.target_date is None:
        notes.append(f"no decision.target_date: every route meets it; best on the objective ({settings.objective})")
    return DecisionResult(options=tuple(options), best=best, target_date=settings.target_date,
                          confidence=settings.confidence, start=settings.start,
                          discount_rate=settings.discount_rate, basis=settings.basis,
                          objective=settings.objective, warnings=tuple(warnings), **extra,
                          notes=tuple(dict.fromkeys(notes)))


def _score(settings: Any) -> Callable[[Option], float]:
    """The number the objective ranks a route by on the chosen basis (cost, or NPV)."""
    def score(o: Option) -> float:
        if settings.objective == "npv":
            return cash.npv(o.flows if settings.basis == "exit" else usage_flows(o), settings.discount_rate)
        return float(o.flows.sum()) if settings.basis == "exit" else o.usage_usd
    return score


def runner_up(options: list[DecisionOption], best: str, settings: Any) -> DecisionOption | None:
    """The second route on the objective among those meeting the target (None if no other does)."""
    met = [o for o in options if o.mode != best and o.meets_target]
    return min(met, key=objective_key(settings)) if met else None


def _uncertain(options: list[DecisionOption], best: str | None, built: dict[str, Option],
               route_inp: dict[str, Inputs], catalog: Any, settings: Any,
               inp: Inputs) -> tuple[list[DecisionOption], dict[str, Any]]:
    """The route Monte Carlo's chances per option, the margin, drivers and break-even inputs
    (``built``: each route's option as the decision priced it, the tornado's P50 case)."""
    from clustertwin.decision import uncertainty as mc

    chosen = best or min(options, key=lambda o: (o.trained_by(settings.confidence), o.cost_usd)).mode
    runner = runner_up(options, chosen, settings)
    extra: dict[str, Any] = {"margin_usd": None if runner is None else
                             runner.cost_usd - next(o for o in options if o.mode == chosen).cost_usd}
    n = settings.uncertainty.samples
    if n <= 0:
        return options, extra
    spreads = [mc.spread_of(m, route_inp[m], catalog, settings,
                            lambda i, m=m: BUILDERS[m](i, catalog, settings), _score(settings), built[m])
               for m in settings.options]
    target = None if settings.target_date is None else float((settings.target_date - inp.start).days)
    meets, top = mc.simulate(spreads, target, settings.objective, n, settings.uncertainty.seed,
                             inp.deadline_days)
    options = [o.model_copy(update={"p_meets_target": float(meets[:, k].mean()), "p_best": float(top[:, k].mean())})
               for k, o in enumerate(options)]
    p_best = next(o.p_best for o in options if o.mode == chosen)
    extra.update(knife_edge=bool(p_best is not None and p_best < mc_knife()),
                 drivers=mc.drivers(spreads, chosen, runner.mode if runner else None),
                 break_even=mc.break_even(spreads, chosen, runner.mode if runner else None))
    return options, extra


def mc_knife() -> float:
    from clustertwin.decision.words import KNIFE_EDGE

    return KNIFE_EDGE


BASIS_NOTES = {
    "usage": ("basis usage: each route pays for the capacity-time the run uses (owned hardware and "
              "facility by a capital-recovery charge at the discount rate, plus O&M, rent and opex)"),
    "exit": ("basis exit: every commitment paid (lease and colocation minimum terms), owned "
             "hardware sold after the run at its market value by product age, less a disposal haircut"),
}
