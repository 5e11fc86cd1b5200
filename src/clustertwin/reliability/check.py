"""What the reliability stage refuses, found without its Monte Carlo (``clustertwin validate``).

:func:`check_inputs` makes the stage's input checks (the ``reliability.*`` keys, the failure
profile, the checkpoint intervals against the job's floors) and its refusal of a hopeless job
(a failure so often that the job would almost never finish) at the interval the search would
centre on: the scenario's file-system interval, or Daly's optimum. What only the simulation can
show (a run that stalls past its event budget) is left to ``plan``.
"""

from __future__ import annotations

from typing import Any


def check_inputs(scenario: Any, catalog: Any, estimate: Any, design: Any = None) -> None:
    """Raise the reliability stage's input errors for this job (none for a design-only plan,
    whose node-level reliability reads only the catalog's profile)."""
    if estimate is None:
        return
    from clustertwin.reliability.inputs import resolve_inputs
    from clustertwin.reliability.runs import event_budget
    from clustertwin.reliability.stage import _check

    _check(scenario)
    inp = resolve_inputs(scenario, catalog, estimate, design, [])
    if inp.finite and inp.rates.unexpected_per_h > 0:
        tau = inp.fixed_pfs if inp.fixed_pfs is not None else max(inp.daly, inp.floor_min)
        event_budget(inp, float(tau))
