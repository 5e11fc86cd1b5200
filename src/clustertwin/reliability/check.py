"""What the reliability stage refuses, found without its Monte Carlo (``clustertwin validate``).

:func:`check_inputs` makes the stage's input checks (the ``reliability.*`` keys, the failure
profile, the checkpoint intervals against the job's floors) and its refusal of a hopeless job
(a failure so often that the job would almost never finish) at the interval the search would
centre on: the scenario's file-system interval, or Daly's optimum. What only the simulation can
show (a run that stalls past its event budget) is left to ``plan``.
"""

from __future__ import annotations

from typing import Any

from clustertwin.errors import InfeasibleError, Problem, ScenarioError
from clustertwin.reliability import interval as iv
from clustertwin.reliability.inputs import StageInputs

#: most Monte Carlo trials a scenario may ask for
MAX_TRIALS = 1_000_000
#: events one run may take before it is declared hopeless
MAX_EVENTS = 5_000_000


def check_inputs(scenario: Any, catalog: Any, estimate: Any, design: Any = None) -> None:
    """Raise the reliability stage's input errors for this job (none for a design-only plan,
    whose node-level reliability reads only the catalog's profile)."""
    if estimate is None:
        return
    from clustertwin.reliability.inputs import resolve_inputs

    check_keys(scenario)
    inp = resolve_inputs(scenario, catalog, estimate, design, [])
    if inp.finite and inp.rates.unexpected_per_h > 0:
        tau = inp.fixed_pfs if inp.fixed_pfs is not None else max(inp.daly, inp.floor_min)
        event_budget(inp, float(tau))


def check_keys(scenario: Any) -> None:
    """The ``reliability.*`` keys the stage refuses, all at once."""
    r, src = scenario.reliability, scenario.source
    problems = []

    def bad(key: str, msg: str) -> None:
        problems.append(Problem(src, f"reliability.{key}", msg))

    if r.failures_per_1000_node_days != "auto" and r.failures_per_1000_node_days < 0:
        bad("failures_per_1000_node_days", "must be 'auto' or a rate >= 0")
    if r.checkpoint_interval_min != "auto" and r.checkpoint_interval_min <= 0:
        bad("checkpoint_interval_min", "must be 'auto' or a number of minutes > 0")
    if r.checkpoint_blocking_s != "auto" and r.checkpoint_blocking_s < 0:
        bad("checkpoint_blocking_s", "must be 'auto' or a number of seconds >= 0")
    if r.restart_min < 0:
        bad("restart_min", "must be a number of minutes >= 0")
    if not 1 <= r.trials <= MAX_TRIALS:
        bad("trials", f"must be between 1 and {MAX_TRIALS:,}")
    if r.seed < 0:
        bad("seed", "must be an integer >= 0")
    local = r.local_checkpoint_interval_min
    if local not in ("none", "auto") and not (isinstance(local, (int, float)) and local > 0):
        bad("local_checkpoint_interval_min", "must be 'none', 'auto' or a number of minutes > 0")
    replicas = r.local_checkpoint_replicas
    if not isinstance(replicas, int) or replicas < 0:
        bad("local_checkpoint_replicas", "must be a whole number >= 0 (0 = node-local only)")
    for key in ("local_checkpoint_blocking_s", "local_checkpoint_write_s", "repair_h"):
        v = getattr(r, key)
        if v != "auto" and not (isinstance(v, (int, float)) and v >= 0):
            bad(key, "must be 'auto' or a number >= 0")
    if not isinstance(r.include_planned, bool):
        bad("include_planned", "must be true or false")
    if problems:
        raise ScenarioError(problems)


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
