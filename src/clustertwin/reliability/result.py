"""The frozen result of the reliability stage and its views (contract block, rows, figures)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

#: lost-time categories, in the order they are reported
CATEGORIES = ("checkpoint_stalls", "lost_progress", "restart", "waiting_for_repair")


class ReliabilityResult(BaseModel):
    """Failures, checkpoints and goodput of one training run. Times are in the unit their name
    says; ``*_mean``/``*_p5``/``*_p95`` are over Monte Carlo trials."""

    model_config = ConfigDict(frozen=True)

    # job and inputs
    gpus: int
    nodes: int
    spare_nodes: int
    failure_profile: str
    failures_per_1000_node_days: float
    trials: int
    seed: int
    training_days: float
    restart_min: float
    repair_h: float
    nodes_in_repair_mean: float       #: time-average nodes away for repair
    spare_nodes_advised: int          #: spares that leave < 0.1% of failures without one
    # failure counts
    interruptions_mean: float
    interruptions_p5: float
    interruptions_p95: float
    planned_interruptions_mean: float
    mtbf_h: float
    mtbi_all_h: float
    by_cause: dict[str, float]
    by_category: dict[str, float]
    # checkpoints
    checkpoint_size_gb: float
    checkpoint_per_gpu_gb: float
    checkpoint_write_s: float
    checkpoint_blocking_s: float
    checkpoint_persist_s: float
    checkpoint_restore_s: float
    checkpoint_nvme_write_s: float | None
    storage_write_gbps: float
    storage_read_gbps: float
    storage_source: str
    # intervals (minutes of compute between checkpoints)
    checkpoint_interval_min: float
    interval_source: str
    optimal_interval_min: float
    young_interval_min: float
    daly_interval_min: float
    min_interval_min: float
    # goodput
    ettr_mean: float
    ettr_p5: float
    ettr_p95: float
    ettr_daly: float
    effective_days: float
    effective_days_p95: float
    lost_gpu_hours: float
    lost_gpu_hours_by_category: dict[str, float]
    usd_per_gpu_hour: float
    wasted_usd: float
    wasted_usd_by_category: dict[str, float]
    wasted_usd_per_interruption: float
    # for the figures
    curve: tuple[tuple[float, float, float], ...]      #: (interval_min, simulated, Daly) ETTR
    timeline: tuple[tuple[float, str, float, float, float], ...]
    notes: tuple[str, ...] = ()
    include_planned: bool = True
    lost_progress_per_interruption_min: float = 0.0    #: mean compute lost per unexpected interruption
    # two-tier schedules (None with file-system checkpoints only); checkpoint_interval_min and
    # optimal_interval_min are then the file-system tier's
    checkpoint_tiers: int = 1
    local_checkpoint_interval_min: float | None = None
    local_interval_source: str | None = None
    local_optimal_interval_min: float | None = None
    pfs_every_local: int | None = None                 #: a file-system copy every k-th local checkpoint
    optimal_pfs_every_local: int | None = None
    local_checkpoint_replicas: int | None = None
    local_checkpoint_medium: str | None = None
    local_checkpoint_source: str | None = None
    local_checkpoint_blocking_s: float | None = None   #: stall of a local checkpoint
    local_checkpoint_write_s: float | None = None      #: background time until it is durable
    local_checkpoint_restore_s: float | None = None
    local_restart_min: float | None = None             #: recovery when restoring from the local tier
    local_loss_share: float | None = None              #: share of failures that lose the local tier
    local_restore_share: float | None = None           #: simulated share restored from the local tier
    pfs_only_ettr_mean: float | None = None            #: file-system only at the same interval
    ettr_gain_over_pfs_only: float | None = None       #: two-tier minus file-system-only ETTR (same failures)
    two_tier_young_interval_min: float | None = None   #: first-order optimal local interval
    ettr_two_tier_first_order: float | None = None
    tier_curve: tuple[tuple[float, float, float], ...] = ()  #: (local_min, simulated, first order)
    tier_curve_every: int | None = None                #: the file-system multiple along tier_curve

    def to_contract(self) -> dict[str, Any]:
        out = self.model_dump(exclude={"curve", "timeline", "tier_curve", "tier_curve_every"})
        out["notes"] = list(self.notes)
        return out
