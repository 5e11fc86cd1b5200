"""The engine's vocabulary: event kinds, job states, run options and the raw run output."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# event kinds, in the order they apply at one instant
END, REPAIR, FAIL, WAKE, ARRIVE = 0, 1, 2, 3, 4
# job status
FUTURE, HELD, QUEUED, RUNNING, DONE, TIMEOUT, CANCELLED = range(7)
STATUS_NAMES = ("not_submitted", "held", "queued", "running", "completed", "timeout", "cancelled")

#: Jobs the main loop considers per pass beyond the head: Slurm's ``default_queue_depth``
#: default (slurm.conf SchedulerParameters; scheduling-anchors.md section 4).
DEFAULT_SCAN_DEPTH = 100


@dataclass(frozen=True)
class Reservation:
    """A block of ``gpus`` GPUs (whole nodes, placed compactly) held over [start_s, end_s).
    Jobs whose ``reservation`` index points here run only inside it."""

    name: str
    start_s: float
    end_s: float
    gpus: int


@dataclass(frozen=True)
class SimConfig:
    """Run options. Times in seconds; rates per node per day."""

    placement: str = "best-fit"
    scan_depth: int | None = DEFAULT_SCAN_DEPTH
    failure_rate_per_node_day: float = 0.0
    repair_s: float = 4 * 3600.0
    restart_s: float = 0.0
    shares: dict[str, float] = field(default_factory=dict)
    team_limits_gpus: dict[str, float] = field(default_factory=dict)
    reservations: tuple[Reservation, ...] = ()
    horizon_s: float = math.inf
    record_timeline: bool = True


@dataclass
class RunOutput:
    """Raw per-job and over-time results of one run (metrics are computed from these)."""

    policy: str
    placement: str
    status: np.ndarray
    first_start_s: np.ndarray
    end_s: np.ndarray
    run_s: np.ndarray
    preemptions: np.ndarray
    interruptions: np.ndarray
    lost_gpu_s: np.ndarray
    lost_preempt_gpu_s: np.ndarray
    alloc_gpus: np.ndarray
    leaf_groups: np.ndarray
    scalable_units: np.ndarray
    timeline: dict[str, np.ndarray]
    down_gpu_s: float
    failures: int
    end_time_s: float
    team_gpu_s: np.ndarray
    shares: np.ndarray
    reserved_head_checks: list[tuple[int, float, float]]
    events: int
