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


def effective_steps(
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
