"""Handlers of the sweep page: the form, starting a sweep, its polled progress and results."""

from __future__ import annotations

from typing import Any

from clustertwin.errors import Problem, UserError
from clustertwin.serve.sweeps import COLUMNS, MAX_AXES, MAX_POINTS, Job, parse_axes
from clustertwin.serve.workers import plain_message


def table_rows(job: Job) -> tuple[list[str], list[dict[str, Any]]]:
    """(header, rows) of a finished sweep: the decision's route, trained-by and cost first,
    values with the naming table's units; each cell ``{text, value}`` (value for sorting)."""
    from clustertwin.report.labels import label_unit
    from clustertwin.serve.values import shown

    cols = [c for c in COLUMNS if any(c in r for r in job.rows or [])]
    header = ["scenario", *(f"{label_unit('scenario.' + k)} [{k}]" for k in job.keys),
              *(label_unit(c) for c in cols), "error"]
    rows = []
    for label, assign, row in zip(job.labels, job.assignments, job.rows or [], strict=False):
        cells = [{"text": label, "value": label}]
        cells += [{"text": shown("scenario." + k, assign.get(k)), "value": assign.get(k, "")} for k in job.keys]
        cells += [{"text": shown(c, row.get(c)), "value": row.get(c) if row.get(c) is not None else ""}
                  for c in cols]
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
    from clustertwin.report.labels import label_unit
    from clustertwin.serve.form import fields
    from clustertwin.serve.render import html
    from clustertwin.sweep.choose import OBJECTIVES
    from clustertwin.sweep.grid import schema_keys

    st = request.app.state
    return html("sweep.html.j2", title="clustertwin sweep", saved=st.library.items.values(),
                axes=range(1, MAX_AXES + 1), field_keys=[f.key for f in fields()],
                all_keys=sorted(schema_keys()), max_points=MAX_POINTS,
                objectives=[(k, label_unit(col)) for k, col in OBJECTIVES.items()])


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
    from clustertwin.sweep.choose import OBJECTIVES

    executor = form.get("executor", "local")
    if executor not in ("local", "ray"):
        executor = "local"
    objective = form.get("objective", "")
    objective = objective if objective in OBJECTIVES else "run_cost_owned_usd"
    try:
        sw = await st.runner.run(_build, st, form)
    except Exception as exc:  # noqa: BLE001 - HttpError(422) from the runner: shown in the page
        from clustertwin.serve.guard import HttpError

        problems = exc.problems if isinstance(exc, (HttpError, UserError)) else None
        if problems is None:
            raise
        return html("sweep_status.html.j2", job=None, errors=[f"{p.path}: {p.message}" if p.path
                                                              else p.message for p in problems])
    return _status(st.sweeps.start(sw, executor, objective))


def choice_ctx(job: Job) -> dict[str, Any]:
    """The objective (in words), the best point and the Pareto set, as ``clustertwin sweep``
    ranks them (:func:`clustertwin.sweep.choose.choose`)."""
    from clustertwin.report.labels import label_unit
    from clustertwin.sweep.choose import choose

    choice = choose(job.table(), job.objective)
    best = choice.best
    return {"objective": label_unit(choice.column), "best": job.labels[best] if best is not None else "",
            "best_i": best, "pareto_labels": [job.labels[i] for i in choice.pareto],
            "pareto_rows": set(choice.pareto),
            "best_by_job": [job.labels[i] for i in choice.best_by_job] if best is None else []}


def _status(job: Job) -> Any:
    from clustertwin.serve.render import html

    ctx: dict[str, Any] = {"job": job, "errors": [job.error] if job.error else []}
    if job.rows is not None:
        header, rows = table_rows(job)
        div, _front = pareto_html(job)
        ctx.update(choice_ctx(job))
        for i, row in enumerate(rows):
            row["front"] = i in ctx["pareto_rows"]
            row["best"] = i == ctx["best_i"]
        ctx.update(header=header, rows=rows, pareto=div)
    return html("sweep_status.html.j2", **ctx)


def _job_of(request: Any) -> Job:
    from clustertwin.serve.guard import HttpError

    job = request.app.state.sweeps.jobs.get(request.path_params["job"])
    if job is None:
        raise HttpError(404, "no such sweep (finished sweeps are kept while the server runs)")
    return job


async def sweep_cancel(request: Any) -> Any:
    """POST /sweep/ID/cancel: stop a running sweep; answers its (final) status fragment."""
    job = _job_of(request)
    if not job.finished:
        request.app.state.sweeps.cancel(job)
    return _status(job)


async def sweep_file(request: Any) -> Any:
    """GET /sweep/ID/sweep.csv|sweep.parquet: the table as ``clustertwin sweep`` writes it."""
    from starlette.responses import Response

    from clustertwin.serve.guard import HttpError
    from clustertwin.sweep.table import csv_text, parquet_bytes

    job, name = _job_of(request), request.path_params["name"]
    if job.rows is None:
        raise HttpError(409, "the sweep has not finished")
    if name == "sweep.csv":
        data, kind = csv_text(job.table()).encode("utf-8"), "text/csv; charset=utf-8"
    elif name == "sweep.parquet":
        data, kind = parquet_bytes(job.table()), "application/vnd.apache.parquet"
    else:
        raise HttpError(404, "sweep.csv or sweep.parquet")
    return Response(data, media_type=kind, headers={"Content-Disposition": f'attachment; filename="{name}"'})


async def sweep_status(request: Any) -> Any:
    """GET /sweep/ID: the progress fragment (polling while running), then the results."""
    return _status(_job_of(request))


def routes() -> list[Any]:
    from starlette.routing import Route

    return [Route("/sweep", sweep_page, methods=["GET"]),
            Route("/sweep/start", sweep_start, methods=["POST"]),
            Route("/sweep/{job}", sweep_status, methods=["GET"]),
            Route("/sweep/{job}/cancel", sweep_cancel, methods=["POST"]),
            Route("/sweep/{job}/{name}", sweep_file, methods=["GET"])]
