"""The frozen result of the reliability stage and its views (contract block, rows, figures)."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from clustertwin.fmt import plural

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

    def summary_rows(self) -> list[tuple[str, str]]:
        cat = self.lost_gpu_hours_by_category
        top = sorted(self.by_cause.items(), key=lambda kv: -kv[1])[:3]
        rows = [
            ("failure profile", f"{self.failure_profile} ({self.failures_per_1000_node_days:.2f}"
                                " per 1000 node-days)"),
            ("job", f"{self.gpus:,} GPUs on {plural(self.nodes, 'node')}, {self.spare_nodes} spare "
                    f"(advised {self.spare_nodes_advised})"),
            ("interruptions", f"{self.interruptions_mean:.0f} (p5 {self.interruptions_p5:.0f}, "
                              f"p95 {self.interruptions_p95:.0f}) + "
                              f"{self.planned_interruptions_mean:.0f} planned"),
            ("job MTBF", f"{self.mtbf_h:.2f} h"),
            ("top causes", ", ".join(f"{k} {v:.0f}" for k, v in top)),
            ("checkpoint", f"{self.checkpoint_size_gb / 1000:.2f} TB, write "
                           f"{self.checkpoint_write_s:.1f} s, stall {self.checkpoint_blocking_s:.1f} s,"
                           f" restore {self.checkpoint_restore_s:.1f} s"),
            ("checkpoint interval", f"{self.checkpoint_interval_min:.1f} min ({self.interval_source})"
                                    + (" to the file system" if self.checkpoint_tiers > 1 else "")),
            ("optimum / Young / Daly", f"{self.optimal_interval_min:.1f} / "
                                       f"{self.young_interval_min:.1f} / "
                                       f"{self.daly_interval_min:.1f} min"),
        ]
        rows += self._tier_rows()
        rows += [
            ("ETTR", f"{self.ettr_mean:.3f} (p5 {self.ettr_p5:.3f}); Daly model, no repair "
                     f"waits, {self.ettr_daly:.3f}"
                     + (" (file system only)" if self.checkpoint_tiers > 1 else "")),
            ("lost progress per interruption", f"{self.lost_progress_per_interruption_min:.1f} min"),
            ("wall-clock days", f"{self.effective_days:.1f} (p95 {self.effective_days_p95:.1f}) "
                                f"for {self.training_days:.1f} days of training"),
            ("lost GPU-hours", f"{self.lost_gpu_hours:,.0f}"),
        ]
        for k in CATEGORIES:
            rows.append((f"  {k.replace('_', ' ')}", f"{cat[k]:,.0f} GPU-h, "
                                                     f"${self.wasted_usd_by_category[k]:,.0f}"))
        rows.append(("wasted", f"${self.wasted_usd:,.0f} at ${self.usd_per_gpu_hour:.2f}/GPU-h"))
        rows += [("note", n) for n in self.notes]
        return rows

    def _tier_rows(self) -> list[tuple[str, str]]:
        if self.checkpoint_tiers < 2 or self.local_checkpoint_interval_min is None:
            return []
        k = self.pfs_every_local or 1
        rows = [
            ("local checkpoints", f"every {self.local_checkpoint_interval_min:.1f} min "
                                  f"({self.local_interval_source}) to {self.local_checkpoint_medium}, "
                                  f"{self.local_checkpoint_replicas} peer copies; file system every "
                                  f"{k} of them"),
            ("  local stall / durable / restore", f"{self.local_checkpoint_blocking_s:.2f} s / "
                                                  f"{self.local_checkpoint_write_s:.2f} s / "
                                                  f"{self.local_checkpoint_restore_s:.2f} s; restart "
                                                  f"{self.local_restart_min:.1f} min"),
            ("  restored from local tier", f"{self.local_restore_share:.0%} of interruptions "
                                           f"({self.local_loss_share:.0%} of failures lose it)"),
        ]
        if self.local_optimal_interval_min is not None and self.optimal_pfs_every_local:
            rows.append(("  two-tier optimum", f"local {self.local_optimal_interval_min:.1f} min, "
                                               f"file system every {self.optimal_pfs_every_local}; "
                                               f"first order {self.two_tier_young_interval_min:.1f} min"))
        if self.pfs_only_ettr_mean is not None:
            rows.append(("  file system only", f"ETTR {self.pfs_only_ettr_mean:.3f} at "
                                               f"{self.checkpoint_interval_min:.1f} min; two tiers "
                                               f"{self.ettr_gain_over_pfs_only:+.3f} on the same failures"))
        return rows

    def figures(self) -> list[tuple[str, Any]]:
        import plotly.graph_objects as go

        x = [c[0] for c in self.curve]
        ettr_fig = go.Figure()
        ettr_fig.add_trace(go.Scatter(x=x, y=[c[1] for c in self.curve], mode="lines+markers",
                                      name="simulated (mean over trials)"))
        ettr_fig.add_trace(go.Scatter(x=x, y=[c[2] for c in self.curve], mode="lines",
                                      name="Daly complete model", line={"dash": "dash"}))
        if self.tier_curve:
            tx = [c[0] for c in self.tier_curve]
            every = self.tier_curve_every or 1
            ettr_fig.add_trace(go.Scatter(x=tx, y=[c[1] for c in self.tier_curve],
                                          mode="lines+markers",
                                          name=f"two tiers: local interval, file system every {every}"))
            ettr_fig.add_trace(go.Scatter(x=tx, y=[c[2] for c in self.tier_curve], mode="lines",
                                          name="two tiers, first order", line={"dash": "dot"}))
            x = x + tx
        marks = [("used", self.checkpoint_interval_min), ("Young", self.young_interval_min),
                 ("Daly", self.daly_interval_min)]
        if self.local_checkpoint_interval_min is not None:
            marks.append(("local", self.local_checkpoint_interval_min))
        for label, value in marks:
            if value > 0 and x and min(x) <= value <= max(x):
                # a shape takes the data value on a log axis, an annotation its log10: labels
                # given to add_vline land at 10^value and stretch the axis to 10^153
                ettr_fig.add_vline(x=value, line_dash="dot")
                ettr_fig.add_annotation(x=math.log10(value), y=1.0, yref="paper", text=label,
                                        showarrow=False, yanchor="bottom")
        ettr_fig.update_layout(title="ETTR against checkpoint interval",
                               xaxis_title="minutes of training between checkpoints",
                               yaxis_title="effective training time ratio", xaxis_type="log")

        xs, ys = [0.0], [0.0]
        fails: dict[str, tuple[list[float], list[float]]] = {}
        resume = 0.0
        for t, cause, reached, kept, res in self.timeline:
            xs += [t / 24.0]
            ys += [reached / 24.0]
            if cause != "end":
                xs += [t / 24.0, res / 24.0]
                ys += [kept / 24.0, kept / 24.0]
                fx, fy = fails.setdefault(cause, ([], []))
                fx.append(t / 24.0)
                fy.append(reached / 24.0)
            resume = res
        del resume
        line_fig = go.Figure()
        line_fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name="training progress"))
        for cause, (fx, fy) in sorted(fails.items()):
            line_fig.add_trace(go.Scatter(x=fx, y=fy, mode="markers", name=cause))
        line_fig.update_layout(title="One sampled run: progress and interruptions",
                               xaxis_title="wall-clock days", yaxis_title="days of training kept")
        return [("ETTR vs checkpoint interval", ettr_fig), ("sampled run timeline", line_fig)]
