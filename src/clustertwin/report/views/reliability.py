"""The reliability stage's views: a training job's (rows, interruptions per week, ETTR against
the checkpoint interval) and a design-only cluster's (node failure rates)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clustertwin.fmt import plural
from clustertwin.reliability.result import CATEGORIES
from clustertwin.report import figures as figs

if TYPE_CHECKING:
    from clustertwin.reliability.cluster import ClusterReliability
    from clustertwin.reliability.result import ReliabilityResult
    from clustertwin.report.views.base import Where


def rows(res: ReliabilityResult) -> list[tuple[str, str]]:
    cat = res.lost_gpu_hours_by_category
    top = sorted(res.by_cause.items(), key=lambda kv: -kv[1])[:3]
    rows = [
        ("failure profile", f"{res.failure_profile} ({res.failures_per_1000_node_days:.2f}"
                            " per 1000 node-days)"),
        ("job", f"{res.gpus:,} GPUs on {plural(res.nodes, 'node')}, {res.spare_nodes} spare "
                f"(advised {res.spare_nodes_advised})"),
        ("interruptions", f"{res.interruptions_mean:.0f} (p5 {res.interruptions_p5:.0f}, "
                          f"p95 {res.interruptions_p95:.0f}) + "
                          f"{res.planned_interruptions_mean:.0f} planned"),
        ("job MTBF", f"{res.mtbf_h:.2f} h"),
        ("top causes", ", ".join(f"{k} {v:.0f}" for k, v in top)),
        ("checkpoint", f"{res.checkpoint_size_gb / 1000:.2f} TB, write "
                       f"{res.checkpoint_write_s:.1f} s, stall {res.checkpoint_blocking_s:.1f} s,"
                       f" restore {res.checkpoint_restore_s:.1f} s"),
        ("checkpoint interval", f"{res.checkpoint_interval_min:.1f} min ({res.interval_source})"
                                + (" to the file system" if res.checkpoint_tiers > 1 else "")),
        ("optimum / Young / Daly", f"{res.optimal_interval_min:.1f} / "
                                   f"{res.young_interval_min:.1f} / "
                                   f"{res.daly_interval_min:.1f} min"),
    ]
    rows += _tier_rows(res)
    rows += [
        ("ETTR", f"{res.ettr_mean:.3f} (p5 {res.ettr_p5:.3f}); Daly model, no repair "
                 f"waits, {res.ettr_daly:.3f}"
                 + (" (file system only)" if res.checkpoint_tiers > 1 else "")),
        ("lost progress per interruption", f"{res.lost_progress_per_interruption_min:.1f} min"),
        ("wall-clock days", f"{res.effective_days:.1f} (p95 {res.effective_days_p95:.1f}) "
                            f"for {res.training_days:.1f} days of training"),
        ("lost GPU-hours", f"{res.lost_gpu_hours:,.0f}"),
    ]
    for k in CATEGORIES:
        rows.append((f"  {k.replace('_', ' ')}", f"{cat[k]:,.0f} GPU-h, "
                                                 f"${res.wasted_usd_by_category[k]:,.0f}"))
    rows.append(("wasted", f"${res.wasted_usd:,.0f} at ${res.usd_per_gpu_hour:.2f}/GPU-h"))
    rows += [("note", n) for n in res.notes]
    return rows


def _tier_rows(res: ReliabilityResult) -> list[tuple[str, str]]:
    if res.checkpoint_tiers < 2 or res.local_checkpoint_interval_min is None:
        return []
    k = res.pfs_every_local or 1
    rows = [
        ("local checkpoints", f"every {res.local_checkpoint_interval_min:.1f} min "
                              f"({res.local_interval_source}) to {res.local_checkpoint_medium}, "
                              f"{res.local_checkpoint_replicas} peer copies; file system every "
                              f"{k} of them"),
        ("  local stall / durable / restore", f"{res.local_checkpoint_blocking_s:.2f} s / "
                                              f"{res.local_checkpoint_write_s:.2f} s / "
                                              f"{res.local_checkpoint_restore_s:.2f} s; restart "
                                              f"{res.local_restart_min:.1f} min"),
        ("  restored from local tier", f"{res.local_restore_share:.0%} of interruptions "
                                       f"({res.local_loss_share:.0%} of failures lose it)"),
    ]
    if res.local_optimal_interval_min is not None and res.optimal_pfs_every_local:
        rows.append(("  two-tier optimum", f"local {res.local_optimal_interval_min:.1f} min, "
                                           f"file system every {res.optimal_pfs_every_local}; "
                                           f"first order {res.two_tier_young_interval_min:.1f} min"))
    if res.pfs_only_ettr_mean is not None:
        rows.append(("  file system only", f"ETTR {res.pfs_only_ettr_mean:.3f} at "
                                           f"{res.checkpoint_interval_min:.1f} min; two tiers "
                                           f"{res.ettr_gain_over_pfs_only:+.3f} on the same failures"))
    return rows


def figures(res: ReliabilityResult, where: Where | None = None) -> list[tuple[str, Any]]:  # noqa: ARG001
    """Interruptions per week of one sampled run, and ETTR against the checkpoint interval."""
    return [("interruptions", figs.interruptions_figure(res)), ("ETTR", figs.ettr_figure(res))]


def cluster_rows(res: ClusterReliability) -> list[tuple[str, str]]:
    return [("failures", f"{res.failures_per_day:.2f} per day over {res.nodes:,} nodes "
                         f"({res.failure_profile})"),
            ("MTBF", f"{res.cluster_mtbf_h:,.1f} h cluster, "
                     f"{res.node_mtbf_h / 24 / 365:,.1f} years per node"),
            ("in repair", f"{res.nodes_in_repair_mean:.2f} nodes on average, "
                          f"{res.spare_nodes} spare")]


def cluster_figures(res: ClusterReliability, where: Where | None = None) -> list[tuple[str, Any]]:  # noqa: ARG001
    import plotly.graph_objects as go

    causes = sorted(res.by_cause_per_day.items(), key=lambda kv: -kv[1])
    fig = go.Figure(go.Bar(x=[c for c, _ in causes], y=[v for _, v in causes]))
    fig.update_layout(title="Node failures per day by cause (whole cluster)",
                      yaxis_title="failures / day")
    return [("reliability-causes", fig)]
