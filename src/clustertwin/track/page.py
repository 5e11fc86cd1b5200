"""track.html: observed-vs-planned tiles, the burn-up chart (actual, plan, forecast fan
P10-P90), the interruption timeline by cause and the step time per day against the plan's band.
Offline (plotly.js embedded by :func:`clustertwin.report.html.render_page`); names from
:mod:`clustertwin.report.labels`."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np

from clustertwin.quoting import html_text
from clustertwin.report.labels import label_unit
from clustertwin.track.core import TrackResult
from clustertwin.track.records import iso
from clustertwin.track.report import summary_rows, to_doc


def _dates(ts: Any) -> list[dt.datetime]:
    return [dt.datetime.fromtimestamp(float(t), tz=dt.UTC) for t in ts]


def burnup_figure(res: TrackResult) -> Any:
    import plotly.graph_objects as go

    p, o, f = res.plan, res.observed, res.forecast
    pts = res.history.points
    fig = go.Figure()
    fan = np.array(f.fan)
    x0 = [o.as_of]
    fig.add_trace(go.Scatter(x=_dates(x0 + list(fan[:, 3])), y=[o.tokens_done, *fan[:, 0]], mode="lines",
                             line={"width": 0}, showlegend=False, hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=_dates(x0 + list(fan[:, 1])), y=[o.tokens_done, *fan[:, 0]], mode="lines",
                             line={"width": 0}, fill="tonextx", fillcolor="rgba(31,119,180,0.2)",
                             name="Forecast, 10-90%"))
    fig.add_trace(go.Scatter(x=_dates(x0 + list(fan[:, 2])), y=[o.tokens_done, *fan[:, 0]], mode="lines",
                             line={"dash": "dot"}, name="Forecast, median"))
    rate = p.tokens / (p.effective_days * 86400.0)
    tp = np.linspace(o.start, o.start + p.tokens / rate, 50)
    fig.add_trace(go.Scatter(x=_dates(tp), y=o.tokens_start + (tp - o.start) * rate, mode="lines",
                             line={"dash": "dash"}, name="Plan (wall clock, failures included)"))
    fig.add_trace(go.Scatter(x=_dates(pts[:, 0]), y=pts[:, 2], mode="lines", name="Trained (log)"))
    fig.update_layout(title="Tokens trained: actual, plan and forecast", xaxis_title="Date",
                      yaxis_title="Tokens")
    return fig


def timeline_figure(res: TrackResult) -> Any:
    import plotly.graph_objects as go

    fig = go.Figure()
    by: dict[str, list[Any]] = {}
    for x in res.observed.interruptions:
        by.setdefault(x.cause, []).append(x)
    for cause, xs in sorted(by.items()):
        # plotly reads tags in trace text: what a log or sacct file says is escaped to show as written
        fig.add_trace(go.Scatter(x=_dates([x.t for x in xs]), y=[x.lost_h for x in xs], mode="markers",
                                 name=html_text(cause[:1].upper() + cause[1:]),
                                 text=[html_text(x.evidence[:120]) for x in xs]))
    fig.update_layout(title="Interruptions by cause and the time each cost", xaxis_title="Date",
                      yaxis_title="Time lost (h)")
    return fig


def step_figure(res: TrackResult) -> Any:
    import plotly.graph_objects as go

    from clustertwin.track.stream import DAY_S, hist_quantile

    days = [(d, hist_quantile(h, 0.5)) for d, h in res.history.days.items()]
    days = [(d, m) for d, m in days if m]
    p = res.plan
    x = _dates([d * DAY_S for d, _ in days])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=[m for _, m in days], mode="lines+markers", name="Observed, median per day"))
    for y, name in ((p.step_time_s, "Plan"), (p.step_time_low_s, "Plan band, low"), (p.step_time_high_s, "Plan band, high")):
        fig.add_trace(go.Scatter(x=x, y=[y] * len(x), mode="lines", line={"dash": "dash"}, name=name))
    fig.update_layout(title="Step time per day against the plan's band", xaxis_title="Date",
                      yaxis_title="Step time (s)")
    return fig


def _fmt(key: str, v: Any) -> str:
    """A tile's value as a person reads it (the unit is in the label)."""
    if isinstance(v, str):
        return v[:16].replace("T", " ") if key.startswith("forecast.trained_by") else v
    if key.endswith(("fraction", "mfu", "ettr")):
        return f"{v:.1%}"
    if key == "progress.tokens_done":
        return f"{v / 1e9:,.1f} billion" if v >= 1e9 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"


def render(res: TrackResult) -> str:
    from clustertwin.report.html import render_page

    doc = to_doc(res)
    keys = ("progress.fraction", "progress.tokens_done", "forecast.trained_by_p50", "forecast.trained_by_p90",
            "observed.step_s", "observed.tokens_per_s", "observed.mfu", "observed.interruptions",
            "observed.lost_days", "observed.ettr", "forecast.checkpoint_interval_min")
    pl = doc["planned"]
    versus = {"observed.step_s": _fmt("x", pl["step_s"]), "observed.tokens_per_s": _fmt("x", pl["tokens_per_s"]),
              "observed.mfu": f"{pl['mfu']:.1%}", "observed.ettr": f"{pl['ettr']:.1%}",
              "observed.interruptions": f"{pl['interruptions_by_now']:.0f} ({pl['interruptions_by_now_p5']:.0f}-"
                                        f"{pl['interruptions_by_now_p95']:.0f})",
              "forecast.checkpoint_interval_min": _fmt("x", doc["forecast"]["plan_checkpoint_interval_min"]),
              "observed.lost_days": _fmt("x", pl["lost_h_per_interruption"] * pl["interruptions_by_now"] / 24.0),
              "forecast.trained_by_p50": _fmt("forecast.trained_by", iso(res.observed.start + pl["effective_days"] * 86400.0))}
    tiles = []
    for k in keys:
        block, name = k.split(".")
        text = label_unit(k) + (f"; plan {versus[k]}" if k in versus else "")
        tiles.append({"key": k, "value": _fmt(k, doc[block][name]), "label": text})
    headline = {"title": f"Observed vs planned, as of {doc['as_of']}", "tiles": tiles, "options": None}
    sections = [
        {"title": "Progress and forecast", "rows": summary_rows(res),
         "figures": [("burn-up", burnup_figure(res))]},
        {"title": "Interruptions", "rows": [(x["time"], f"{x['cause']}: {x['lost_h']:.2f} h; {x['evidence']}")
                                            for x in doc["interruptions"][:200]],
         "figures": [("interruptions", timeline_figure(res))]},
        {"title": "Step time", "rows": [], "figures": [("step time", step_figure(res))]},
        {"title": "Drift", "rows": [(d["metric"], f"{d['evidence']}. Action: {d['action']}") for d in doc["drift"]]
         or [("drift", "none: the run is inside the plan's bands")]},
        {"title": "Lines read", "rows": [(x["file"], f"{x['format']}: {x['read']:,} read, {x['skipped']:,} skipped")
                                         for x in doc["lines"]["files"]] + [("bad line", b) for b in doc["lines"]["bad"]]},
    ]
    return render_page(f"Tracking: {res.scenario_name or 'training run'}", sections,
                       subtitle="clustertwin track: the real run against its plan",
                       warnings=[f"{d['metric']}: {d['evidence']}" for d in doc["drift"]], headline=headline)
