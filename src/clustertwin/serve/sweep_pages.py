"""Handlers of the sweep page: the form, starting a sweep, its polled progress and results."""

from __future__ import annotations

from typing import Any

from clustertwin.errors import Problem, UserError
from clustertwin.serve.sweeps import COLUMNS, MAX_AXES, MAX_POINTS, Job, parse_axes
from clustertwin.serve.workers import plain_message


def table_rows(job: Job) -> tuple[list[str], list[dict[str, Any]]]:
    """(header, rows) of a finished sweep; each cell ``{text, value}`` for sorting."""
    from clustertwin.serve.answer import HEADLINE, fmt

    kinds = {k: kind for k, _, kind in HEADLINE}
    from clustertwin.serve.answer import label_for

    header = ["scenario", *job.keys, *(label_for(c, c) for c in COLUMNS), "error"]
    rows = []
    for label, assign, row in zip(job.labels, job.assignments, job.rows or [], strict=False):
        cells = [{"text": label, "value": label}]
        cells += [{"text": str(assign.get(k, "")), "value": assign.get(k, "")} for k in job.keys]
        cells += [{"text": fmt(row.get(c), kinds.get(c, "")) if row.get(c) is not None else "",
                   "value": row.get(c) if row.get(c) is not None else ""} for c in COLUMNS]
        error = plain_message(str(row.get("error") or ""))
        cells.append({"text": error, "value": error})
        rows.append({"cells": cells, "failed": bool(row.get("error"))})
    return header, rows


def pareto_html(job: Job) -> tuple[str, list[int]]:
    """A plotly scatter of run cost against wall-clock days, each point labelled, the Pareto
    front (cheaper than every faster point) drawn as a line; the front's row indexes."""
    import plotly.graph_objects as go

    from clustertwin.sweep.choose import number_or_none, pareto_front

    rows = job.rows or []
    days = [number_or_none(r.get("reliability.effective_days", r.get("training.days"))) for r in rows]
    cost = [number_or_none(r.get("economics.run_cost_owned_usd")) for r in rows]
    ok = [i for i in range(len(rows)) if days[i] is not None and cost[i] is not None]
    front = pareto_front(cost, days, ok)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[days[i] for i in ok], y=[cost[i] for i in ok], mode="markers+text",
                             text=[job.labels[i] for i in ok], textposition="top center",
                             name="scenarios", marker={"size": 9}))
    fig.add_trace(go.Scatter(x=[days[i] for i in front], y=[cost[i] for i in front],
                             mode="lines", name="Pareto front", line={"dash": "dot"}))
    fig.update_layout(xaxis_title="wall-clock days (reliability.effective_days)",
                      yaxis_title="run cost, owned (USD)", height=420, margin={"t": 30})
    div = fig.to_html(full_html=False, include_plotlyjs=False,
                      config={"displaylogo": False, "responsive": True})
    return div, front


async def sweep_page(request: Any) -> Any:
    """GET /sweep: the form (base scenario, up to three axes, executor)."""
    from clustertwin.serve.form import fields
    from clustertwin.serve.render import html
    from clustertwin.sweep.grid import schema_keys

    st = request.app.state
    return html("sweep.html.j2", title="clustertwin sweep", saved=st.library.items.values(),
                axes=range(1, MAX_AXES + 1), field_keys=[f.key for f in fields()],
                all_keys=sorted(schema_keys()), max_points=MAX_POINTS)


def _build(st: Any, form: dict[str, str]) -> Any:
    from clustertwin.serve.engine import doc_from_yaml
    from clustertwin.sweep.study import build

    saved = st.library.get(form.get("base", ""))
    if saved is None:
        raise UserError([Problem("sweep", "base", "pick one of the saved scenarios")])
    grid = parse_axes(form)
    count = 1
    for values in grid.values():  # the grid's size before building it: 3 axes of 10^5 values
        count *= len(values)      # would be 10^15 scenarios
    sw = build(doc_from_yaml(saved.text, saved.name), grid) if count <= MAX_POINTS else None
    if sw is None or len(sw.points) > MAX_POINTS:
        n = count if sw is None else len(sw.points)
        raise UserError([Problem("sweep", "", f"{n:,} scenarios; at most {MAX_POINTS} from the page "
                                 "(use clustertwin sweep for more)")])
    return sw


async def sweep_start(request: Any) -> Any:
    """POST /sweep/start: validate the axes, start the sweep, answer its progress fragment."""
    from clustertwin.serve.guard import MAX_BODY_BYTES, parse_form, read_body
    from clustertwin.serve.render import html

    st = request.app.state
    form = parse_form(await read_body(request, MAX_BODY_BYTES))
    executor = form.get("executor", "local")
    if executor not in ("local", "ray"):
        executor = "local"
    try:
        sw = await st.runner.run(_build, st, form)
    except Exception as exc:  # noqa: BLE001 - HttpError(422) from the runner: shown in the page
        problems = getattr(exc, "problems", None)
        if problems is None:
            raise
        return html("sweep_status.html.j2", job=None, errors=[f"{p.path}: {p.message}" if p.path
                                                              else p.message for p in problems])
    return _status(st.sweeps.start(sw, executor))


def _status(job: Job) -> Any:
    from clustertwin.serve.render import html

    ctx: dict[str, Any] = {"job": job, "errors": [job.error] if job.error else []}
    if job.rows is not None:
        header, rows = table_rows(job)
        div, front = pareto_html(job)
        for i in front:
            rows[i]["front"] = True
        ctx.update(header=header, rows=rows, pareto=div)
    return html("sweep_status.html.j2", **ctx)


async def sweep_status(request: Any) -> Any:
    """GET /sweep/ID: the progress fragment (polling while running), then the results."""
    from clustertwin.serve.guard import HttpError

    job = request.app.state.sweeps.jobs.get(request.path_params["job"])
    if job is None:
        raise HttpError(404, "no such sweep (finished sweeps are kept while the server runs)")
    return _status(job)


def routes() -> list[Any]:
    from starlette.routing import Route

    return [Route("/sweep", sweep_page, methods=["GET"]),
            Route("/sweep/start", sweep_start, methods=["POST"]),
            Route("/sweep/{job}", sweep_status, methods=["GET"])]
