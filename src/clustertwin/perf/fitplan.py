"""Which constants of the training-time model are fitted, on which rows, from which priors.

The catalog's figures are of two kinds. *Priors* are set from microbenchmarks, kernel papers
and documentation and never move with the calibration rows (launch gaps of stacks without rows
of their own, HBM reserve, interference, bucket sizes, fabric efficiencies, the MoE imbalance,
...: each entry's ``source`` says how it was set). *Fitted* constants are listed here, in
groups: a group's keys (:mod:`clustertwin.perf.fitting` key syntax) are fitted jointly, from
their priors, on the steady-state rows the group selects (by stack family and GPU generation),
in the order of :data:`GROUPS` (a later group is fitted with the earlier groups' values set).

:func:`refit` runs that procedure on any set of rows: on all published rows it is the
calibration; on all rows but one source's it is one fold of the leave-one-source-out check
that refits *every* fitted constant (:func:`clustertwin.perf.crossval.refit_cross_validate`).
A group left with no rows (its only source left out) keeps its priors: what the model would
say about a stack it has never seen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from clustertwin.perf.calibration import CalRow, row_system, run_row, stack_name
from clustertwin.perf.fitting import applies, apply_values

#: coordinate-search passes and grid points per key (perf.fitting.fit's defaults: 3 and 7)
SWEEPS, STEPS = 3, 5


@dataclass(frozen=True)
class FitGroup:
    """Constants fitted together: key -> (low, high, prior) and the rows they are fitted on
    (stack families and GPU generations; empty = any)."""

    id: str
    keys: dict[str, tuple[float, float, float]]
    families: tuple[str, ...]
    generations: tuple[str, ...] = ()
    why: str = ""


#: the fitted constants, in fitting order; priors as documented in the catalog entries
GROUPS: tuple[FitGroup, ...] = (
    FitGroup(
        "ampere-megatron-2021",
        {"stack:megatron-lm-2021:gemm_efficiency_scale": (0.6, 1.1, 1.0),
         "ampere:hbm_efficiency": (0.6, 0.95, 0.8)},
        ("megatron-lm-2021",), ("ampere",),
        "prior 1.0: the A100 GEMM efficiency of perf-ampere (cuBLAS 85-93% of peak); "
        "HBM 0.8: STREAM-like copies on HBM2e",
    ),
    FitGroup(
        "megatron-core",
        {"hopper:gemm_efficiency": (0.45, 0.85, 0.75),
         "hopper:fp8_gemm_efficiency": (0.4, 0.85, 0.65),
         "blackwell:gemm_efficiency": (0.35, 0.85, 0.75),
         "blackwell:fp8_gemm_efficiency": (0.35, 0.85, 0.65),
         "blackwell:tp_overlap": (0.0, 0.9, 0.3),
         "stack:megatron:elementwise_passes": (1.0, 3.0, 1.0),
         "stack:megatron:grouped_gemm_efficiency": (0.4, 1.0, 0.8)},
        ("megatron",), ("hopper", "blackwell"),
        "priors: cuBLAS BF16 ~75% and FP8 ~65% of the sustained peak end to end, Hopper's TP "
        "overlap 0.3, fused element-wise (1 pass), grouped GEMMs at 0.8 of dense",
    ),
    FitGroup(
        "torchtitan",
        {"stack:torchtitan,torchtitan-compile@hopper:attention_efficiency": (0.2, 0.7, 0.5),
         "stack:torchtitan:elementwise_passes": (1.0, 8.0, 6.0),
         "stack:torchtitan-compile:elementwise_passes": (1.0, 6.0, 3.0),
         "stack:torchtitan-compile:fp8_cast_bytes": (2.0, 12.0, 10.0)},
        ("torchtitan",), ("hopper",),
        "priors: FlashAttention-2 ~50% of the 16-bit peak (Dao 2023), eager 6 and compiled 3 "
        "element-wise passes, tensorwise float8 casts 10 bytes per element",
    ),
    FitGroup(
        "llm-foundry",
        {"stack:llm-foundry@hopper:attention_efficiency": (0.15, 0.6, 0.3),
         "stack:llm-foundry@ampere:attention_efficiency": (0.15, 0.7, 0.5),
         "stack:llm-foundry:fp8_cast_bytes": (2.0, 12.0, 6.0)},
        ("llm-foundry",), ("hopper", "ampere"),
        "priors: FlashAttention-2's fraction (Dao 2023) on Ampere, the FA2-on-Hopper prior of "
        "the eager stacks, float8 casts as torchtitan eager's",
    ),
)


@dataclass(frozen=True)
class Priced:
    """A row with what a fit needs about it: family, generation and its System."""

    row: CalRow
    family: str
    generation: str
    system: Any
    stack: str = ""  #: the row's catalog stack id (what fitting.applies tests keys against)


def priced(catalog: Any, rows: list[CalRow], family: Callable[[str], str]) -> list[Priced]:
    out = []
    for r in rows:
        sys = row_system(catalog, r)
        sid = stack_name(catalog, r.stack)
        out.append(Priced(r, family(sid), sys.generation, sys, sid))
    return out


def time_log(res: Any) -> float:
    """log(published time / predicted time) of a result (+ = the model predicts faster)."""
    if res.row.kind == "tflops":
        return float(np.log(res.predicted / res.published))
    return float(np.log(res.published / res.predicted))


def predict(catalog: Any, p: Priced, values: dict[str, float]) -> Any:
    """The row's CalResult with ``values`` applied."""
    sys, stack = apply_values(catalog, p.row, p.system, values)
    return run_row(catalog, p.row, system=sys, stack=stack)[0]


def _objective(catalog: Any, rows: list[Priced], values: dict[str, float],
               memo: dict | None = None) -> float:
    """Mean |log error| plus half the |mean log error| of ``rows`` at ``values``. ``memo``
    keeps each row's residual by the row and the values that apply to it
    (:func:`clustertwin.perf.fitting.applies`): a trial of a key that does not touch a row (a
    Blackwell constant for a Hopper row, another family's constant fitted earlier) reuses its
    residual, and folds that start from the same priors share their first points."""
    items = sorted(values.items())
    e = []
    for p in rows:
        key = (p.row.id, p.row.source,
               tuple((k, v) for k, v in items if applies(k, p.stack, p.generation)))
        if memo is None or key not in memo:
            got = time_log(predict(catalog, p, values))
            if memo is None:
                e.append(got)
                continue
            memo[key] = got
        e.append(memo[key])
    arr = np.asarray(e)
    return float(np.mean(np.abs(arr)) + 0.5 * abs(np.mean(arr)))


def _trials(best: float, lo: float, hi: float, span: float) -> list[float]:
    """A key's grid around its current value: STEPS points over ``span``, clipped to its
    bounds, without the current value (its objective is known) and without repeats."""
    out: list[float] = []
    for val in np.clip(np.linspace(best - span / 2, best + span / 2, STEPS), lo, hi):
        v = float(val)
        if abs(v - best) > 1e-12 and all(abs(v - o) > 1e-12 for o in out):
            out.append(v)
    return out


def fit_group(catalog: Any, g: FitGroup, rows: list[Priced], base: dict[str, float],
              memo: dict | None = None) -> dict[str, float]:
    """The group's keys fitted on ``rows`` (from their priors) with ``base`` held; priors
    where no row is left. Coordinate search: per sweep and key, the grid of :func:`_trials`
    around the current value; a point replaces the best only when it lowers the objective."""
    best = {k: prior for k, (_, _, prior) in g.keys.items()}
    if not rows:
        return best
    best_obj = _objective(catalog, rows, {**base, **best}, memo)
    for sweep in range(SWEEPS):
        for k, (lo, hi, _) in g.keys.items():
            for val in _trials(best[k], lo, hi, (hi - lo) / (2**sweep)):
                trial = {**best, k: val}
                obj = _objective(catalog, rows, {**base, **trial}, memo)
                if obj < best_obj - 1e-9:
                    best, best_obj = trial, obj
    return best


def group_rows(g: FitGroup, rows: list[Priced]) -> list[Priced]:
    return [p for p in rows if p.family in g.families
            and (not g.generations or p.generation in g.generations)]


def refit(catalog: Any, rows: list[Priced], cache: dict | None = None) -> dict[str, float]:
    """Every group of :data:`GROUPS` fitted in turn on ``rows`` (steady-state rows only).
    ``cache`` reuses a group's fit where its rows and the earlier groups' values are the same
    (the fit is deterministic, so this is the same result, only sooner)."""
    values: dict[str, float] = {}
    memo = None if cache is None else cache.setdefault("residuals", {})
    for g in GROUPS:
        use = group_rows(g, rows)
        key = (g.id, tuple(p.row.id for p in use), tuple(sorted(values.items())))
        if cache is not None and key in cache:
            got = cache[key]
        else:
            got = fit_group(catalog, g, use, values, memo)
            if cache is not None:
                cache[key] = got
        values = {**values, **got}
    return values
