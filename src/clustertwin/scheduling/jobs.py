"""Jobs as columns: a :class:`Workload` is what the engine replays.

Units: times in seconds from the start of the trace; GPU demand in milli-GPUs
(``gpus_milli``: 1000 = one whole GPU, 460 = 46 % of one GPU, 16000 = sixteen GPUs). A demand
below 1000 shares one GPU with other jobs; a demand of 1000 or more is whole GPUs and must be a
multiple of 1000. Jobs are all-or-nothing (gang): all of their GPUs start together.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

#: Dependency kinds understood by the engine (Slurm ``sbatch --dependency`` names).
DEP_KINDS = ("afterok", "afterany")

#: Default QoS levels, higher = more important. The openb names are Kubernetes QoS classes
#: (Guaranteed, Burstable, BestEffort) plus Alibaba's LS (latency-sensitive) / BE (best effort).
QOS_LEVELS: dict[str, int] = {"BE": 0, "BestEffort": 0, "": 1, "normal": 1, "Burstable": 1,
                              "LS": 2, "high": 2, "Guaranteed": 3}


@dataclass(frozen=True)
class TraceReport:
    """What a loader read and what it refused, with reasons, counts and example rows."""

    source: str
    rows_read: int
    jobs: int
    rejected: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: rows that are not jobs by design (sacct job steps), by kind: accounted, not rejected
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def rows_rejected(self) -> int:
        return sum(self.rejected.values())

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "rows_read": self.rows_read, "jobs": self.jobs,
                "rows_rejected": self.rows_rejected, "rejected": dict(self.rejected),
                "examples": {k: list(v) for k, v in self.examples.items()},
                "rows_skipped": dict(self.skipped), "notes": list(self.notes)}

    def merged(self, other: TraceReport) -> TraceReport:
        rej = dict(self.rejected)
        ex = {k: list(v) for k, v in self.examples.items()}
        for k, v in other.rejected.items():
            rej[k] = rej.get(k, 0) + v
            ex.setdefault(k, [])
            ex[k] = (ex[k] + list(other.examples.get(k, [])))[:3]
        skipped = dict(self.skipped)
        for k, v in other.skipped.items():
            skipped[k] = skipped.get(k, 0) + v
        return TraceReport(self.source, self.rows_read + other.rows_read, self.jobs + other.jobs,
                           rej, ex, self.notes + tuple(n for n in other.notes if n not in self.notes),
                           skipped)


class Rejections:
    """Collects rejected rows while a loader runs (count per reason, first three examples)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.examples: dict[str, list[str]] = {}

    def add(self, reason: str, example: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        ex = self.examples.setdefault(reason, [])
        if len(ex) < 3:
            ex.append(example)


@dataclass(frozen=True, eq=False)
class Workload:
    """A set of jobs, one entry per job in every array (index = job id inside a run).

    ``requested_s`` is the user's time limit; NaN means "not in the trace", filled by
    :func:`with_time_limits`. ``checkpoint_s`` is the checkpoint interval (inf = the job cannot
    checkpoint and restarts from zero when interrupted). ``deps`` maps a job index to a tuple
    of ``(kind, other_index)`` with kind in :data:`DEP_KINDS`. ``reservation`` names a
    reservation index the job must run in (-1 = none)."""

    names: tuple[str, ...]
    submit_s: np.ndarray
    gpus_milli: np.ndarray
    duration_s: np.ndarray
    requested_s: np.ndarray
    team: np.ndarray
    teams: tuple[str, ...]
    qos: np.ndarray
    priority: np.ndarray
    checkpoint_s: np.ndarray
    reservation: np.ndarray
    deps: dict[int, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    report: TraceReport | None = None

    def __len__(self) -> int:
        return len(self.names)

    @property
    def gpus(self) -> np.ndarray:
        """GPU demand in GPUs (fractions for shared GPUs)."""
        return self.gpus_milli / 1000.0

    def subset(self, idx: np.ndarray | slice) -> Workload:
        """The jobs at ``idx`` (dependencies between kept jobs are renumbered, others dropped)."""
        idx = np.arange(len(self))[idx] if isinstance(idx, slice) else np.asarray(idx)
        new_of = {int(o): i for i, o in enumerate(idx)}
        deps = {}
        for o, ds in self.deps.items():
            if o in new_of:
                kept = tuple((k, new_of[d]) for k, d in ds if d in new_of)
                if kept:
                    deps[new_of[o]] = kept
        return replace(self, names=tuple(self.names[i] for i in idx),
                       submit_s=self.submit_s[idx], gpus_milli=self.gpus_milli[idx],
                       duration_s=self.duration_s[idx], requested_s=self.requested_s[idx],
                       team=self.team[idx], qos=self.qos[idx], priority=self.priority[idx],
                       checkpoint_s=self.checkpoint_s[idx], reservation=self.reservation[idx],
                       deps=deps)


# a workload is a table: one array per column, the optional ones as keywords (every trace reader
# passes the columns it has)
def make_workload(names: list[str] | tuple[str, ...], submit_s: Any, gpus_milli: Any,
                  duration_s: Any, *, requested_s: Any = None, teams: Any = None,
                  qos: Any = None, priority: Any = None, checkpoint_s: Any = None,
                  reservation: Any = None, deps: dict[int, tuple[tuple[str, int], ...]] | None = None,
                  report: TraceReport | None = None) -> Workload:
    """Build a Workload from per-job sequences; missing columns get neutral defaults
    (one team ``default``, QoS level 1, priority 0, no checkpoints, no reservation)."""
    n = len(names)
    team_names = ["default"] * n if teams is None else [str(t) for t in teams]
    uniq = tuple(sorted(set(team_names)))
    code = {t: i for i, t in enumerate(uniq)}

    def col(v: Any, default: float, dtype: Any) -> np.ndarray:
        if v is None:
            return np.full(n, default, dtype=dtype)
        return np.asarray(v, dtype=dtype).reshape(n)

    w = Workload(
        names=tuple(names), submit_s=col(submit_s, 0.0, np.float64),
        gpus_milli=col(gpus_milli, 1000, np.int64), duration_s=col(duration_s, 0.0, np.float64),
        requested_s=col(requested_s, np.nan, np.float64),
        team=np.fromiter((code[t] for t in team_names), dtype=np.int32, count=n), teams=uniq,
        qos=col(qos, 1, np.int32), priority=col(priority, 0.0, np.float64),
        checkpoint_s=col(checkpoint_s, np.inf, np.float64),
        reservation=col(reservation, -1, np.int32), deps=dict(deps or {}), report=report)
    # a NaN submit time on the event heap never leaves it (the replay hung; issue 15): loaders
    # reject such rows, this catches any other caller
    if not (np.isfinite(w.submit_s).all() and np.isfinite(w.duration_s).all()
            and (w.duration_s >= 0).all() and (w.gpus_milli >= 0).all()):
        raise ValueError("job submit times and durations must be finite, durations and GPUs >= 0")
    return w


def with_time_limits(w: Workload, rng: np.random.Generator, max_factor: float = 3.0,
                     grid_s: float = 900.0) -> Workload:
    """Fill missing requested time limits: ``duration x U(1, max_factor)`` rounded up to
    ``grid_s``.

    Assumption, not trace data: traces carry no time limits. Users over-estimate run time and
    pick round values (Tsafrir, Etsion & Feitelson, "Backfilling using system-generated
    predictions rather than user runtime estimates", IEEE TPDS 2007); the uniform factor and the
    15-minute grid are a simple model of that and are exposed as options. The limit is never
    below the duration, so no job is killed at its limit unless the trace says so."""
    req = w.requested_s.copy()
    miss = np.isnan(req)
    if miss.any():
        f = rng.uniform(1.0, max(1.0, max_factor), size=int(miss.sum()))
        est = np.ceil(w.duration_s[miss] * f / grid_s) * grid_s
        req[miss] = np.maximum(est, w.duration_s[miss])
    return replace(w, requested_s=req)


def with_checkpoints(w: Workload, interval_s: float | None) -> Workload:
    """Give every job without one a checkpoint interval (None or inf keeps 'no checkpoints')."""
    if interval_s is None:
        return w
    ck = w.checkpoint_s.copy()
    ck[np.isinf(ck)] = interval_s
    return replace(w, checkpoint_s=ck)
