"""Study files and the sweep API: a base scenario, its grid, and the call that runs it.

A study file names a base scenario and what to vary (``clustertwin sweep examples/ladder.yaml``)::

    study: scaling-ladder            # marks the file as a study; its title
    description: free text
    base: ../path/to/scenario.yaml   # relative to this file, or an inline scenario mapping;
                                     # omitted = the built-in default scenario
    cases:                           # optional: named sets of keys changed together
      - name: 8 GPUs, Llama-3-8B
        set: {cluster.gpus: 8, model.preset: llama3-8b}
    grid:                            # optional: axes crossed with every case
      economics.cloud_usd_per_gpu_hour: [2.0, 3.0]
    objective: run_cost_owned_usd    # optional defaults for --objective / --require
    require: ["reliability.effective_days<=120"]
    seeds: per-scenario              # or common (every scenario the base seed)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from clustertwin.errors import Problem, ScenarioError, UsageError
from clustertwin.sweep.grid import (
    MAX_SCENARIOS,
    LazyPoints,
    Point,
    check_key,
    check_size,
    make_points,
)


class Case(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str = Field(description="the case's label in tables and plots")
    set: dict[str, Any] = Field(default_factory=dict, description="dotted scenario keys and their values")


class StudyFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    schema_version: int = Field(1, ge=1, le=1)
    study: str = Field(description="the study's title")
    description: str = ""
    base: str | dict[str, Any] | None = Field(None, description="scenario path (relative to the study) or mapping")
    cases: list[Case] = Field(default_factory=list)
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    objective: str | None = None
    require: list[str] = Field(default_factory=list)
    seeds: Literal["per-scenario", "common"] = Field("per-scenario", description="Monte Carlo seeds per point")

    @field_validator("cases")
    @classmethod
    def _distinct_names(cls, v: list[Case]) -> list[Case]:
        names = [c.name for c in v]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # two rows with one label cannot be told apart in the table or the ranking
            raise ValueError(f"case names must differ; given more than once: {', '.join(map(repr, twice))}")
        return v

    @field_validator("grid")
    @classmethod
    def _non_empty(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, values in v.items():
            if not values:
                raise ValueError(f"{key}: expected a non-empty list of values")
        return v


def _flat(mapping: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Cases may nest keys (``cluster: {gpus: 8}``) or dot them (``cluster.gpus: 8``)."""
    out: dict[str, Any] = {}
    for k, v in mapping.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


@dataclass(frozen=True)
class Sweep:
    """A grid ready to run: its points (validated later), keys and title."""

    title: str
    source: str
    base: dict[str, Any]
    keys: list[str]
    points: list[Point]
    objective: str | None = None
    require: list[str] = field(default_factory=list)
    description: str = ""


def is_study(doc: Any) -> bool:
    return isinstance(doc, dict) and "study" in doc


def _inside(path: Path, where: Path, allow: tuple[Path, ...], source: str) -> Path:
    """``path`` (relative to the study's folder ``where``) when it resolves inside that folder
    or an ``--allow-path`` folder; else a ScenarioError that names the path, never reads it."""
    full = (where / path).resolve()
    roots = [where.resolve(), *(Path(a).resolve() for a in allow)]
    if any(full.is_relative_to(r) for r in roots):
        return full
    raise ScenarioError([Problem(source, "base", f"{str(path)!r} is outside the study's folder "
                                 f"{str(where)!r}; move it there or pass --allow-path DIR")])


def _base_doc(base: Any, where: Path | None, allow: tuple[Path, ...] = (),
              source: str = "<study>") -> tuple[dict[str, Any], str]:
    from clustertwin.io import read_document
    from clustertwin.scenario import DEFAULT_SCENARIO

    if base is None:
        return read_document(DEFAULT_SCENARIO), str(DEFAULT_SCENARIO)
    if isinstance(base, dict):
        return base, "<study base>"
    if hasattr(base, "model_dump"):  # a Scenario object
        return _scenario_doc(base), base.source
    path = Path(base)
    if where is not None:
        path = _inside(path, where, allow, source)
    doc = read_document(path)
    if not isinstance(doc, dict):
        raise ScenarioError([Problem(str(path), "", "a scenario is a mapping with model, training and cluster sections")])
    return doc, str(path)


def _scenario_doc(s: Any) -> dict[str, Any]:
    """A validated Scenario back as a document (model fields explicit, preset dropped)."""
    data = s.model_dump(mode="json")
    data["model"] = {k: v for k, v in data["model"].items() if k != "name" and v is not None}
    return data


# the study builder the library and the CLI share: the grid and cases, then keyword options
def build(base: Any, grid: dict[str, list[Any]] | None = None,
          cases: list[tuple[str, dict[str, Any]]] | None = None, title: str | None = None,
          where: Path | None = None, seeds: str = "per-scenario", *, allow: tuple[Path, ...] = (),
          max_points: int = MAX_SCENARIOS, study_source: str = "<study>", lazy: bool = False) -> Sweep:
    """A :class:`Sweep` from a base (path, mapping or Scenario), a grid and optional cases.
    ``where``: the study's folder, which a base path must resolve inside (or in ``allow``);
    ``max_points``: the most scenarios the grid may make (checked before any is built)."""
    check_size(max(1, len(cases or [])), [len(v) if isinstance(v, list | tuple) else 1
                                          for v in (grid or {}).values()], max_points)
    doc, source = _base_doc(base, where, allow, study_source)
    grid = dict(grid or {})
    cases = [(n, _flat(s)) for n, s in (cases or [])]
    keys: list[str] = []
    for _, s in cases:
        keys += [k for k in s if k not in keys]
    keys += [k for k in grid if k not in keys]
    for k in keys:
        check_key(k, source)
    for k, values in grid.items():
        if not isinstance(values, list | tuple) or not values:
            raise UsageError([Problem(source, k, "expected a non-empty list of values")])
    axes = {k: list(v) for k, v in grid.items()}
    points: Any = LazyPoints(doc, axes, cases or None, seeds, max_points) if lazy else \
        make_points(doc, axes, cases or None, seeds, max_points)
    return Sweep(title or str(doc.get("name", "sweep")), source, doc, keys, points)


def load_study(path: Path, extra_grid: dict[str, list[Any]] | None = None,
               seeds: str | None = None, allow: tuple[Path, ...] = (),
               max_points: int = MAX_SCENARIOS, lazy: bool = False) -> Sweep:
    """Read a study file (or a plain scenario file as the base) and add ``extra_grid`` axes;
    ``seeds`` overrides the study's ``seeds:``. A study's ``base:`` must lie in its folder or
    an ``allow`` folder; the grid may make at most ``max_points`` scenarios. ``lazy``: the
    points are built as they are read (:class:`clustertwin.sweep.grid.LazyPoints`)."""
    from clustertwin.io import pydantic_problems, read_document

    doc = read_document(path)
    if not is_study(doc):
        return build(path, extra_grid, seeds=seeds or "per-scenario", max_points=max_points, lazy=lazy)
    try:
        study = StudyFile.model_validate(doc)
    except ValidationError as exc:
        raise ScenarioError(pydantic_problems(exc, str(path))) from None
    grid = {**study.grid, **(extra_grid or {})}
    cases = [(c.name, c.set) for c in study.cases]
    sw = build(study.base, grid, cases, study.study, where=path.parent, seeds=seeds or study.seeds,
               allow=allow, max_points=max_points, study_source=str(path), lazy=lazy)
    return Sweep(sw.title, str(path), sw.base, sw.keys, sw.points, study.objective,
                 list(study.require), study.description)
