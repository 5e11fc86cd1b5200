"""sweep.html: the Pareto front of cost against wall-clock days, the ranking, and each metric
against each swept key. Offline (plotly.js embedded once by the report layer)."""

from __future__ import annotations

import math
from typing import Any

from clustertwin.quoting import html_text
from clustertwin.report.labels import label, label_unit
from clustertwin.report.style import ACCENT, OTHER, PALETTE
from clustertwin.sweep.choose import DAYS, Choice
from clustertwin.sweep.report import METRICS, columns, fmt, html_table, ranking_rows

MAX_KEY_FIGURES = 8


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool) or not isinstance(v, int | float) or math.isnan(v):
        return None
    return float(v)


def pareto_figure(cols: dict[str, list[Any]], choice: Choice) -> Any:
    """Every planned scenario in (wall-clock days, cost); the front joined, the best starred."""
    import plotly.graph_objects as go

    cost, names = cols.get(choice.cost_column, []), cols["point"]
    days = cols.get(DAYS, [])
    fig = go.Figure()
    feasible = set(choice.feasible)
    groups = (("meets requirements", [i for i in range(len(names)) if i in feasible], PALETTE[0]),
              ("fails a requirement", [i for i in range(len(names)) if i not in feasible
                                       and cols["error"][i] is None], OTHER))
    for name, idx, color in groups:
        idx = [i for i in idx if _num(cost[i]) is not None and _num(days[i]) is not None]
        if idx:
            fig.add_trace(go.Scatter(x=[days[i] for i in idx], y=[cost[i] for i in idx], mode="markers",
                                     name=name, text=[names[i] for i in idx], marker={"color": color, "size": 9},
                                     hovertemplate="%{text}<br>%{x:.1f} days<br>$%{y:,.0f}<extra></extra>"))
    if choice.pareto:
        fr = list(choice.pareto)
        fig.add_trace(go.Scatter(x=[days[i] for i in fr], y=[cost[i] for i in fr], mode="lines+markers",
                                 name="Pareto front", text=[names[i] for i in fr],
                                 line={"color": ACCENT}, marker={"size": 11},
                                 hovertemplate="%{text}<br>%{x:.1f} days<br>$%{y:,.0f}<extra></extra>"))
    if choice.best is not None:
        b = choice.best
        fig.add_trace(go.Scatter(x=[days[b]], y=[cost[b]], mode="markers", name=f"best: {names[b]}",
                                 marker={"symbol": "star", "size": 20, "color": PALETTE[2]}))
    fig.update_layout(xaxis_title=label_unit(DAYS), yaxis_title=label_unit(choice.cost_column),
                      height=480, title_text="Pareto front: cost of the run against wall-clock days")
    return fig


def key_figure(cols: dict[str, list[Any]], key: str, choice: Choice) -> Any | None:
    """Each metric (one panel each) against the values of one swept key."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    metrics = [m for m in METRICS if m[0] in cols and any(_num(v) is not None for v in cols[m[0]])]
    if not metrics:
        return None
    ncols = 2
    nrows = math.ceil(len(metrics) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=[label_unit(m[0]) for m in metrics],
                        vertical_spacing=0.5 / max(nrows, 1) if nrows > 1 else 0.1)
    ok = [i for i in range(len(cols["point"])) if cols["error"][i] is None]
    xs = [cols[key][i] if isinstance(cols[key][i], int | float) else str(cols[key][i]) for i in ok]
    feasible = set(choice.feasible)
    for k, (col, title, _) in enumerate(metrics):
        r, c = divmod(k, ncols)
        fig.add_trace(go.Scatter(x=xs, y=[cols[col][i] for i in ok], mode="markers", name=title,
                                 text=[cols["point"][i] for i in ok], showlegend=False,
                                 marker={"color": [PALETTE[0] if i in feasible else OTHER for i in ok]},
                                 hovertemplate="%{text}<br>%{y:,.4g}<extra></extra>"),
                      row=r + 1, col=c + 1)
    fig.update_layout(height=260 * nrows, title_text=f"Metrics against {label_unit(key)}")
    return fig


def readable_points(cols: dict[str, list[Any]], swept: list[str]) -> list[str]:
    """Each scenario named by its swept values in words ("GPUs installed 128, Cloud price per
    GPU-hour 2"), not by code names; the table's own ``point`` where a swept column is absent."""
    if not swept or any(k not in cols for k in swept):
        return [str(p) for p in cols["point"]]
    return [", ".join(f"{label(k)} {fmt(cols[k][i])}" for k in swept) for i in range(len(cols["point"]))]


def html_legend() -> str:
    """What the ranking's short headers mean, in words (the terminal keeps :data:`LEGEND`)."""
    return "; ".join(f"{head} = {label(col)}" for col, head, _ in METRICS)


def render_sweep(sw: Any, table: Any, choice: Choice) -> str:
    """The whole page (str)."""
    from clustertwin.report.html import render_page
    from clustertwin.sweep.table import swept_of

    cols = columns(table)
    swept = swept_of(table)
    cols["point"] = readable_points(cols, swept)
    header, rows = ranking_rows(table, choice, swept, limit=50, with_keys=False, cols=cols)
    best = cols["point"][choice.best] if choice.best is not None else "none meets the requirements"
    if choice.best is None and choice.best_by_job:  # one best per model: never ranked across models
        best = "; ".join(f"{j}: {cols['point'][i]}" for j, i in zip(choice.jobs, choice.best_by_job, strict=True))
    summary = [("scenarios", f"{table.num_rows:,}"),
               ("failed to plan", f"{sum(e is not None for e in cols['error']):,}"),
               ("objective", f"{label(choice.column)}, lower is better"),
               ("requirements", " and ".join(f"{label(r.column)} {r.op} {r.value:g}"
                                             for r in choice.requirements) or "none"),
               ("meet the requirements", f"{len(choice.feasible):,}"),
               ("best", str(best)),
               ("Pareto set", ", ".join(str(cols["point"][i]) for i in choice.pareto) or "empty")]
    sections = [{"title": "Choice", "rows": summary, "figures": [("Pareto front", pareto_figure(cols, choice))]},
                {"title": "Ranking (best first; scenarios meeting the requirements)",
                 "html": html_table(header, rows) + f"<p class='sub'>{html_text(html_legend())}</p>"}]
    figs = [(k, f) for k in swept[:MAX_KEY_FIGURES] if (f := key_figure(cols, k, choice)) is not None]
    if figs:
        sections.append({"title": "Metrics against each swept key", "figures": figs})
    failed = [[str(cols["point"][i]), str(e)] for i, e in enumerate(cols["error"]) if e]
    if failed:
        sections.append({"title": "Scenarios that did not plan",
                         "html": html_table(["scenario", "error"], failed[:200], highlight=None)})
    sub = sw.description or f"{table.num_rows} scenarios from {sw.source}"
    return render_page(f"clustertwin sweep: {sw.title}", sections, sub)


__all__ = ["render_sweep", "fmt"]
