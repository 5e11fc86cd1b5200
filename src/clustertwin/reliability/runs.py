"""One simulated batch of runs for the reliability stage: the :class:`.montecarlo.RunSpec` of
the job, an event budget that refuses hopeless runs, and a call into the single-tier
(:func:`.montecarlo.simulate`) or two-tier (:func:`.tiers.simulate_tiers`) Monte Carlo."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clustertwin.errors import InfeasibleError, Problem
from clustertwin.reliability.check import MAX_EVENTS, event_budget  # noqa: F401 - re-exported
from clustertwin.reliability.inputs import StageInputs
from clustertwin.reliability.montecarlo import Outcome, RunawayError, RunSpec, simulate
from clustertwin.reliability.tiers import simulate_tiers


def run_spec(inp: StageInputs, work_h: float) -> RunSpec:
    """The job of ``inp`` with ``work_h`` hours of failure-free compute to do."""
    rates = inp.rates
    return RunSpec(work_h=work_h, blocking_h=inp.blocking_s / 3600.0,
                   persist_h=inp.persist_s / 3600.0, restart_h=inp.restart_h,
                   rates_per_h=rates.rates_per_h, needs_repair=rates.needs_repair,
                   planned_per_h=rates.planned_per_h, repair_h=rates.repair_h,
                   spare_nodes=inp.spares)


@dataclass(frozen=True)
class Draws:
    """How much a simulation draws: ``trials`` runs per schedule from the seed sequence
    ``seq``, at most ``budget`` events per run."""

    trials: int
    seq: Any
    budget: int


def run(inp: StageInputs, work_h: float, local_min: Any, every: Any, on: Any, draws: Draws,
        **kw: Any) -> Outcome:
    """Simulate ``draws.trials`` runs of each schedule (intervals in minutes; ``every`` and
    ``on`` only for a two-tier job); a run that makes no progress is an :class:`InfeasibleError`."""
    trials, rng_seq, budget = draws.trials, draws.seq, draws.budget
    try:
        if inp.tiers is None:
            # a fresh generator per call, dropped after it: no need to rewind it
            return simulate(run_spec(inp, work_h), np.asarray(local_min) / 60.0, trials,
                            np.random.default_rng(rng_seq), max_events=budget, rewind=False,
                            **kw)
        return simulate_tiers(run_spec(inp, work_h), inp.tiers, np.asarray(local_min) / 60.0,
                              every, trials, np.random.default_rng(rng_seq), local_on=on,
                              max_events=budget, **kw)
    except RunawayError as exc:
        raise InfeasibleError([Problem(inp.src, "reliability",
                                       f"the job makes no progress: {exc}")]) from None
