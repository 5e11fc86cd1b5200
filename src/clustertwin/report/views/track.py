"""The tracked run's view (``clustertwin track``): its terminal rows, the observed-vs-planned
tiles, the forecast, the burn-up chart with the forecast fan (P10-P90), the interruption
timeline by cause and the step time per day against the plan's band.

track.html (``clustertwin.cli.track.track_page``), the terminal (``cli/track.py``) and the web app's
track page (:mod:`clustertwin.serve.track_page`) all draw a
:class:`~clustertwin.track.core.TrackResult` through these functions. What a log or sacct file
says reaches a figure's text through :func:`clustertwin.quoting.html_text` (plotly reads tags
in trace text); rows and tiles are plain strings the page templates escape.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from clustertwin.quoting import html_text
from clustertwin.report.labels import label_unit

if TYPE_CHECKING:
    from clustertwin.report.views.base import Where
    from clustertwin.track.core import TrackResult

#: the tiles, in order: progress, the forecast's P10/P50/P90, then observed against planned
TILE_KEYS = ("progress.fraction", "progress.tokens_done", "forecast.trained_by_p10", "forecast.trained_by_p50",
             "forecast.trained_by_p90", "observed.step_s", "observed.tokens_per_s", "observed.mfu",
             "observed.interruptions", "observed.lost_days", "observed.ettr", "forecast.checkpoint_interval_min")
ROWS_MAX = 200  #: interruptions listed in a table (the figure shows them all)


def _iso(t: float) -> str:
    from clustertwin.track.records import iso

    return iso(t)


def _dates(ts: Any) -> list[dt.datetime]:
    return [dt.datetime.fromtimestamp(float(t), tz=dt.UTC) for t in ts]


def rows(res: TrackResult) -> list[tuple[str, str]]:
    """The terminal's and the page's summary: progress, rates, interruptions, the forecast."""
    o, f, p = res.observed, res.forecast, res.plan
    n = len(o.interruptions)
    return [
        ("as of", _iso(o.as_of)),
        ("tokens trained", f"{o.tokens_done:.4g} of {p.tokens:.4g} ({o.fraction:.1%})"),
        ("step time", f"{o.step_s:.3f} s (recent {o.step_s_recent:.3f}); plan {p.step_time_s:.3f} s, "
                      f"band {p.step_time_low_s:.3f}-{p.step_time_high_s:.3f}"),
        ("throughput", f"{o.tokens_per_s:,.0f} tokens/s; plan {p.tokens_per_s:,.0f}"),
        ("MFU", f"{o.mfu:.1%}; plan {p.mfu:.1%}"),
        ("interruptions", f"{n} ({', '.join(f'{k} {v}' for k, v in sorted(o.by_cause.items())) or 'none'}); "
                          f"plan by now {o.expected_interruptions:.1f} (90%: {o.expected_p5:.0f}-{o.expected_p95:.0f})"),
        ("time lost", f"{o.lost_h / 24:.2f} days ({o.lost_h / max(n, 1):.2f} h each; plan "
                      f"{p.cost_per_interruption_h:.2f} h)"),
        ("ETTR", f"{o.ettr:.1%}; plan {p.ettr:.1%}"),
        ("trained by", f"P10 {_iso(f.trained_by[0])}, P50 {_iso(f.trained_by[1])}, P90 {_iso(f.trained_by[2])} "
                       f"({f.remaining_days[1]:.1f} / {f.remaining_days[2]:.1f} days to go at P50 / P90)"),
        ("interruption rate", f"{f.rate_post_per_h * 24:.2f}/day learnt (plan {f.rate_prior_per_h * 24:.2f}/day)"),
        ("checkpoint interval", f"{f.interval_min:.1f} min now (plan {f.interval_plan_min:.1f} min)"),
        ("drift", "; ".join(f"{x.metric}: {x.action}" for x in res.flags) or "none"),
        ("lines", f"{sum(s.read for s in res.lines):,} read, {sum(s.skipped for s in res.lines):,} skipped"),
    ]


def burnup_figure(res: TrackResult) -> Any:
    """Tokens against the date: the log's, the plan's line (failures included) and the
    forecast fan from now (P10-P90 shaded, the median dotted)."""
    import numpy as np
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
    """Each interruption at its time, by cause, at the hours it cost (its evidence on hover)."""
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
    """The median step time of each day against the plan's step time and its band."""
    import plotly.graph_objects as go

    from clustertwin.track.stream import DAY_S, hist_quantile

    days = [(d, hist_quantile(h, 0.5)) for d, h in res.history.days.items()]
    days = [(d, m) for d, m in days if m]
    p = res.plan
    x = _dates([d * DAY_S for d, _ in days])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=[m for _, m in days], mode="lines+markers", name="Observed, median per day"))
    for y, name in ((p.step_time_s, "Plan"), (p.step_time_low_s, "Plan band, low"),
                    (p.step_time_high_s, "Plan band, high")):
        fig.add_trace(go.Scatter(x=x, y=[y] * len(x), mode="lines", line={"dash": "dash"}, name=name))
    fig.update_layout(title="Step time per day against the plan's band", xaxis_title="Date",
                      yaxis_title="Step time (s)")
    return fig


def figures(res: TrackResult, where: Where | None = None) -> list[tuple[str, Any]]:  # noqa: ARG001
    """The burn-up with its fan, the interruption timeline, the step time per day."""
    return [("burn-up", burnup_figure(res)), ("interruptions", timeline_figure(res)),
            ("step time", step_figure(res))]


def fmt(key: str, v: Any) -> str:
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


def _versus(doc: dict[str, Any], res: TrackResult) -> dict[str, str]:
    """The plan's figure beside each observed tile."""
    pl = doc["planned"]
    return {"observed.step_s": fmt("x", pl["step_s"]), "observed.tokens_per_s": fmt("x", pl["tokens_per_s"]),
            "observed.mfu": f"{pl['mfu']:.1%}", "observed.ettr": f"{pl['ettr']:.1%}",
            "observed.interruptions": f"{pl['interruptions_by_now']:.0f} ({pl['interruptions_by_now_p5']:.0f}-"
                                      f"{pl['interruptions_by_now_p95']:.0f})",
            "forecast.checkpoint_interval_min": fmt("x", doc["forecast"]["plan_checkpoint_interval_min"]),
            "observed.lost_days": fmt("x", pl["lost_h_per_interruption"] * pl["interruptions_by_now"] / 24.0),
            "forecast.trained_by_p50": fmt("forecast.trained_by",
                                           _iso(res.observed.start + pl["effective_days"] * 86400.0))}


def tiles(res: TrackResult, doc: dict[str, Any] | None = None) -> list[dict[str, str]]:
    """``[{key, value, label}]``: each tile's track-JSON key, its value and its words (the
    plan's figure beside the observed one)."""
    from clustertwin.track.report import to_doc

    doc = to_doc(res) if doc is None else doc
    versus = _versus(doc, res)
    out = []
    for k in TILE_KEYS:
        block, name = k.split(".")
        text = label_unit(k) + (f"; plan {versus[k]}" if k in versus else "")
        out.append({"key": k, "value": fmt(k, doc[block][name]), "label": text})
    return out


def drift_rows(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(d["metric"], f"{d['evidence']}. Action: {d['action']}") for d in doc["drift"]] or [
        ("drift", "none: the run is inside the plan's bands")]


def sections(res: TrackResult, doc: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The page's sections ``{"title", "rows", "figures"}`` (report.html's and the web app's)."""
    from clustertwin.track.report import to_doc

    doc = to_doc(res) if doc is None else doc
    burnup, timeline, step = figures(res)
    return [
        {"title": "Progress and forecast", "rows": rows(res), "figures": [burnup]},
        {"title": "Drift", "rows": drift_rows(doc)},
        {"title": "Interruptions", "rows": [(x["time"], f"{x['cause']}: {x['lost_h']:.2f} h; {x['evidence']}")
                                            for x in doc["interruptions"][:ROWS_MAX]], "figures": [timeline]},
        {"title": "Step time", "rows": [], "figures": [step]},
        {"title": "Lines read", "rows": [(x["file"], f"{x['format']}: {x['read']:,} read, {x['skipped']:,} skipped")
                                         for x in doc["lines"]["files"]] + [("bad line", b) for b in doc["lines"]["bad"]]},
    ]

