"""The grid of a sweep: dotted scenario keys, their values, and the scenarios they make.

A grid point is a set of assignments ``{dotted key: value}`` applied to the base scenario
*document* (the mapping as a user writes it), so every point is validated exactly like a
file. Points are the cross product of the ``cases`` (each a named set of assignments made
together) and the ``grid`` axes (each key with its list of values).

Randomness: unless ``reliability.seed`` is itself swept, each point's ``reliability.seed``
(which seeds every Monte Carlo stage) is drawn from ``SeedSequence(base seed, spawn_key=h)``
where ``h`` hashes the point's coordinates (its case name and assignments). A point keeps its
seed whatever the order of the axes or values, the executor or the worker count.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import typing
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from clustertwin.errors import Problem, UsageError
from clustertwin.fmt import dotted as path_value

#: keys that exclude each other in a scenario: setting one in a point drops the other from the base
EXCLUSIVE = {
    "cluster.gpus": "cluster.deadline_days",
    "cluster.deadline_days": "cluster.gpus",
    "training.global_batch_tokens": "training.global_batch_seqs",
    "training.global_batch_seqs": "training.global_batch_tokens",
}
SEED_KEY = "reliability.seed"
#: most scenarios one sweep makes unless ``--max-scenarios`` says otherwise: at a few plans per
#: second per core this is already hours; 4 million points took 4.9 GB before the first ran
MAX_SCENARIOS = 10_000


@dataclass(frozen=True)
class Point:
    """One scenario of the grid: its position, label, assignments and full document."""

    index: int
    label: str
    assignments: dict[str, Any]
    doc: dict[str, Any] = field(repr=False)
    case: str | None = None


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


@functools.lru_cache(maxsize=1)
def schema_keys() -> frozenset[str]:
    """Every dotted key a scenario file may set (walks the pydantic schema once per process)."""
    from clustertwin.scenario import ScenarioFile

    keys: set[str] = set()

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, f in model.model_fields.items():
            path = f"{prefix}{name}"
            keys.add(path)
            for sub in _models_in(f.annotation):
                walk(sub, path + ".")

    walk(ScenarioFile, "")
    return frozenset(keys)


def check_key(key: str, source: str) -> None:
    """Raise a one-line UsageError when ``key`` is not a scenario key (with a suggestion)."""
    known = schema_keys()
    if key in known:
        return
    import difflib

    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else "; keys are dotted scenario paths such as cluster.gpus"
    raise UsageError([Problem(source, key, f"unknown scenario key{hint}")])


def parse_value(text: str, source: str, key: str) -> Any:
    """One value as YAML reads it (``15.6e12`` a float, ``auto`` a string, ``true`` a bool)."""
    from clustertwin.errors import ScenarioError
    from clustertwin.io import parse_text

    text = text.strip()
    if not text:
        raise UsageError([Problem(source, key, "empty value (write KEY=V1,V2,...)")])
    try:
        value = parse_text(text, source)
    except ScenarioError:
        return text
    if isinstance(value, dict | list):
        raise UsageError([Problem(source, key, f"expected a single value, got {text!r}")])
    return value


def _split_assignment(text: str, option: str) -> tuple[str, str]:
    key, sep, values = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise UsageError([Problem(option, text, "expected KEY=VALUES")])
    return key, values


def parse_set(text: str) -> tuple[str, list[Any]]:
    """``--set KEY=V1,V2,...`` -> (key, values)."""
    key, values = _split_assignment(text, "--set")
    check_key(key, "--set")
    return key, [parse_value(v, "--set", key) for v in values.split(",")]


def parse_range(text: str) -> tuple[str, list[Any]]:
    """``--range KEY=START:STOP:STEP`` -> (key, values); STOP is included when a step lands on it."""
    key, spec = _split_assignment(text, "--range")
    check_key(key, "--range")
    parts = spec.split(":")
    nums = [parse_value(p, "--range", key) for p in parts] if len(parts) == 3 else []
    if len(nums) != 3 or not all(isinstance(n, int | float) and not isinstance(n, bool) for n in nums):
        raise UsageError([Problem("--range", key, f"expected START:STOP:STEP numbers, got {spec!r}")])
    start, stop, step = nums
    if step <= 0 or stop < start:
        raise UsageError([Problem("--range", key, f"expected STEP > 0 and STOP >= START, got {spec!r}")])
    count = int((stop - start) / step + 1e-9) + 1
    if count > 100_000:
        raise UsageError([Problem("--range", key, f"{count} values; at most 100000 per axis")])
    if all(isinstance(n, int) for n in nums):
        return key, [start + i * step for i in range(count)]
    return key, [round(float(start) + i * step, 12) for i in range(count)]


def set_path(doc: dict[str, Any], key: str, value: Any) -> None:
    """Set a dotted key in a scenario document, making the mappings on the way
    (``training.parallelism: auto`` becomes a mapping when one of its keys is set)."""
    parts = key.split(".")
    node = doc
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def _drop_path(doc: dict[str, Any], key: str) -> None:
    *head, last = key.split(".")
    node: Any = doc
    for part in head:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(last, None)


def apply(base: dict[str, Any], assignments: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of ``base`` with the assignments made (exclusive partners dropped)."""
    doc = copy.deepcopy(base)
    for key in assignments:
        other = EXCLUSIVE.get(key)
        if other and other not in assignments:
            _drop_path(doc, other)
    for key, value in assignments.items():
        set_path(doc, key, value)
    return doc


def point_seed(base_seed: int, case: str | None, assignments: dict[str, Any]) -> int:
    """The point's seed: a SeedSequence child of the base seed keyed by its coordinates."""
    import numpy as np

    coords = json.dumps([case, sorted((k, repr(v)) for k, v in assignments.items())])
    digest = hashlib.sha256(coords.encode()).digest()
    words = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
    seq = np.random.SeedSequence(int(base_seed), spawn_key=tuple(words))
    return int(seq.generate_state(1, np.uint32)[0] >> 1)  # a non-negative int32-sized seed


def _short(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _label(case: str | None, axes: dict[str, Any]) -> str:
    parts = [case] if case else []
    parts += [f"{k.rsplit('.', 1)[-1]}={_short(v)}" for k, v in axes.items()]
    return " ".join(parts) or "base"


SEEDS = ("per-scenario", "common")


def make_points(base: dict[str, Any], grid: dict[str, list[Any]],
                cases: list[tuple[str, dict[str, Any]]] | None = None,
                seeds: str = "per-scenario", max_points: int = MAX_SCENARIOS) -> list[Point]:
    """The points of ``cases`` x ``grid`` in row-major order (cases outermost).

    ``seeds="per-scenario"``: each point its own stream (see the module docstring);
    ``"common"``: every point keeps the base seed (common random numbers: scenarios that differ
    only in keys the Monte Carlo ignores get identical draws, so their differences are not noise)."""
    return list(LazyPoints(base, grid, cases, seeds, max_points))


class LazyPoints(Sequence[Point]):
    """The points of :func:`make_points`, each built when asked for (``points[i]``, iteration):
    a grid of a million points costs its axes, not a million documents."""

    def __init__(self, base: dict[str, Any], grid: dict[str, list[Any]],
                 cases: list[tuple[str, dict[str, Any]]] | None = None,
                 seeds: str = "per-scenario", max_points: int = MAX_SCENARIOS) -> None:
        if seeds not in SEEDS:
            raise UsageError([Problem("--seeds", seeds, f"expected one of {', '.join(SEEDS)}")])
        self.cases = cases or [(None, {})]  # type: ignore[list-item]
        self.keys = list(grid)
        self.grid = grid
        self.per_case = math.prod(len(grid[k]) for k in self.keys)
        check_size(len(self.cases), [len(grid[k]) for k in self.keys], max_points)
        self.base, self.seeds = base, seeds
        seed = path_value(base, SEED_KEY)
        self.base_seed = seed if isinstance(seed, int) and seed >= 0 else 0
        self.base_name = str(base.get("name", "scenario"))

    def __len__(self) -> int:
        return len(self.cases) * self.per_case

    def __getitem__(self, index: int) -> Point:  # type: ignore[override]
        if not 0 <= index < len(self):
            raise IndexError(index)
        case, rest = divmod(index, self.per_case)
        combo: list[Any] = []
        for k in reversed(self.keys):  # the last axis varies fastest (itertools.product)
            rest, r = divmod(rest, len(self.grid[k]))
            combo.append(self.grid[k][r])
        combo.reverse()
        return self._point(index, *self.cases[case], combo)

    def __iter__(self) -> Iterator[Point]:
        return (self[i] for i in range(len(self)))

    def _point(self, index: int, case_name: str | None, case_set: dict[str, Any],
               combo: list[Any]) -> Point:
        axes = dict(zip(self.keys, combo, strict=True))
        shown = {k: v for k, v in axes.items() if len(self.grid[k]) > 1}  # one-value axes: not in labels
        assignments = {**case_set, **axes}
        doc = apply(self.base, assignments)
        if SEED_KEY not in assignments and self.seeds == "per-scenario":
            set_path(doc, SEED_KEY, point_seed(self.base_seed, case_name, assignments))
        label = _label(case_name, shown)
        doc["name"] = label if case_name else f"{self.base_name} {label}"
        return Point(index, label, assignments, doc, case_name)


def check_size(cases: int, axes: list[int], max_points: int = MAX_SCENARIOS) -> int:
    """The number of points ``cases`` x the axes make; a UsageError past ``max_points``,
    raised before any point is built."""
    import math

    total = cases * math.prod(axes)
    if total > max_points:
        shape = " x ".join(str(n) for n in ([cases] if cases > 1 else []) + axes) or "1"
        raise UsageError([Problem("sweep", "size", f"the grid makes {total:,} scenarios ({shape}); "
                                  f"at most {max_points:,} (raise it with --max-scenarios N)")])
    return total
