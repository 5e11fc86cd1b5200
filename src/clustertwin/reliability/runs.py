"""One simulated batch of runs for the reliability stage: the :class:`.montecarlo.RunSpec` of
the job, an event budget that refuses hopeless runs, and a call into the single-tier
(:func:`.montecarlo.simulate`) or two-tier (:func:`.tiers.simulate_tiers`) Monte Carlo."""

from __future__ import annotations

from typing import Any

import numpy as np

from clustertwin.errors import InfeasibleError, Problem
from clustertwin.reliability import interval as iv
from clustertwin.reliability.inputs import StageInputs
from clustertwin.reliability.montecarlo import Outcome, RunawayError, RunSpec, simulate
from clustertwin.reliability.tiers import simulate_tiers

#: events one run may take before it is declared hopeless
MAX_EVENTS = 5_000_000


def run_spec(inp: StageInputs, work_h: float) -> RunSpec:
    """The job of ``inp`` with ``work_h`` hours of failure-free compute to do."""
    rates = inp.rates
    return RunSpec(work_h=work_h, blocking_h=inp.blocking_s / 3600.0,
                   persist_h=inp.persist_s / 3600.0, restart_h=inp.restart_h,
                   rates_per_h=rates.rates_per_h, needs_repair=rates.needs_repair,
                   planned_per_h=rates.planned_per_h, repair_h=rates.repair_h,
                   spare_nodes=inp.spares)


def event_budget(inp: StageInputs, tau_min: float) -> int:
    """Refuse hopeless runs; return an event budget for one run at interval ``tau_min``."""
    if not inp.finite:
        return 1000
    r, rates = inp.r, inp.rates
    e = iv.ettr_daly(tau_min, inp.delta_min, inp.mtbf_min, r.restart_min) * inp.runnable
    lam_all = rates.unexpected_per_h + rates.planned_per_h
    events = inp.work_h * lam_all / max(e, 1e-300)
    if e < 1e-3 or events > MAX_EVENTS / 4:
        raise InfeasibleError([Problem(inp.src, "reliability",
                                       f"the job would almost never finish: a failure every "
                                       f"{inp.mtbf_min:.1f} min against a {r.restart_min:g} min "
                                       f"restart and {inp.blocking_s:.0f} s checkpoint stall; "
                                       "lower the failure rate, restart time or job size, or add "
                                       "spare nodes")])
    return int(min(MAX_EVENTS, max(10_000, 20 * events)))


def run(inp: StageInputs, work_h: float, local_min: Any, every: Any, on: Any, trials: int,
        rng_seq: Any, budget: int, **kw: Any) -> Outcome:
    """Simulate ``trials`` runs of each schedule (intervals in minutes; ``every`` and ``on``
    only for a two-tier job); a run that makes no progress is an :class:`InfeasibleError`."""
    try:
        if inp.tiers is None:
            return simulate(run_spec(inp, work_h), np.asarray(local_min) / 60.0, trials,
                            np.random.default_rng(rng_seq), max_events=budget, **kw)
        return simulate_tiers(run_spec(inp, work_h), inp.tiers, np.asarray(local_min) / 60.0,
                              every, trials, np.random.default_rng(rng_seq), local_on=on,
                              max_events=budget, **kw)
    except RunawayError as exc:
        raise InfeasibleError([Problem(inp.src, "reliability",
                                       f"the job makes no progress: {exc}")]) from None
