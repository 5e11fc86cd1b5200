"""Reading one number of a trace row: finite, in range, or a rejection reason (never NaN on the
event heap, never an OverflowError from ``int(inf)``)."""

from __future__ import annotations

import math

#: Latest submit time and longest duration a replay takes: ~317 years in seconds.
MAX_TIME_S = 1e10
#: Largest job a trace row may ask for, GPUs.
MAX_JOB_GPUS = 1_048_576


class BadValue(ValueError):
    """A trace value that cannot be replayed; ``str()`` is the rejection reason."""


def number(text: object, what: str, lo: float = 0.0, hi: float = MAX_TIME_S,
           lo_open: bool = False) -> float:
    """``text`` as a finite float in [lo, hi] (``(lo, hi]`` with ``lo_open``)."""
    s = str(text).strip() if text is not None else ""
    if not s:
        raise BadValue(f"{what} is empty")
    if len(s) > 64:
        raise BadValue(f"{what} is not a number")
    try:
        v = float(s)
    except ValueError:
        raise BadValue(f"{what} is not a number") from None
    if not math.isfinite(v):
        raise BadValue(f"{what} is NaN or infinite")
    if v < lo or (lo_open and v == lo):
        if lo == 0:
            raise BadValue(f"{what} is {'not positive' if lo_open else 'negative'}")
        raise BadValue(f"{what} is below {lo:g}")
    if v > hi:
        raise BadValue(f"{what} is too large (over {hi:g})")
    return v


def whole(text: object, what: str, lo: int = 0, hi: int = MAX_JOB_GPUS) -> int:
    """``text`` as an integer in [lo, hi]; ``4.0`` is read as 4, ``4.5`` is refused."""
    v = number(text, what, float(lo), float(hi))
    if v != int(v):
        raise BadValue(f"{what} is not a whole number")
    return int(v)
