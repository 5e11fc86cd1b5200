"""The build-out steps as data: typed models and the loader for ``data/steps.yaml`` and
``data/profiles.yaml``.

A step has a number (1-195, as in the seed "Training Cluster"), a phase, a short title, a
three-point duration in calendar days (optimistic / likely / pessimistic) with its rationale,
its predecessors (finish-to-start) and the crew or vendor that does it. A quantity-driven step
also carries a :class:`Scale` rule: its work grows with the cluster (servers, racks, cables ...)
at a documented crew productivity.

A profile (new-build / existing-facility / fast-track) rewrites some steps' durations or rates;
the step data itself holds the new-build values.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from clustertwin import modelcache
from clustertwin.errors import Problem, ScenarioError
from clustertwin.io import pydantic_problems, read_document, read_packaged

DATA_DIR = Path(__file__).parent / "data"
GO_LIVE = 195
#: the site steps numbered after the seed's 195 (site acquisition, permitting, the shell): a
#: step book's numbers run 1-195 plus at most these
SITE_STEPS_MAX = 10
#: ``decision.site``: what the site has before the build-out starts (greenfield: nothing;
#: powered-land: land with power contracted; existing-building: a shell to fit out)
Site = Literal["greenfield", "powered-land", "existing-building"]
SITES: tuple[str, ...] = get_args(Site)

#: Quantities a scale rule may name; see :mod:`clustertwin.buildout.quantities` for the rules.
Quantity = Literal[
    "gpus",
    "servers",
    "racks",
    "nics",
    "node_links",
    "uplinks",
    "leaf",
    "spine_core",
    "switches",
    "it_mw",
    "storage_racks",
    "unassembled_servers",
]
QUANTITY_KEYS: tuple[str, ...] = get_args(Quantity)


class _Frozen(BaseModel):
    # defer_build: the built-in book comes from clustertwin.modelcache, unvalidated
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Scale(_Frozen):
    """Work that grows with the cluster: ``qty / (rate * crews)`` days on top of the fixed days.

    ``crews = clamp(ceil(qty / (rate * target_days)), 1, max_crews * profile.crew_factor)``:
    a lead staffs the step to finish its work in about ``target_days`` until crews run out
    (floor space, tools, vendor technicians)."""

    per: Quantity = Field(description="quantity the work is proportional to")
    rate: float = Field(gt=0, description="units one crew completes per calendar day")
    max_crews: int = Field(
        gt=0, description="most crews that can work this step at once (new-build)"
    )


class Step(_Frozen):
    number: int = Field(ge=1, le=GO_LIVE + SITE_STEPS_MAX)
    phase: int = Field(ge=0, le=8)
    title: str = Field(min_length=3)
    days: tuple[float, float, float] = Field(
        description="optimistic, likely, pessimistic calendar days"
    )
    after: tuple[int, ...] = Field((), description="predecessor step numbers (finish-to-start)")
    crew: str = Field(description="who does it")
    why: str = Field(description="rationale or source of the durations")
    scale: Scale | None = None
    applies: Literal["all", "liquid", "air"] = Field(
        "all", description="cooling mode the step belongs to; elsewhere it takes 0 days"
    )
    needs: Quantity | None = Field(
        None, description="the step applies only when this quantity is above 0 (a single node "
        "has no compute-fabric switches, so no fabric steps)"
    )
    sites: tuple[Site, ...] | None = Field(
        None, description="the sites (decision.site) the step belongs to; elsewhere it is not in "
        "the build-out at all (a site that has it already); None: every site"
    )

    @model_validator(mode="after")
    def _ordered(self) -> Step:
        o, m, p = self.days
        if not 0 <= o <= m <= p:
            raise ValueError(
                f"days must satisfy 0 <= optimistic <= likely <= pessimistic, got {self.days}"
            )
        if self.number in self.after:
            raise ValueError("a step cannot follow itself")
        return self


class Staffing(_Frozen):
    target_days: float = Field(gt=0, description="days of work a lead staffs a quantity step for")
    work_spread: tuple[float, float, float] = Field(
        description="optimistic/likely/pessimistic multipliers on the quantity-driven work"
    )
    source: str


class StepBook(_Frozen):
    """All steps plus the phase names and staffing defaults."""

    schema_version: Literal[1] = 1
    phases: dict[int, str]
    staffing: Staffing
    steps: tuple[Step, ...]

    def by_number(self) -> dict[int, Step]:
        return {s.number: s for s in self.steps}


class StepOverride(_Frozen):
    days: tuple[float, float, float] | None = None
    rate_factor: float = Field(1.0, gt=0, description="multiplies the scale rule's rate")
    why: str = ""


class Profile(_Frozen):
    id: str
    description: str
    inherits: str | None = Field(None, description="profile whose overrides apply first")
    crew_factor: float = Field(1.0, gt=0, description="multiplies every step's max_crews")
    target_days: float | None = Field(None, gt=0, description="replaces staffing.target_days")
    auto_max_gpus: int | None = Field(None, gt=0, description="buildout.profile auto picks this "
                                      "profile for an existing-facility cluster of at most this "
                                      "many GPUs")
    site: Site | None = Field(None, description="the site the profile stands on whatever "
                              "decision.site says (an existing facility: existing-building)")
    steps: dict[int, StepOverride] = Field(default_factory=dict)


def _validate_book(book: StepBook, source: str) -> None:
    numbers = [s.number for s in book.steps]
    problems = []
    missing = sorted(set(range(1, GO_LIVE + 1)) - set(numbers))
    if missing:
        problems.append(Problem(source, "steps", f"missing step numbers {missing}"))
    dupes = sorted({n for n in numbers if numbers.count(n) > 1})
    if dupes:
        problems.append(Problem(source, "steps", f"duplicate step numbers {dupes}"))
    extra = sorted(n for n in numbers if n > GO_LIVE and not _site_step(book, n))
    if extra:
        problems.append(Problem(source, "steps", f"steps past {GO_LIVE} must be site steps (sites: ...): {extra}"))
    known = set(numbers)
    for s in book.steps:
        bad = [a for a in s.after if a not in known]
        if bad:
            problems.append(Problem(source, f"steps[{s.number}].after", f"unknown steps {bad}"))
    if problems:
        raise ScenarioError(problems)


def _site_step(book: StepBook, number: int) -> bool:
    return any(s.number == number and s.sites is not None for s in book.steps)


def site_of(profiles: dict[str, Profile], profile: str, scenario_site: str) -> str:
    """The site the build-out stands on: the profile's own (an existing facility is an existing
    building) or else the scenario's ``decision.site``."""
    own = [p.site for p in profile_chain(profiles, profile) if p.site is not None]
    return own[-1] if own else scenario_site


@lru_cache(maxsize=1)
def load_steps(path: str | None = None) -> StepBook:
    """Load and check the step book (built-in ``data/steps.yaml`` unless a path is given; the
    built-in one validated once per content and code, :mod:`clustertwin.modelcache`)."""
    if path:
        return _checked_book(read_document(Path(path)), Path(path))
    p = DATA_DIR / "steps.yaml"
    return modelcache.load("steps", [p], lambda: _checked_book(read_packaged(p), p),
                           (StepBook, _checked_book))


def _checked_book(doc: Any, p: Path) -> StepBook:
    try:
        book = StepBook.model_validate(doc)
    except ValidationError as exc:
        raise ScenarioError(pydantic_problems(exc, str(p))) from None
    _validate_book(book, str(p))
    return book


@lru_cache(maxsize=1)
def load_profiles(path: str | None = None) -> dict[str, Profile]:
    """Load the build-out profiles (built-in ``data/profiles.yaml`` unless a path is given; the
    built-in ones validated once per content and code)."""
    if path:
        return _checked_profiles(read_document(Path(path)), Path(path))
    p = DATA_DIR / "profiles.yaml"
    return modelcache.load("profiles", [p], lambda: _checked_profiles(read_packaged(p), p),
                           (Profile, _checked_profiles))


def _checked_profiles(doc: Any, p: Path) -> dict[str, Profile]:
    out: dict[str, Profile] = {}
    problems: list[Problem] = []
    for key, body in (doc or {}).items():
        try:
            out[key] = Profile.model_validate({"id": key, **body})
        except ValidationError as exc:
            problems.extend(pydantic_problems(exc, str(p), key))
    for prof in out.values():
        if prof.inherits is not None and prof.inherits not in out:
            problems.append(
                Problem(str(p), f"{prof.id}.inherits", f"unknown profile {prof.inherits!r}")
            )
    if problems:
        raise ScenarioError(problems)
    return out


def profile_chain(profiles: dict[str, Profile], name: str) -> list[Profile]:
    """The profile and those it inherits from, base first."""
    chain: list[Profile] = []
    seen: set[str] = set()
    cur: str | None = name
    while cur is not None and cur not in seen:
        seen.add(cur)
        chain.append(profiles[cur])
        cur = profiles[cur].inherits
    return chain[::-1]
