"""The scheduling result: per-policy metrics side by side, per-job tables, figures."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clustertwin.scheduling.engine import STATUS_NAMES, RunOutput
from clustertwin.scheduling.jobs import Workload

MAX_PLOT_POINTS = 2000


@dataclass(frozen=True, eq=False)
class PolicyRun:
    policy: str
    metrics: dict[str, Any]
    output: RunOutput
    wall_s: float


@dataclass(frozen=True, eq=False)
class ScheduleResult:
    """Frozen result of replaying one workload on one cluster under several policies."""

    cluster: dict[str, Any]
    trace: dict[str, Any]
    workload: Workload
    runs: tuple[PolicyRun, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def to_contract(self) -> dict[str, Any]:
        return {"cluster": self.cluster, "trace": self.trace, "settings": self.settings,
                "policies": {r.policy: dict(r.metrics, wall_s=r.wall_s) for r in self.runs},
                "warnings": list(self.warnings)}

    # -------------------------------------------------------------- terminal
    ROWS: tuple[tuple[str, str, str], ...] = (
        ("GPU utilization (allocated)", "gpu_util_allocated", "pct"),
        ("GPU utilization (useful)", "gpu_util_useful", "pct"),
        ("GPU utilization (while arriving)", "gpu_util_arrivals", "pct"),
        ("JCT mean", "jct_s.mean", "dur"),
        ("JCT median", "jct_s.median", "dur"),
        ("JCT p95", "jct_s.p95", "dur"),
        ("queueing delay mean", "queue_delay_s.mean", "dur"),
        ("queueing delay p95", "queue_delay_s.p95", "dur"),
        ("bounded slowdown mean", "bounded_slowdown.mean", "num"),
        ("fragmentation", "fragmentation", "pct"),
        ("preemptions", "preemptions", "int"),
        ("node failures", "node_failures", "int"),
        ("GPU-hours lost to failures", "gpu_hours_lost_failures", "num"),
        ("completed / timeout / cancelled", "_ends", "str"),
        ("still queued / running at end", "_left", "str"),
        ("makespan", "makespan_s", "dur"),
    )

    def table(self) -> tuple[list[str], list[list[str]]]:
        """Header (policies) and rows (label, value per policy) for the side-by-side view."""
        header = ["metric"] + [r.policy for r in self.runs]
        rows = []
        for label, key, fmt in self.ROWS:
            rows.append([label] + [_fmt(_get(r.metrics, key), fmt) for r in self.runs])
        teams = self.workload.teams
        if len(teams) > 1:
            for t in teams:
                rows.append([f"team {t} share (fair)"] + [
                    f"{r.metrics['teams'][t]['share']:.1%} ({r.metrics['teams'][t]['fair_share']:.1%})"
                    for r in self.runs])
        rows.append(["simulation wall time"] + [f"{r.wall_s:.2f} s" for r in self.runs])
        return header, rows

    def summary_rows(self) -> list[tuple[str, str]]:
        header, rows = self.table()
        return [(row[0], " | ".join(row[1:])) for row in rows]

    # -------------------------------------------------------------- per job
    def job_columns(self) -> dict[str, list[Any]]:
        w = self.workload
        cols: dict[str, list[Any]] = {k: [] for k in (
            "policy", "job", "name", "team", "gpus", "submit_s", "first_start_s", "end_s",
            "status", "queue_delay_s", "jct_s", "run_s", "requested_s", "duration_s",
            "preemptions", "failure_interruptions", "lost_gpu_hours", "leaf_groups",
            "scalable_units")}
        n = len(w)
        team_names = [w.teams[i] for i in w.team.tolist()]
        for r in self.runs:
            o = r.output
            cols["policy"] += [r.policy] * n
            cols["job"] += list(range(n))
            cols["name"] += list(w.names)
            cols["team"] += team_names
            cols["gpus"] += (w.gpus_milli / 1000.0).tolist()
            cols["submit_s"] += w.submit_s.tolist()
            cols["first_start_s"] += _nan_none(o.first_start_s)
            cols["end_s"] += _nan_none(o.end_s)
            cols["status"] += [STATUS_NAMES[s] for s in o.status.tolist()]
            cols["queue_delay_s"] += _nan_none(o.first_start_s - w.submit_s)
            cols["jct_s"] += _nan_none(o.end_s - w.submit_s)
            cols["run_s"] += o.run_s.tolist()
            cols["requested_s"] += w.requested_s.tolist()
            cols["duration_s"] += w.duration_s.tolist()
            cols["preemptions"] += o.preemptions.tolist()
            cols["failure_interruptions"] += o.interruptions.tolist()
            cols["lost_gpu_hours"] += ((o.lost_gpu_s + o.lost_preempt_gpu_s) / 3600.0).tolist()
            cols["leaf_groups"] += o.leaf_groups.tolist()
            cols["scalable_units"] += o.scalable_units.tolist()
        return cols

    def write_jobs(self, folder: Any) -> tuple[str, str | None]:
        """Write ``jobs.parquet`` (or ``jobs.csv`` without pyarrow) through an
        :class:`~clustertwin.outputs.OutputDir`; return (name, warning)."""
        cols = self.job_columns()
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            import io

            from clustertwin.quoting import csv_writer

            buf = io.StringIO()
            wr = csv_writer(buf, lineterminator="\r\n")
            wr.writerow(list(cols))
            wr.writerows(zip(*cols.values(), strict=True))
            folder.write("jobs.csv", buf.getvalue())
            return "jobs.csv", "pyarrow is not installed: per-job results written as CSV"
        with folder.staged("jobs.parquet") as tmp:
            pq.write_table(pa.table(cols), str(tmp))
        return "jobs.parquet", None

    # -------------------------------------------------------------- figures
    def figures(self) -> list[tuple[str, Any]]:
        import plotly.graph_objects as go

        util = go.Figure()
        queue = go.Figure()
        cdf = go.Figure()
        cap = float(self.cluster.get("gpus", 1)) or 1.0
        for r in self.runs:
            tl = r.output.timeline
            t, a, q = _resample(tl["t"], [tl["alloc_gpus"], tl["queue"]], r.output.end_time_s)
            util.add_trace(go.Scatter(x=t / 3600.0, y=a / cap, name=r.policy, mode="lines",
                                      line={"shape": "hv"}))
            queue.add_trace(go.Scatter(x=t / 3600.0, y=q, name=r.policy, mode="lines",
                                       line={"shape": "hv"}))
            wait = r.output.first_start_s - self.workload.submit_s
            wait = np.sort(wait[~np.isnan(wait)])
            if wait.size:
                step = max(1, wait.size // MAX_PLOT_POINTS)
                x = wait[::step]
                y = (np.arange(wait.size)[::step] + 1) / wait.size
                cdf.add_trace(go.Scatter(x=np.maximum(x, 1.0), y=y, name=r.policy, mode="lines"))
        util.update_layout(title="GPU utilization (allocated) over time",
                           xaxis_title="hours", yaxis_title="share of GPUs", yaxis_range=[0, 1.05])
        queue.update_layout(title="Jobs waiting over time", xaxis_title="hours",
                            yaxis_title="queued jobs")
        cdf.update_layout(title="Waiting time CDF (waits under 1 s shown at 1 s)",
                          xaxis_title="queueing delay, s", yaxis_title="share of jobs",
                          xaxis_type="log")
        return [("utilization", util), ("queue", queue), ("wait_cdf", cdf)]

    def html(self) -> str:
        """A self-contained page: the table and the figures, plotly JS embedded once."""
        from clustertwin.quoting import html_text

        header, rows = self.table()
        parts = ["<!doctype html><html><head><meta charset='utf-8'>",
                 "<title>clustertwin schedule</title><style>body{font-family:sans-serif;"
                 "margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
                 "padding:4px 8px;text-align:right}td:first-child{text-align:left}</style>"
                 "</head><body><h1>Scheduling replay</h1>",
                 f"<p>cluster: {html_text(str(self.cluster.get('name')))} "
                 f"({self.cluster.get('gpus')} GPUs, {self.cluster.get('nodes')} nodes); "
                 f"trace: {html_text(str(self.trace.get('source')))} "
                 f"({self.trace.get('jobs')} jobs)</p><table><tr>"]
        parts += [f"<th>{html_text(h)}</th>" for h in header]
        parts.append("</tr>")
        for row in rows:
            parts.append("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>")
        parts.append("</table>")
        for i, (_, fig) in enumerate(self.figures()):
            parts.append(fig.to_html(full_html=False, include_plotlyjs=(i == 0)))
        parts.append("</body></html>")
        return "".join(parts)


def _get(m: dict[str, Any], key: str) -> Any:
    if key == "_ends":
        return f"{m['completed']} / {m['timeout']} / {m['cancelled']}"
    if key == "_left":
        return f"{m['queued_at_end']} / {m['running_at_end']}"
    cur: Any = m
    for part in key.split("."):
        cur = cur[part]
    return cur


def _fmt(v: Any, fmt: str) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "-"
    if fmt == "pct":
        return f"{v:.1%}"
    if fmt == "dur":
        return _dur(float(v))
    if fmt == "int":
        return f"{int(v):,}"
    if fmt == "num":
        return f"{v:,.2f}"
    return str(v)


def _dur(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    if s < 172800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} d"


def _nan_none(a: np.ndarray) -> list[float | None]:
    return [None if x != x else x for x in a.tolist()]


def _resample(t: np.ndarray, series: list[np.ndarray], end: float) -> tuple[np.ndarray, ...]:
    """At most MAX_PLOT_POINTS samples of step functions (value in force at each grid time)."""
    if t.size <= MAX_PLOT_POINTS:
        return (t, *series)
    grid = np.linspace(t[0], max(end, t[-1]), MAX_PLOT_POINTS)
    idx = np.searchsorted(t, grid, side="right") - 1
    return (grid, *(s[np.clip(idx, 0, None)] for s in series))
