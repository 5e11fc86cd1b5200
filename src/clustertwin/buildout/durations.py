"""Effective three-point durations of every step for one profile and one cluster size."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from clustertwin.buildout.quantities import Quantities
from clustertwin.buildout.steps import Profile, StepBook, profile_chain


@dataclass(frozen=True)
class StepInput:
    """One step as the schedule sees it: days after profile and scaling, and its predecessors."""

    number: int
    o: float
    m: float
    p: float
    after: tuple[int, ...]
    quantity: str | None = None
    quantity_value: float | None = None
    crews: int | None = None
    work_days: float = 0.0
    applicable: bool = True

    def with_days(self, o: float, m: float, p: float) -> StepInput:
        return replace(self, o=o, m=m, p=p)


#: the last few :func:`effective_steps` answers: (book, profiles, their other arguments, steps)
_RECENT: list[tuple[StepBook, dict[str, Profile], tuple, dict[int, StepInput]]] = []
_RECENT_SIZE = 16


def effective_steps(
    book: StepBook,
    profiles: dict[str, Profile],
    profile: str,
    q: Quantities,
    crew_multiplier: float = 1.0,
    site: str = "greenfield",
) -> dict[int, StepInput]:
    """:func:`step_inputs`, remembered for the same book and profiles (the very objects, which
    are loaded once) and the same other arguments: a sweep plans many points of one cluster
    size, whose steps differ only in their seed. The answer is a new dict each time; its
    :class:`StepInput` values are frozen. The arguments are compared by ``repr``, which tells
    ``5`` from ``5.0`` and every double from every other."""
    args = (profile, repr(q), repr(crew_multiplier), site)
    for b, p, a, steps in _RECENT:
        if b is book and p is profiles and a == args:
            return dict(steps)
    steps = step_inputs(book, profiles, profile, q, crew_multiplier, site)
    _RECENT.insert(0, (book, profiles, args, steps))
    del _RECENT[_RECENT_SIZE:]
    return dict(steps)


def step_inputs(
    book: StepBook,
    profiles: dict[str, Profile],
    profile: str,
    q: Quantities,
    crew_multiplier: float = 1.0,
    site: str = "greenfield",
) -> dict[int, StepInput]:
    """Apply the profile (and those it inherits) and the quantity-driven work to every step.
    Steps of another site (``Step.sites``: what ``site`` has already) are left out, and out of
    every other step's predecessors.

    Work days = qty / (rate x crews) with crews = clamp(ceil(qty / (rate x target_days)), 1,
    max_crews x crew_factor), target_days from the profile or else the staffing default. The
    work is spread by ``staffing.work_spread`` into the three points and added to the step's
    fixed days."""
    chain = profile_chain(profiles, profile)
    crew_factor = math.prod(p.crew_factor for p in chain) * crew_multiplier
    spread = book.staffing.work_spread
    target = book.staffing.target_days
    for prof in chain:
        target = prof.target_days or target
    out: dict[int, StepInput] = {}
    gone = {s.number for s in book.steps if s.sites is not None and site not in s.sites}
    for step in book.steps:
        if step.number in gone:
            continue
        if gone & set(step.after):
            step = step.model_copy(update={"after": tuple(a for a in step.after if a not in gone)})
        o, m, p = step.days
        rate_factor = 1.0
        for prof in chain:
            ov = prof.steps.get(step.number)
            if ov is not None:
                if ov.days is not None:
                    o, m, p = ov.days
                rate_factor *= ov.rate_factor
        if step.applies not in ("all", q.cooling) or (
            step.needs is not None and q.get(step.needs) <= 0
        ):
            out[step.number] = StepInput(step.number, 0.0, 0.0, 0.0, step.after, applicable=False)
            continue
        if step.scale is None:
            out[step.number] = StepInput(step.number, o, m, p, step.after)
            continue
        sc = step.scale
        qty = q.get(sc.per)
        rate = sc.rate * rate_factor
        cap = max(1, round(sc.max_crews * crew_factor))
        crews = min(cap, max(1, math.ceil(qty / (rate * target))))
        work = qty / (rate * crews)
        out[step.number] = StepInput(
            step.number,
            o + work * spread[0],
            m + work * spread[1],
            p + work * spread[2],
            step.after,
            quantity=sc.per,
            quantity_value=qty,
            crews=crews,
            work_days=work,
        )
    return out
