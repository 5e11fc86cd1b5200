"""Job-size search: how many of the installed GPUs the run uses, with which global batch.

A plan is ``dp`` replicas of ``tp * cp * pp`` GPUs. Instead of factoring one GPU count (which
fails for counts such as 1,000 or 100,000 whose factors do not match the model, and picks
125-stage pipelines for 16,000), the search enumerates the model-parallel shapes first and
gives each the most replicas the installed GPUs hold:

* ``tp``: divisors of the NVLink domain compatible with the attention heads; ``cp`` as in
  :mod:`clustertwin.perf.search`;
* ``pp``: only *efficient* depths: for each number of layers on the busiest stage
  ``c = ceil(L / pp)`` the fewest stages that give it (126 layers: 126, 63, 42, 32, ... 2, 1).
  A deeper pipeline with the same busiest stage runs no faster and has a larger bubble, so
  pp=125 (stages of one and two layers, priced as two) is never built when pp=63 exists;
* ``dp``: the most replicas that fit in ``training.gpus`` (auto: the installed GPUs) with the
  job in whole hosts (:func:`clustertwin.scenario.job_unit_gpus`); with a fixed
  ``training.gpus`` the shape must divide it;
* the global batch: kept when ``dp`` divides it; otherwise, with ``training.batch_rounding:
  nearest``, moved to the nearest multiple of ``dp`` within :data:`BATCH_TOLERANCE`; with
  ``exact`` ``dp`` must divide it. The batch never moves just to make a plan faster.

Plans are evaluated in two vectorized passes: a coarse one over every shape with a few options
per remaining key, then every option for the :data:`KEEP_SHAPES` fastest shapes. Plans are
ranked by tokens per second (the batch and GPU count differ between them).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from functools import lru_cache
from typing import Any

import numpy as np

from clustertwin.perf.costmodel import PLAN_KEYS, Job, evaluate
from clustertwin.perf.search import (
    PlanBlocks,
    SearchResult,
    cp_options,
    divisors,
    pinned_values,
    tp_fits_heads,
)
from clustertwin.perf.system import System

#: How far (relative) the global batch may move under ``batch_rounding: nearest``. Our choice,
#: not a published figure: 10% is the spacing of batch sizes teams report trying, well inside
#: the range over which loss per token is flat near the critical batch (McCandlish et al. 2018,
#: "An Empirical Model of Large-Batch Training"); a larger move is the user's decision.
BATCH_TOLERANCE = 0.10
#: shapes (tp, cp, pp, dp, batch) whose every option is evaluated after the coarse pass
KEEP_SHAPES = 24


@dataclasses.dataclass(frozen=True)
class Outer:
    """A job shape: tensor, context, pipeline and data-parallel degrees and sequences per replica."""

    tp: int
    cp: int
    pp: int
    dp: int
    per_rep: int  #: sequences per data-parallel replica (global batch = dp * per_rep)


def efficient_depths(layers: int) -> list[int]:
    """Fewest stages for each busiest-stage size: ``ceil(L / ceil(L / c))`` for c = 1..L."""
    return sorted({math.ceil(layers / math.ceil(layers / c)) for c in range(1, layers + 1)})


def _tp_cp(job: Job, sys: System, pinned: dict[str, Any]) -> tuple[list[int], list[int]]:
    m = job.shape
    dom = max(sys.nvlink_domain, 1)
    tps = [t for t in range(1, dom + 1) if dom % t == 0]
    tps = [t for t in pinned_values(pinned, "tp", tps) if tp_fits_heads(m, t)]
    return tps, cp_options(job, pinned)


def per_replica(batch: int, dp: int, rounding: str) -> list[int]:
    """Sequences per replica for ``dp`` replicas: the batch as given when ``dp`` divides it;
    otherwise, under ``nearest``, the nearest multiple of ``dp`` (down on a tie) if it is
    within :data:`BATCH_TOLERANCE`. A batch is never moved to make a plan faster."""
    if batch % dp == 0:
        return [batch // dp]
    if rounding == "exact":
        return []
    r = batch / dp
    k = max(1, math.floor(r) if r - math.floor(r) <= 0.5 else math.ceil(r))
    return [k] if abs(k * dp - batch) <= BATCH_TOLERANCE * batch else []


@lru_cache(maxsize=64)
def _divisors_high_first(n: int) -> tuple[int, ...]:
    """Divisors of a global batch ``n`` (sequences: millions at most), largest first; once per
    batch, not per shape."""
    return tuple(reversed(divisors(n)))


def _divisors_desc(n: int, at_most: int):
    return (d for d in _divisors_high_first(n) if d <= at_most)


def _replica_counts(size: int, most: int, unit: int, fixed: int | None, batch: int,
                    rounding: str, pinned_dp: int | None) -> list[int]:
    """Replica counts to try for a shape of ``size`` GPUs (the job in whole hosts: the count
    a multiple of ``step``): the most that fit with a batch within the bound, and the most that
    divide the batch exactly."""
    step = unit // math.gcd(size, unit)
    if fixed is not None:
        return [fixed // size] if fixed % size == 0 and (fixed // size) % step == 0 else []
    top = most // size // step * step
    if pinned_dp is not None:
        return [pinned_dp] if pinned_dp <= top and pinned_dp % step == 0 else []
    out = set()
    if top and rounding == "nearest":
        lo, hi = batch * (1 - BATCH_TOLERANCE), batch * (1 + BATCH_TOLERANCE)
        k = max(1, math.ceil(lo / top))  # fewest sequences per replica that reach the bound
        dp = min(top, int(hi // k) // step * step)
        if dp and k * dp >= lo:
            out.add(dp)
    exact = next((d for d in _divisors_desc(batch, top) if d % step == 0), None)
    if exact:
        out.add(exact)
    return sorted(out)


def outer_shapes(job: Job, sys: System, most: int, unit: int, fixed: int | None,
                 rounding: str, pinned: dict[str, Any]) -> tuple[list[Outer], Counter]:
    """Every (tp, cp, pp, dp, per-replica batch) the rules allow, and counts of those refused."""
    m = job.shape
    pruned: Counter = Counter()
    tps, cps = _tp_cp(job, sys, pinned)
    pps = [p for p in pinned_values(pinned, "pp", efficient_depths(m.layers)) if p <= m.layers]
    out = []
    for tp in tps:
        for cp in cps:
            for pp in pps:
                size = tp * cp * pp
                dps = _replica_counts(size, most, unit, fixed, job.batch_seqs, rounding, pinned.get("dp"))
                if not dps:
                    pruned["the shape does not fit the GPUs in whole hosts"] += 1
                for dp in dps:
                    reps = per_replica(job.batch_seqs, dp, rounding)
                    if not reps:
                        pruned["dp does not divide the global batch"] += 1
                    out.extend(Outer(tp, cp, pp, dp, r) for r in reps)
    return out, pruned


def _plans(job: Job, outers: list[Outer], pinned: dict[str, Any], pruned: Counter, coarse: bool):
    """The plans of ``outers`` (each outer's rows in a run, in order), their global batches and
    how many rows each outer has."""
    blocks = PlanBlocks(pinned)
    sizes = [blocks.add(job.shape, (o.tp, o.cp, o.pp, o.dp), o.per_rep, pruned, coarse,
                        job.stack.expert_tp_folding) for o in outers]
    batch = np.repeat(np.array([o.dp * o.per_rep for o in outers], dtype=np.int64), sizes)
    return blocks.plans(), batch, sizes


def _evaluate(job: Job, sys: System, plans: dict[str, np.ndarray], batch: np.ndarray) -> dict[str, np.ndarray]:
    if batch.size == 0:
        return {"fits": np.zeros(0, bool), "step_time_s": np.zeros(0), "memory_bytes": np.zeros(0),
                "tokens_per_s": np.zeros(0), "batch_seqs": np.zeros(0), "gpus": np.zeros(0)}
    # the cost model is elementwise in the batch: one pass with a per-plan batch array
    met = evaluate(dataclasses.replace(job, batch_seqs=batch), sys, plans)
    met["batch_seqs"] = batch.astype(np.float64)
    met["gpus"] = (plans["tp"] * plans["cp"] * plans["pp"] * plans["dp"]).astype(np.float64)
    return met


def search_job(job: Job, sys: System, most: int, unit: int, fixed: int | None = None,
               rounding: str = "nearest", pinned: dict[str, Any] | None = None) -> SearchResult:
    """Evaluate plans on at most ``most`` GPUs (exactly ``fixed`` when given), the job in whole
    ``unit``-GPU hosts, the batch rounded per ``rounding``. Ranked by tokens per second."""
    pinned = pinned or {}
    outers, pruned = outer_shapes(job, sys, most, unit, fixed, rounding, pinned)
    plans, batch, sizes = _plans(job, outers, pinned, pruned, coarse=True)
    met = _evaluate(job, sys, plans, batch)
    coarse = SearchResult(plans, met, pruned)
    ranked = coarse.ranked()
    if ranked.size == 0:
        return coarse
    keep: list[Outer] = []
    for i in ranked:
        o = Outer(*(int(plans[k][i]) for k in ("tp", "cp", "pp", "dp")), int(batch[i]) // int(plans["dp"][i]))
        if o not in keep:
            keep.append(o)
            if len(keep) == KEEP_SHAPES:
                break
    fplans, fbatch, _ = _plans(job, keep, pinned, Counter(), coarse=False)
    fmet = _evaluate(job, sys, fplans, fbatch)
    # the coarse rows of the kept shapes are in the full pass again: keep one copy (a row's
    # shape is its outer's, and an outer's rows are one run)
    kept = set(keep)
    other = np.repeat(np.array([o not in kept for o in outers], dtype=bool), sizes)
    both = {k: np.concatenate([plans[k][other], fplans[k]]) for k in PLAN_KEYS}
    bmet = {k: np.concatenate([met[k][other], fmet[k]]) for k in met if k in fmet}
    return SearchResult(both, bmet, pruned)
