"""The figures of plan.html that show what they claim: step time stacked into its parts, memory
stacked against the GPU's capacity, interruptions counted per week by cause, ETTR against the
checkpoint interval with its marks in the legend (labels that cannot collide).

Each function takes a stage result and returns a plotly figure (imported lazily) in the house
style; every trace name and axis title comes from :mod:`clustertwin.report.labels`.
"""

from __future__ import annotations

import math
from typing import Any

from clustertwin.report import style
from clustertwin.report.labels import SERIES, humanize, label

#: interruption causes named in the per-week chart; the rest are one grey "other causes" series
TOP_CAUSES = 5
HOURS_PER_WEEK = 168.0


def _series_label(key: str) -> str:
    return SERIES[key][0] if key in SERIES else humanize(key)


def step_time_figure(training: Any) -> Any:
    """One horizontal bar per step, split into its parts; the total is the bar's length (and in
    the title), never a bar beside its own parts."""
    import plotly.graph_objects as go

    tb = training.time_breakdown_s
    parts = [(k, v) for k, v in tb.items() if k != "step_s" and v > 0]
    fig = go.Figure()
    for i, (k, v) in enumerate(parts):
        fig.add_trace(go.Bar(y=["one step"], x=[v], orientation="h", name=_series_label(k),
                             marker={"color": style.color(i)},
                             hovertemplate=f"{_series_label(k)}: %{{x:.3f}} s<extra></extra>"))
    total = tb.get("step_s", sum(v for _, v in parts))
    fig.update_layout(barmode="stack", height=300,
                      title=f"Where a {total:.2f} s training step goes",
                      xaxis_title="seconds", yaxis={"showticklabels": False},
                      legend={"orientation": "h", "y": -0.45, "x": 0, "traceorder": "normal"})
    return style.apply(fig)


def memory_parts(training: Any, capacity_gib: float | None) -> list[tuple[str, float]]:
    """(label, GiB) stacking up to the GPU's capacity: the breakdown, any peak not in it
    (temporary buffers), then what is left free (nothing free when over capacity)."""
    parts = [(_series_label(k), float(v)) for k, v in training.memory_breakdown_gib.items() if v > 0]
    peak = float(training.memory_gib_per_gpu or 0.0)
    rest = peak - sum(v for _, v in parts)
    if rest > 0.01:
        parts.append(("Other buffers at peak", rest))
    if capacity_gib:
        parts.append(("Free", max(capacity_gib - max(peak, sum(v for _, v in parts)), 0.0)))
    return parts


def memory_figure(training: Any, capacity_gib: float | None, gpu_name: str = "GPU") -> Any:
    """Peak memory per GPU stacked by what holds it; the bar's full length is the GPU's HBM."""
    import plotly.graph_objects as go

    fig = go.Figure()
    parts = memory_parts(training, capacity_gib)
    for i, (name, v) in enumerate(parts):
        free = capacity_gib and i == len(parts) - 1
        name = f"Free on the {gpu_name}" if free else name
        fig.add_trace(go.Bar(y=["per GPU"], x=[v], orientation="h", name=name,
                             marker={"color": "#e8e8e8" if free else style.color(i),
                                     "line": {"color": "#999", "width": 1 if free else 0}},
                             hovertemplate=f"{name}: %{{x:.1f}} GiB<extra></extra>"))
    peak = float(training.memory_gib_per_gpu or sum(v for _, v in parts))
    title = f"Memory per GPU: {peak:.1f} GiB at peak"
    if capacity_gib:
        title += f" of {capacity_gib:.0f} GiB HBM ({peak / capacity_gib:.0%})"
        fig.update_xaxes(range=[0, max(capacity_gib, peak) * 1.02])
    fig.update_layout(barmode="stack", height=300, title=title, xaxis_title="GiB",
                      yaxis={"showticklabels": False},
                      legend={"orientation": "h", "y": -0.45, "x": 0, "traceorder": "normal"})
    return style.apply(fig)


def weekly_counts(timeline: Any, top: int = TOP_CAUSES) -> tuple[list[int], dict[str, list[int]]]:
    """Interruptions per week of one sampled run, per cause: ``(weeks, {cause: counts})``; the
    ``top`` most frequent causes by name, the rest summed under ``"other causes"``."""
    events = [(t, c) for t, c, *_ in timeline if c != "end"]
    end_h = max((t for t, *_ in timeline), default=0.0)
    n_weeks = max(1, math.ceil(end_h / HOURS_PER_WEEK))
    totals: dict[str, int] = {}
    for _, c in events:
        totals[c] = totals.get(c, 0) + 1
    named = [c for c, _ in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]
    counts = {c: [0] * n_weeks for c in named}
    if len(totals) > len(named):
        counts["other causes"] = [0] * n_weeks
    for t, c in events:
        week = min(int(t // HOURS_PER_WEEK), n_weeks - 1)
        counts[c if c in named else "other causes"][week] += 1
    return list(range(1, n_weeks + 1)), counts


def interruptions_figure(reliability: Any) -> Any:
    """Interruptions per week of one sampled run, stacked by cause (top causes named)."""
    import plotly.graph_objects as go

    weeks, counts = weekly_counts(reliability.timeline)
    fig = go.Figure()
    for i, (cause, ys) in enumerate(counts.items()):
        name = "Other causes" if cause == "other causes" else humanize(cause)
        fig.add_trace(go.Bar(x=weeks, y=ys, name=name,
                             marker={"color": style.OTHER if cause == "other causes" else style.color(i)},
                             hovertemplate=f"week %{{x}}: %{{y}} × {name}<extra></extra>"))
    total = sum(sum(ys) for ys in counts.values())
    fig.update_layout(barmode="stack", height=400,
                      title=f"Interruptions per week in one sampled run ({total} in "
                            f"{reliability.effective_days:.0f} wall-clock days)",
                      xaxis={"title": "week of the run", "dtick": 1}, yaxis_title="interruptions")
    return style.apply(fig)


def ettr_figure(reliability: Any) -> Any:
    """ETTR against the checkpoint interval; the used, Young and Daly intervals are vertical
    lines named in the legend with their values, so no two labels can print over each other."""
    import plotly.graph_objects as go

    r = reliability
    fig = go.Figure()
    x = [c[0] for c in r.curve]
    ys = [c[1] for c in r.curve] + [c[2] for c in r.curve]
    fig.add_trace(go.Scatter(x=x, y=[c[1] for c in r.curve], mode="lines+markers",
                             name="Simulated (mean over trials)", line={"color": style.color(0)}))
    fig.add_trace(go.Scatter(x=x, y=[c[2] for c in r.curve], mode="lines", name="Daly model",
                             line={"dash": "dash", "color": style.color(1)}))
    if r.tier_curve:
        tx = [c[0] for c in r.tier_curve]
        fig.add_trace(go.Scatter(x=tx, y=[c[1] for c in r.tier_curve], mode="lines+markers",
                                 name=f"Two tiers (file system every {r.tier_curve_every or 1})",
                                 line={"color": style.color(2)}))
        x, ys = x + tx, ys + [c[1] for c in r.tier_curve]
    lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    marks = [(f"Interval used: {r.checkpoint_interval_min:.1f} min", r.checkpoint_interval_min, "solid"),
             (f"Young: {r.young_interval_min:.1f} min", r.young_interval_min, "dot"),
             (f"Daly: {r.daly_interval_min:.1f} min", r.daly_interval_min, "dashdot")]
    if r.local_checkpoint_interval_min:
        marks.append((f"Local interval used: {r.local_checkpoint_interval_min:.1f} min",
                      r.local_checkpoint_interval_min, "longdash"))
    for i, (name, v, dash) in enumerate(marks):
        if v > 0 and x and min(x) <= v <= max(x):
            fig.add_trace(go.Scatter(x=[v, v], y=[lo, hi], mode="lines", name=name,
                                     line={"dash": dash, "width": 2,
                                           "color": (style.ACCENT, style.color(3), style.PALETTE[7], style.color(2))[i]}))
    fig.update_layout(title="Effective training time ratio against the checkpoint interval",
                      xaxis_title=f"{label('reliability.checkpoint_interval_min')} (min, log scale)",
                      yaxis_title="ETTR", xaxis_type="log", yaxis_tickformat=".1%", height=440)
    return style.apply(fig)
