"""One metric record of a training log, and the count of lines a reader could not use.

Every reader turns a line (or a JSON entry) into a :class:`Record`; what it cannot read is
counted and named in :class:`LineStats` (the first :data:`NAMED_MAX` by line number), never
raised: a multi-GB log with a few torn lines is still read.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

#: bad lines named by line number and reason (the rest are only counted)
NAMED_MAX = 20


@dataclass(slots=True)
class Record:
    """One logged training step. ``t`` is epoch seconds (UTC) or None when the line has no
    time; ``tokens`` the cumulative tokens trained (None: derived from the step and the batch);
    ``step_s`` the time per step the framework measured (None: derived from the times)."""

    step: int
    t: float | None = None
    tokens: float | None = None
    step_s: float | None = None
    loss: float | None = None
    skipped: int = 0        #: iterations skipped in this log interval (Megatron: inf/nan grads)
    nan: int = 0            #: iterations with a nan loss in this log interval
    tflops: float | None = None   #: model TFLOP/s per GPU the framework reports
    mfu: float | None = None      #: 0..1
    batch: float | None = None    #: global batch in sequences when the line says it
    samples: float | None = None  #: cumulative sequences (Megatron's consumed samples)
    tps_per_gpu: float | None = None  #: tokens per second per GPU (torchtitan's tps)


@dataclass
class LineStats:
    """Lines read, lines that looked like metrics but could not be read (named), others."""

    source: str
    read: int = 0
    skipped: int = 0
    other: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)
    unit: str = "line"        #: what a number in ``bad`` counts ("log_history entry" for trainer_state.json)

    def reject(self, line_no: int, why: str) -> None:
        self.skipped += 1
        if len(self.bad) < NAMED_MAX:
            self.bad.append((line_no, why))

    def named(self) -> list[str]:
        return [f"{self.source}: {self.unit} {n}: {why}" for n, why in self.bad]


class BadLine(ValueError):
    """A metric-looking line whose fields do not parse (the reason is the message)."""


def number(text: str, what: str) -> float:
    """A float from log text (thousands separators allowed); BadLine when it is not one."""
    try:
        v = float(text.replace(",", ""))
    except ValueError:
        raise BadLine(f"{what} is not a number ({text[:20]!r})") from None
    if math.isinf(v):
        raise BadLine(f"{what} is infinite")
    return v


_TIME_FORMATS = ("%Y-%m-%d %H:%M:%S,%f", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S",
                 "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S")


def parse_time(text: str) -> float:
    """Epoch seconds of a log time: ISO 8601 (``T`` or space, optional fraction after ``.`` or
    ``,``, optional zone; naive times read as UTC) or epoch seconds. BadLine otherwise."""
    s = text.strip()
    try:
        v = float(s)
        if 0 < v < 1e11:
            return v
    except ValueError:
        pass
    try:
        d = dt.datetime.fromisoformat(s.replace(",", ".").replace("Z", "+00:00"))
    except ValueError:
        raise BadLine(f"time {s[:32]!r} is not ISO 8601 or epoch seconds") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.UTC)
    return d.timestamp()


def as_of_time(text: str | None, key: str) -> float | None:
    """The time a run is tracked up to (``--as-of``, the web page's "as of"): an ISO 8601 date or
    time (UTC when no zone is given), None when not given; one UsageError naming ``key`` otherwise."""
    if text is None:
        return None
    from clustertwin.errors import Problem, UsageError

    try:
        return parse_time(text)
    except BadLine:
        raise UsageError([Problem(key, key, f"an ISO 8601 date or time such as 2027-03-10 "
                                  f"or 2027-03-10T12:00:00, got {text[:40]!r}")]) from None


def iso(t: float) -> str:
    """Epoch seconds as an ISO 8601 UTC time (seconds)."""
    return dt.datetime.fromtimestamp(t, tz=dt.UTC).replace(microsecond=0).isoformat()
