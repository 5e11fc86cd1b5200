"""Leave-one-source-out (LOSO) check of the training-time model, and the days band it gives.

Every published row (the packaged calibration CSV and ``src/clustertwin/perf/data/published_runs.csv``)
is priced with the stack its source used. Its residual on the throughput basis is
``e = log(published time / predicted time)`` (+ = the model predicts faster than published).

Two folds per source are reported:

* **scale-only** (the figure since issue 20): the left-out rows' residual less one throughput
  scale per stack family and GPU generation, the median residual of the other sources' rows in
  that group (with fewer than :data:`MIN_GROUP` such rows, of all other sources' rows). Every
  other constant keeps the value fitted on all rows, the left-out source's included: it leaks.
* **refit-everything** (issue 33): every fitted constant (:data:`clustertwin.perf.fitplan.GROUPS`)
  is refitted from its prior without the source's rows, and the left-out rows are priced with
  those values. A stack whose only source is left out is priced on its priors. This is the
  figure to expect on a source the model has never seen.

The band a plan reports (``training.days_low`` / ``days_high``) is +- the 90th percentile of
the |refit-everything residuals| of the stack family's rows (with fewer than
:data:`MIN_BAND_ROWS` rows or :data:`MIN_BAND_SOURCES` sources, of all rows); ``within_band``
checks each published value, priced without its source, against the band computed without
its source. The bands are written into the catalog (``stacks.yaml`` ``days_band``) from
:func:`stack_bands` so that a plan needs no calibration run; a test keeps them current.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from clustertwin.perf import fitplan
from clustertwin.perf.calibration import CalResult, run_row
from clustertwin.perf.csvrows import gpu_name, stack_name

MIN_GROUP = 2  #: other-source rows a group needs for its own scale
MIN_BAND_ROWS = 8  #: rows a stack family needs for its own band ...
MIN_BAND_SOURCES = 3  #: ... from at least this many sources (one source's rows are in-sample)
BAND_QUANTILE = 90.0  #: percentile of |LOSO residual| that sets the band's half-width
#: stacks that share their per-operator constants (fitted together) form one family
FAMILIES = {"torchtitan-compile": "torchtitan", "pytorch": "torchtitan", "pytorch-compile": "torchtitan"}


def source_key(text: str) -> str:
    """The publication a row comes from: its source text up to the first '(' or ',' or
    'Table' (``Narayanan et al. 2021 (arXiv ...) Table 1`` -> ``Narayanan et al. 2021``)."""
    head = re.split(r"\(|,|\s+[Tt]able\b|\s+[Ss]ection\b", text, maxsplit=1)[0]
    return head.strip().lower() or text.strip().lower()


def family(stack_id: str) -> str:
    """The stack family of a stack id (a ``FRAMEWORK+KERNELS`` id: its framework's)."""
    head = stack_id.partition("+")[0]
    return FAMILIES.get(head, head)


def time_residual(res: CalResult) -> float:
    """log(published time / predicted time): + = the model predicts faster than published."""
    if res.row.kind == "tflops":
        return float(np.log(res.predicted / res.published))
    return float(np.log(res.published / res.predicted))


@dataclass(frozen=True)
class CvRow:
    result: CalResult
    source: str
    stack: str
    generation: str
    residual: float
    loso: float = 0.0
    band: tuple[float, float] = (0.0, 0.0)  #: band without this row's source (log time)
    #: whole-run rows: goodput factors the wall-clock prediction charges (see cross_validate)
    goodput: dict[str, float] | None = None
    #: residual with every fitted constant refitted without this row's source (None: not run)
    refit: float | None = None
    #: residual with every fitted constant refitted on all rows (the procedure in-sample)
    refit_in_sample: float | None = None

    @property
    def honest(self) -> float:
        """The residual the band rests on: refit-everything where run, else scale-only."""
        return self.loso if self.refit is None else self.refit

    @property
    def wall_residual(self) -> float:
        """The residual against the wall-clock prediction (steady-state time / goodput)."""
        g = math.prod(self.goodput.values()) if self.goodput else 1.0
        return self.residual + math.log(g)


def _scale(rows: list[CvRow], r: CvRow) -> float:
    others = [x for x in rows if x.source != r.source]
    group = [x.residual for x in others if family(x.stack) == family(r.stack) and x.generation == r.generation]
    pool = group if len(group) >= MIN_GROUP else [x.residual for x in others]
    return float(np.median(pool)) if pool else 0.0


def _band(values: list[float]) -> tuple[float, float]:
    """(low, high) log-time band: +-the BAND_QUANTILE percentile of |residual| (symmetric: a
    few sources cannot pin the band's skew; one source's bias must not set which side is open)."""
    half = float(np.percentile(np.abs(np.asarray(values)), BAND_QUANTILE))
    return -half, half


def _family_values(rows: list[CvRow], fam: str, exclude: str | None = None) -> list[float]:
    use = [x for x in rows if x.source != exclude]
    own = [x for x in use if family(x.stack) == fam]
    if len(own) >= MIN_BAND_ROWS and len({x.source for x in own}) >= MIN_BAND_SOURCES:
        return [x.honest for x in own]
    return [x.honest for x in use]


WHOLE_RUN_KINDS = ("gpu_hours", "gpu_hours_per_t")


def steady_state(row: Any) -> bool:
    """A steady-state throughput row; whole-run GPU-hours (downtime, ramp-up, evaluation
    included) are reported but kept out of the fit, the bands and the summary."""
    return row.kind not in WHOLE_RUN_KINDS


def cross_validate(catalog: Any, cal_rows: list[Any],
                   goodput: Callable[[CalResult], dict[str, float]] | None = None,
                   refit: bool = True) -> list[CvRow]:
    """Every row priced, its scale-only and (``refit``) refit-everything LOSO residuals, and
    its band computed without its source (bands and fits from steady-state rows only, see
    :func:`steady_state`). ``goodput(result)`` gives a whole-run row's goodput factors
    (reliability.goodput.row_goodput: evaluation, data loader, ramp-up, ETTR), against which
    its wall-clock prediction is compared as well."""
    base = []
    for row in cal_rows:
        res = run_row(catalog, row)[0]
        sid = stack_name(catalog, row.stack)
        gen = catalog.gpu(gpu_name(catalog, row.gpu)).generation
        g = goodput(res) if goodput is not None and not steady_state(row) else None
        base.append(CvRow(res, source_key(row.source), sid, gen, time_residual(res), goodput=g))
    steady = [r for r in base if steady_state(r.result.row)]
    rows = [replace(r, loso=r.residual - _scale(steady, r)) for r in base]
    if refit:
        rows = refit_cross_validate(catalog, rows)
    fit = [r for r in rows if steady_state(r.result.row)]
    return [replace(r, band=_band(_family_values(fit, family(r.stack), r.source))) for r in rows]


#: kinds of catalog entry the time model reads (the refit cache's key)
_MODEL_KINDS = ("stack", "kernels", "perf_calibration", "gpu", "node", "fabric")
_REFIT_CACHE: dict[str, list[tuple[float, float] | None]] = {}


def _refit_key(catalog: Any, rows: list[CvRow]) -> str:
    """A digest of what the refit reads: the model's catalog entries and the rows."""
    import hashlib

    h = hashlib.sha256()
    for kind in _MODEL_KINDS:
        for e in catalog.all(kind) if kind in catalog.kinds() else []:
            h.update(e.model_dump_json().encode())
    for r in rows:
        h.update(repr((r.result.row, r.source)).encode())
    return h.hexdigest()


def refit_cross_validate(catalog: Any, rows: list[CvRow]) -> list[CvRow]:
    """``rows`` with their refit-everything residuals: per source, every fitted constant
    refitted (perf.fitplan.refit) on the other sources' steady-state rows, and the source's
    rows priced with those values; and the procedure's in-sample residual (all rows). The
    result is kept for the process, by a digest of the catalog's model entries and the rows
    (the refits take ~13 s of CPU)."""
    key = _refit_key(catalog, rows)
    if key not in _REFIT_CACHE:
        _REFIT_CACHE[key] = _refit_residuals(catalog, rows)
    got = _REFIT_CACHE[key]
    return [r if g is None else replace(r, refit=g[0], refit_in_sample=g[1])
            for r, g in zip(rows, got, strict=True)]


def _refit_residuals(catalog: Any, rows: list[CvRow]) -> list[tuple[float, float] | None]:
    idx = [i for i, r in enumerate(rows) if steady_state(r.result.row)]
    priced = fitplan.priced(catalog, [rows[i].result.row for i in idx], family)
    cache: dict = {}
    full = fitplan.refit(catalog, priced, cache)
    out: list[tuple[float, float] | None] = [None] * len(rows)
    for src in sorted({rows[i].source for i in idx}):
        keep = [p for i, p in zip(idx, priced, strict=True) if rows[i].source != src]
        vals = fitplan.refit(catalog, keep, cache)
        for i, p in zip(idx, priced, strict=True):
            if rows[i].source == src:
                out[i] = (fitplan.time_log(fitplan.predict(catalog, p, vals)),
                          fitplan.time_log(fitplan.predict(catalog, p, full)))
    return out


def stack_bands(catalog: Any, rows: list[CvRow]) -> dict[str, dict[str, float]]:
    """Per catalog stack: the days band as fractions of the predicted days (low <= 0 <= high)
    and how many rows it rests on (its family's, or all rows where the family has too few)."""
    out = {}
    rows = [r for r in rows if steady_state(r.result.row)]
    for e in catalog.all("stack"):
        vals = _family_values(rows, family(e.id))
        lo, hi = _band(vals)
        out[e.id] = {"low": float(np.expm1(lo)), "high": float(np.expm1(hi)), "rows": len(vals)}
    return out


def summary(rows: list[CvRow]) -> dict[str, float]:
    """Over the steady-state rows (:func:`steady_state`): median |error| and mean signed error
    (fractions, + = predicted faster) of the scale-only LOSO (``median_abs_err``,
    ``mean_signed_err``), of the refit-everything LOSO (``refit_*``, where run) and in-sample,
    and the share of published values inside the band computed without their source
    (``within_band``: the value priced without its source, refit-everything where run)."""
    rows = [r for r in rows if steady_state(r.result.row)]
    err = np.expm1([r.loso for r in rows])
    inside = [r.band[0] <= r.honest <= r.band[1] for r in rows]
    out = {
        "median_abs_err": float(np.median(np.abs(err))),
        "mean_signed_err": float(np.mean(err)),
        "within_band": float(np.mean(inside)),
        "rows": len(rows),
        "sources": len({r.source for r in rows}),
        "in_sample_median_abs_err": float(np.median(np.abs(np.expm1([r.residual for r in rows])))),
    }
    if rows and all(r.refit is not None for r in rows):
        ref = np.expm1([r.refit for r in rows])
        ins = np.expm1([r.refit_in_sample for r in rows])
        by_src: dict[str, list[float]] = {}
        for r, e in zip(rows, ref, strict=True):
            by_src.setdefault(r.source, []).append(abs(float(e)))
        out.update({
            "refit_median_abs_err": float(np.median(np.abs(ref))),
            "refit_mean_signed_err": float(np.mean(ref)),
            "refit_source_median_abs_err": float(np.median([np.median(v) for v in by_src.values()])),
            "refit_in_sample_median_abs_err": float(np.median(np.abs(ins))),
        })
    return out


def whole_run_summary(rows: list[CvRow]) -> dict[str, float]:
    """Published whole-run figures against the steady-state prediction and against the
    wall-clock prediction (steady state / goodput): median |error| and mean signed error
    (fractions, + = predicted faster). Empty without whole-run rows priced with goodput."""
    rows = [r for r in rows if not steady_state(r.result.row) and r.goodput is not None]
    if not rows:
        return {}
    steady, wall = np.expm1([r.residual for r in rows]), np.expm1([r.wall_residual for r in rows])
    return {
        "rows": len(rows),
        "steady_median_abs_err": float(np.median(np.abs(steady))),
        "steady_mean_signed_err": float(np.mean(steady)),
        "goodput_median_abs_err": float(np.median(np.abs(wall))),
        "goodput_mean_signed_err": float(np.mean(wall)),
    }


def row_dict(r: CvRow) -> dict[str, Any]:
    res = r.result
    return {
        "id": res.row.id,
        "source": r.source,
        "stack": r.stack,
        "gpu": res.row.gpu,
        "generation": r.generation,
        "compared": res.row.kind,
        "predicted": res.predicted,
        "published": res.published,
        "error": float(np.expm1(r.residual)),
        "loso_error": float(np.expm1(r.loso)),
        "band_low": float(np.expm1(r.band[0])),
        "band_high": float(np.expm1(r.band[1])),
        "refit_error": None if r.refit is None else float(np.expm1(r.refit)),
        "in_band": bool(r.band[0] <= r.honest <= r.band[1]),
        "whole_run": not steady_state(res.row),
        "goodput": math.prod(r.goodput.values()) if r.goodput else None,
        "goodput_parts": dict(r.goodput) if r.goodput else None,
        "wall_clock_error": float(np.expm1(r.wall_residual)) if r.goodput else None,
    }
