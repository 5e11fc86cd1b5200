"""Fitting the training-time model's constants to published rows, offline.

Constants are fitted per GPU generation (``perf_calibration.yaml``) and per software stack
(``stacks.yaml``), jointly over all the rows that share them, never per row. A key names what
it sets:

* ``gemm_efficiency`` - a generation constant of every row's GPU generation;
* ``hopper:gemm_efficiency`` - the same for one generation only;
* ``stack:torchtitan:elementwise_passes`` - a stack field for the rows run on that stack;
* ``stack:llm-foundry@ampere:attention_efficiency`` - a stack field on one generation;
* ``stack:torchtitan,torchtitan-compile@hopper:attention_efficiency`` - one value for several
  stacks (the same kernel).

:func:`fit` runs a coordinate search on the mean |log(predicted / published)| plus half the
absolute mean log error (so that a fit cannot trade a bias for a smaller spread). The fitted
values and the rows they were fitted to are recorded in the catalog entries' sources.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from clustertwin.perf.calibration import CalRow, row_system, run_row, stack_name
from clustertwin.perf.stacks import profile_of


def _split(key: str) -> tuple[str, str, str]:
    """(kind, target, field): kind 'gen' or 'stack'; target '' = every generation."""
    parts = key.split(":")
    if parts[0] == "stack" and len(parts) == 3:
        return "stack", parts[1], parts[2]
    if len(parts) == 2:
        return "gen", parts[0], parts[1]
    return "gen", "", parts[-1]


def _stack_target(target: str, sid: str, generation: str) -> bool:
    """Whether a key's stack target (``ID[,ID...][@GENERATION]``) names stack ``sid`` on
    ``generation``."""
    ids, _, gen = target.partition("@")
    return sid in ids.split(",") and gen in ("", generation)


def applies(key: str, sid: str, generation: str) -> bool:
    """Whether ``key`` sets anything for a row run on stack ``sid`` on ``generation`` (the test
    :func:`apply_values` makes)."""
    kind, target, _ = _split(key)
    if kind == "gen":
        return target in ("", generation)
    return _stack_target(target, sid, generation)


def apply_values(catalog: Any, row: CalRow, sys: Any, values: dict[str, float]) -> tuple[Any, Any]:
    """The row's System and StackProfile with the trial values applied."""
    gen = dict(sys.gen)
    sid = stack_name(catalog, row.stack)
    stack = profile_of(catalog, sid, sys.generation)
    over: dict[str, float] = {}
    for key, v in values.items():
        if not applies(key, sid, sys.generation):
            continue
        kind, _, field = _split(key)
        if kind == "gen":
            gen[field] = v
        else:
            over[field] = v
    return replace(sys, gen=gen), replace(stack, **over) if over else stack


def objective(catalog: Any, rows: list[CalRow], values: dict[str, float]) -> float:
    systems = {r.id: row_system(catalog, r) for r in rows}
    logs = []
    for r in rows:
        sys, stack = apply_values(catalog, r, systems[r.id], values)
        res, _ = run_row(catalog, r, system=sys, stack=stack)
        logs.append(np.log(res.predicted / res.published))
    e = np.asarray(logs)
    return float(np.mean(np.abs(e)) + 0.5 * abs(np.mean(e)))


def fit(
    catalog: Any,
    rows: list[CalRow],
    keys: dict[str, tuple[float, float, float]],
    sweeps: int = 3,
    steps: int = 7,
) -> tuple[dict[str, float], float]:
    """Fit ``keys`` (key -> (low, high, start)) jointly over ``rows``; returns (values,
    objective)."""
    best = {k: float(start) for k, (_, _, start) in keys.items()}
    best_obj = objective(catalog, rows, best)
    for sweep in range(sweeps):
        for k, (lo, hi, _) in keys.items():
            span = (hi - lo) / (2**sweep)
            for val in np.clip(np.linspace(best[k] - span / 2, best[k] + span / 2, steps), lo, hi):
                trial = {**best, k: float(val)}
                obj = objective(catalog, rows, trial)
                if obj < best_obj - 1e-9:
                    best, best_obj = trial, obj
    return best, best_obj
