"""Per-worker memoization of stage results inside a sweep.

A sweep usually varies a few keys (prices, restart times, GPU counts) while every point runs
the whole plan. Each stage is a pure function of the scenario keys it reads, the catalog and
the results before it, so a worker that has already computed a stage for the same inputs can
hand back that result instead of computing it again. :class:`StageMemo` does that:
``make_plan(scenario, catalog, memo=StageMemo())`` gives the same plan, byte for byte.

The key of a stage call is the canonical JSON of exactly the scenario keys the stage reads
(:data:`READS`: each stage declares them beside its code, found by reading it, and
``tests/sweep/test_memo.py`` checks them by tracing attribute reads), the catalog's identity, the keys of the earlier results it takes
(:data:`UPSTREAM`; a result stands for the key it was computed from) and its keyword
arguments; results are filed under the SHA-256 of that text. A whole section (``"training"``) covers every key in it, also those a stage reads
through ``model_dump``; a dotted key covers that key only.

Keys a stage reads are over-approximated only where the over-approximation cannot cost a hit
(a section that an earlier result's key already holds). The scenario's ``name`` is read by no
stage and is left out (every sweep point has its own); its ``source`` (only named in errors)
is in every key. A call whose earlier result did not come from this memo (or is None where a
stage would fall back to reading more of the scenario) or whose arguments are not plain
values is not cached. Exceptions are never cached. Each stage keeps at most ``size`` results
(least recently used first out). Results are shared between the plans that hit them: like
every stage result they are read-only.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from datetime import date
from typing import Any

from pydantic import BaseModel

from clustertwin import deadline
from clustertwin.buildout import plan as buildout_plan
from clustertwin.design import core as design_core
from clustertwin.economics import model as economics_model
from clustertwin.perf import stage as perf_stage
from clustertwin.reliability import stage as reliability_stage

#: scenario keys each stage reads (a section name covers the whole section), as each stage
#: declares them beside its code (``READS`` of deadline, design.core, reliability.stage,
#: economics.model and buildout.plan)
READS: dict[str, tuple[str, ...]] = {
    "training": deadline.READS, "design": design_core.READS, "reliability": reliability_stage.READS,
    "economics": economics_model.READS, "buildout": buildout_plan.READS,
    # the training estimate made again on the GPUs hot spares leave inside the units
    # (plan.spares_inside): perf's keys; the GPU count is its ``installed`` argument
    "respare": perf_stage.READS,
}
#: the earlier results each stage takes, in its positional order after (scenario, catalog)
UPSTREAM: dict[str, tuple[str, ...]] = {
    "training": (), "design": ("training",), "reliability": ("training", "design"),
    "economics": ("training", "design", "reliability"), "buildout": ("design",), "respare": (),
}
#: keyword arguments a cached call may take (any other makes the call uncached)
KEYWORDS: dict[str, tuple[str, ...]] = {"training": ("ettr_scale",), "design": ("cabling",),
                                        "respare": ("installed", "notes")}
DEFAULT_SIZE = 128
_MISSING = object()


def reads(stage: str, scenario: Any) -> tuple[str, ...]:
    """The scenario keys ``stage`` reads for this scenario."""
    return deadline.reads(scenario) if stage == "training" else READS[stage]


def _canon(value: Any) -> Any:
    """A value as plain JSON data; TypeError for anything that has no exact JSON form."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_canon(v) for v in value]
    raise TypeError(f"no canonical form for {type(value).__name__}")


def _get(scenario: Any, path: str) -> Any:
    obj = scenario
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


class StageMemo:
    """Stage results of the plans one process makes, keyed on exactly what each stage reads.

    ``hits`` and ``misses`` count calls per stage (``uncached``: calls that could not be keyed)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        self.size = size
        self._results: dict[str, OrderedDict[str, Any]] = {s: OrderedDict() for s in READS}
        self._catalogs: dict[int, Any] = {}  # held so that an id is never reused while keyed
        self.hits: dict[str, int] = dict.fromkeys(READS, 0)
        self.misses: dict[str, int] = dict.fromkeys(READS, 0)
        self.uncached: dict[str, int] = dict.fromkeys(READS, 0)

    def clear(self) -> None:
        for cache in self._results.values():
            cache.clear()
        self._catalogs.clear()
        for counts in (self.hits, self.misses, self.uncached):
            for s in counts:
                counts[s] = 0

    def __len__(self) -> int:
        return sum(len(c) for c in self._results.values())

    def bind(self, training: Callable[..., Any], design: Callable[..., Any],
             reliability: Callable[..., Any], economics: Callable[..., Any],
             buildout: Callable[..., Any],
             respare: Callable[..., Any] | None = None) -> tuple[Callable[..., Any], ...]:
        """The five stage functions wrapped for one plan (in pipeline order), and the spares
        re-estimate (``perf.estimate(..., installed=...)``) when given. The wrappers know which
        results they returned, so a later stage can be keyed on them (the design made around
        a re-estimate is keyed on the re-estimate's key)."""
        made: dict[int, tuple[str, Any]] = {}  # id(result) -> (its key, result), for this plan
        values: dict[tuple[int, str], str] = {}  # (id(scenario), path) -> canonical JSON
        fns = {"training": training, "design": design, "reliability": reliability,
               "economics": economics, "buildout": buildout}
        if respare is not None:
            fns["respare"] = respare
        return tuple(self._wrap(name, fn, made, values) for name, fn in fns.items())

    def _wrap(self, stage: str, fn: Callable[..., Any], made: dict[int, tuple[str, Any]],
              values: dict[tuple[int, str], str]) -> Callable[..., Any]:
        cache = self._results[stage]

        def call(scenario: Any, catalog: Any, *upstream: Any, **kw: Any) -> Any:
            key = self._key(stage, scenario, catalog, upstream, kw, made, values)
            if key is None:
                self.uncached[stage] += 1
                return fn(scenario, catalog, *upstream, **kw)
            result = cache.get(key, _MISSING)
            if result is _MISSING:
                self.misses[stage] += 1
                result = fn(scenario, catalog, *upstream, **kw)
                cache[key] = result
                self._catalogs[id(catalog)] = catalog
                while len(cache) > self.size:
                    cache.popitem(last=False)
            else:
                self.hits[stage] += 1
                cache.move_to_end(key)
            made[id(result)] = (key, result)
            return result

        call.__name__ = getattr(fn, "__name__", stage)  # a functools.partial has no name
        return call

    def _key(self, stage: str, scenario: Any, catalog: Any, upstream: tuple[Any, ...],
             kw: dict[str, Any], made: dict[int, tuple[str, Any]],
             values: dict[tuple[int, str], str]) -> str | None:
        """The call's key, or None when it cannot be keyed with confidence."""
        names = UPSTREAM[stage]
        if len(upstream) != len(names) or set(kw) - set(KEYWORDS.get(stage, ())):
            return None
        ups: list[str | None] = []
        for name, res in zip(names, upstream, strict=True):
            if res is None:  # only a design-only plan has no training result by design
                if name != "training" or scenario.training is not None:
                    return None
                ups.append(None)
                continue
            entry = made.get(id(res))
            if entry is None or entry[1] is not res:
                return None
            ups.append(entry[0])
        try:
            args = {k: _canon(v) for k, v in sorted(kw.items())}
            fields = []
            for path in reads(stage, scenario):
                slot = (id(scenario), path)
                if slot not in values:
                    values[slot] = json.dumps(_canon(_get(scenario, path)), sort_keys=True)
                fields.append(values[slot])
        except (TypeError, AttributeError):
            return None
        catalog_id = id(catalog)
        held = self._catalogs.get(catalog_id)
        if held is not None and held is not catalog:  # pragma: no cover - ids are held
            return None
        text = json.dumps([stage, catalog_id, fields, ups, args], separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


__all__ = ["StageMemo", "READS", "UPSTREAM", "reads"]
