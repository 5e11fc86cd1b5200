"""What-if requests: parse ``KEY=VALUE`` strings and apply them to the step inputs.

One what-if is one string; several changes in it are separated by spaces or ``;`` and apply
together. Keys:

* named lead times (``gpu_lead_time_days``, ``substation_days`` ... see :data:`ALIASES`) and
  ``step.N.days``: the whole three-point estimate. ``+90`` / ``-30`` shift all three points,
  ``x1.5`` scales them, ``120`` sets the likely value and moves the other two with it,
  ``30/45/90`` sets all three.
* ``step.N.optimistic`` / ``step.N.likely`` / ``step.N.pessimistic``: one point (same value
  forms except ``a/b/c``); ``likely`` stretches the other points when it falls outside them.
* ``step.N.after``: predecessors; ``12,40`` replaces them, ``+12,40`` adds, ``-12`` removes.
* ``profile``: ``new-build`` | ``existing-facility`` | ``small-order`` | ``colocation`` | ``fast-track``.
* ``crews``: multiplier on every step's crew cap (``x2`` or ``2``).
* ``gpus``: the job's GPU count (servers, racks, links and MW follow with the simple rules).

The named lead times and ``crews`` are also scenario keys (``buildout.lead_times.<name>``,
``buildout.crews``): they change the baseline itself, so a sweep can vary them
(:func:`scenario_what_if`); ``--what-if`` requests then apply on top of them.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from clustertwin.buildout.durations import StepInput
from clustertwin.errors import Problem, UsageError

SOURCE = "--what-if"

#: Named lead times -> the step whose duration they stand for.
ALIASES: dict[str, int] = {
    "gpu_lead_time_days": 1,
    "gpu_allocation_days": 2,
    "nic_lead_time_days": 39,
    "switch_lead_time_days": 40,
    "optics_lead_time_days": 45,
    "utility_study_days": 74,
    "utility_agreement_days": 75,
    "switchgear_days": 76,
    "substation_days": 77,
    "ups_days": 78,
    "generator_days": 80,
    "chiller_days": 114,
    "cooling_tower_days": 115,
    "storage_lead_time_days": 123,
    "burn_in_days": 34,
    "validation_days": 186,
}
PROFILES = ("new-build", "existing-facility", "small-order", "colocation", "fast-track")
_NUM = r"[0-9]+(?:\.[0-9]*)?"
_STEP_KEY = re.compile(r"^step\.([0-9]+)\.(days|optimistic|likely|pessimistic|after)$")
_POINT = {"optimistic": 0, "likely": 1, "pessimistic": 2}
#: Bounds that keep a what-if inside a calendar and a memory budget (a typo such as
#: ``gpus=1e12`` or ``crews=1e308`` used to overflow or report a go-live 10^17 days out).
MAX_DAYS = 36_500  # a duration or shift of at most 100 years
MAX_FACTOR = 100.0  # xF duration factor and crew multiplier
MAX_GPUS = 1_048_576


@dataclass(frozen=True)
class Change:
    """One ``KEY=VALUE`` of a what-if, as written."""

    key: str
    value: str


@dataclass(frozen=True)
class WhatIf:
    """One what-if: its label, the step changes, and a profile or crew factor it sets."""

    label: str
    changes: tuple[Change, ...]
    profile: str | None = None
    crews: float = 1.0
    gpus: int | None = None
    step_changes: tuple[Change, ...] = field(default=())


def _split(text: str) -> list[str]:
    return [t for t in re.split(r"[;\s]+", text.strip()) if t]


def _number(value: str, key: str, problems: list[Problem]) -> float | None:
    try:
        return float(value)
    except ValueError:
        problems.append(Problem(SOURCE, key, f"expected a number, got {value!r}"))
        return None


def _check_duration_value(key: str, value: str, triple: bool, problems: list[Problem]) -> None:
    forms = [rf"^[+-]{_NUM}$", rf"^[x*]{_NUM}$", rf"^{_NUM}$"]
    if triple:
        forms.append(rf"^{_NUM}/{_NUM}/{_NUM}$")
    if value.startswith("-") and re.match(rf"^-{_NUM}$", value) is None:
        problems.append(Problem(SOURCE, key, f"durations cannot be negative (got {value})"))
    elif not any(re.match(f, value) for f in forms):
        shape = "+N, -N, xF, N or O/L/P" if triple else "+N, -N, xF or N"
        problems.append(Problem(SOURCE, key, f"expected {shape} days, got {value!r}"))
    elif value[:1] in "x*" and float(value[1:]) > MAX_FACTOR:
        problems.append(Problem(SOURCE, key, f"expected a factor of at most x{MAX_FACTOR:g}, got {value!r}"))
    elif value[:1] not in "x*" and max(float(v) for v in value.lstrip("+-").split("/")) > MAX_DAYS:
        problems.append(Problem(SOURCE, key, f"expected at most {MAX_DAYS} days (100 years), got {value!r}"))


@dataclass
class _Parsed:
    """What one what-if string sets, filled token by token."""

    changes: list[Change] = field(default_factory=list)
    profile: str | None = None
    crews: float = 1.0
    gpus: int | None = None
    step_changes: list[Change] = field(default_factory=list)


def _parse_after(key: str, value: str, known_steps: set[int], problems: list[Problem]) -> bool:
    """Check a ``step.N.after`` value (``12,40``, ``+12``, ``-12``); False when it is bad."""
    nums = [r for r in value.lstrip("+-").split(",") if r]
    if not nums or not all(r.isdigit() for r in nums):
        problems.append(Problem(SOURCE, key, f"expected step numbers like 12,40 (or +12 / -12), got {value!r}"))
        return False
    bad = [int(r) for r in nums if int(r) not in known_steps]
    if bad:
        problems.append(Problem(SOURCE, key, f"unknown step {', '.join(map(str, bad))}"))
        return False
    return True


def _parse_step_key(key: str, value: str, known_steps: set[int], problems: list[Problem]) -> Change | None:
    """A ``step.N.*`` change, or None (and a problem) when the key or value is bad."""
    m = _STEP_KEY.match(key)
    if m is None:
        problems.append(Problem(SOURCE, key, "expected step.N.days, step.N.optimistic, step.N.likely, "
                                "step.N.pessimistic or step.N.after"))
        return None
    n, what = int(m.group(1)), m.group(2)
    if n not in known_steps:
        problems.append(Problem(SOURCE, key, f"unknown step {n}; steps are numbered 1-{max(known_steps)}"))
        return None
    if what == "after":
        return Change(key, value) if _parse_after(key, value, known_steps, problems) else None
    _check_duration_value(key, value, what == "days", problems)
    return Change(key, value)


def _parse_setting(key: str, value: str, out: _Parsed, problems: list[Problem]) -> None:
    """``profile``, ``crews`` or ``gpus``."""
    if key == "profile":
        if value not in PROFILES:
            problems.append(Problem(SOURCE, key, f"unknown profile {value!r}; one of {', '.join(PROFILES)}"))
        out.profile = value
        return
    v = _number(value.lstrip("x*") if key == "crews" else value, key, problems)
    if v is None:
        return
    if key == "crews":
        if not 0.01 <= v <= MAX_FACTOR:  # NaN fails too
            problems.append(Problem(SOURCE, key, f"the crew multiplier must be positive, from 0.01 to {MAX_FACTOR:g}"))
        else:
            out.crews = v
    elif not 1 <= v <= MAX_GPUS or v != int(v):
        problems.append(Problem(SOURCE, key, f"expected a whole number of GPUs from 1 to {MAX_GPUS}"))
    else:
        out.gpus = int(v)


def _parse_token(tok: str, known_steps: set[int], out: _Parsed, problems: list[Problem]) -> None:
    key, sep, value = tok.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key or not value:
        problems.append(Problem(SOURCE, tok, "expected KEY=VALUE, e.g. gpu_lead_time_days=+90"))
        return
    out.changes.append(Change(key, value))
    if key in ("profile", "crews", "gpus"):
        _parse_setting(key, value, out, problems)
    elif key in ALIASES:
        _check_duration_value(key, value, True, problems)
        out.step_changes.append(Change(f"step.{ALIASES[key]}.days", value))
    elif key.startswith("step."):
        change = _parse_step_key(key, value, known_steps, problems)
        if change is not None:
            out.step_changes.append(change)
    else:
        names = ", ".join(["profile", "crews", "gpus", *ALIASES, "step.N.*"])
        problems.append(Problem(SOURCE, key, f"unknown what-if key; known: {names}"))


def parse_what_if(text: str, known_steps: set[int]) -> tuple[WhatIf | None, list[Problem]]:
    """Parse one what-if string; returns it and the problems found (none when valid)."""
    problems: list[Problem] = []
    tokens = _split(text)
    if not tokens:
        problems.append(Problem(SOURCE, "", "empty what-if; expected KEY=VALUE"))
    out = _Parsed()
    for tok in tokens:
        _parse_token(tok, known_steps, out, problems)
    if problems:
        return None, problems
    return WhatIf(text.strip(), tuple(out.changes), out.profile, out.crews, out.gpus, tuple(out.step_changes)), []


def scenario_what_if(buildout: Any) -> WhatIf | None:
    """The scenario's own build-out changes (``buildout.lead_times.*``, ``buildout.crews``) as
    one what-if applied to the baseline; None when it sets none."""
    named = buildout.lead_times.changes()
    crews = float(buildout.crews)
    if not named and crews == 1.0:
        return None
    changes = tuple(Change(k, v) for k, v in named.items())
    steps = tuple(Change(f"step.{ALIASES[k]}.days", v) for k, v in named.items())
    return WhatIf("scenario", changes, None, crews, None, steps)


def with_base(w: WhatIf, base: WhatIf | None) -> WhatIf:
    """``w`` on top of the scenario's own changes (``base``)."""
    if base is None:
        return w
    return dataclasses.replace(w, crews=w.crews * base.crews, step_changes=base.step_changes + w.step_changes)


def parse_what_ifs(
    items: list[str] | tuple[str, ...] | dict | str | None, known_steps: set[int]
) -> list[WhatIf]:
    """Parse all what-ifs (strings, or a mapping KEY -> VALUE meaning one what-if per entry);
    raise one UsageError listing every problem."""
    if items is None:
        return []
    if isinstance(items, str):
        items = [items]
    elif isinstance(items, dict):
        items = [f"{k}={v}" for k, v in items.items()]
    out: list[WhatIf] = []
    problems: list[Problem] = []
    for text in items:
        wi, probs = parse_what_if(str(text), known_steps)
        problems.extend(probs)
        if wi is not None:
            out.append(wi)
    if problems:
        raise UsageError(problems)
    return out


def _apply_value(cur: float, value: str) -> float:
    if value[0] in "+-":
        return cur + float(value)
    if value[0] in "x*":
        return cur * float(value[1:])
    return float(value)


def apply_step_changes(
    steps: dict[int, StepInput], changes: tuple[Change, ...]
) -> dict[int, StepInput]:
    """Return a new step map with the changes applied; raise UsageError on negative or
    disordered durations (cycles are caught when the graph compiles)."""
    out = dict(steps)
    problems: list[Problem] = []
    for ch in changes:
        m = _STEP_KEY.match(ch.key)
        assert m is not None  # parse_what_if only lets step keys through here
        n, what = int(m.group(1)), m.group(2)
        if n not in out:
            problems.append(Problem(SOURCE, ch.key, f"step {n} is not in this build-out (its site has it already: decision.site)"))
            continue
        s = out[n]
        if what == "after":
            nums = tuple(int(r) for r in ch.value.lstrip("+-").split(","))
            if any(a not in out for a in nums):
                problems.append(Problem(SOURCE, ch.key, "a step not in this build-out (its site has it already: decision.site)"))
                continue
            if ch.value.startswith("+"):
                after = tuple(sorted(set(s.after) | set(nums)))
            elif ch.value.startswith("-"):
                after = tuple(a for a in s.after if a not in nums)
            else:
                after = tuple(sorted(set(nums)))
            if n in after:
                problems.append(Problem(SOURCE, ch.key, f"step {n} cannot follow itself"))
                continue
            out[n] = dataclasses.replace(s, after=after)
            continue
        o, lk, p = s.o, s.m, s.p
        if what == "days":
            if "/" in ch.value:
                o, lk, p = (float(v) for v in ch.value.split("/"))
            elif ch.value[0] in "+-":
                delta = float(ch.value)
                o, lk, p = o + delta, lk + delta, p + delta
            elif ch.value[0] in "x*":
                f = float(ch.value[1:])
                o, lk, p = o * f, lk * f, p * f
            else:
                delta = float(ch.value) - lk
                o, lk, p = max(0.0, o + delta), lk + delta, p + delta
        else:
            pts = [o, lk, p]
            pts[_POINT[what]] = _apply_value(pts[_POINT[what]], ch.value)
            o, lk, p = pts
            if what == "likely":
                o, p = min(o, lk), max(p, lk)
        if min(o, lk, p) < 0:
            problems.append(
                Problem(SOURCE, ch.key, f"makes a duration negative ({o:g}/{lk:g}/{p:g} days)")
            )
            continue
        if not o <= lk <= p:
            problems.append(
                Problem(
                    SOURCE,
                    ch.key,
                    f"needs optimistic <= likely <= pessimistic, got {o:g}/{lk:g}/{p:g}",
                )
            )
            continue
        out[n] = s.with_days(o, lk, p)
    if problems:
        raise UsageError(problems)
    return out
