"""The track page: a scenario (saved or pasted) and the run's log files (plus its ``sacct``
export) in, the run against its plan out: the observed-vs-planned tiles, the trained-by
forecast (P10/P50/P90), the drift flags, the burn-up chart with its fan, the interruption
timeline and the step time per day, all drawn through the run's view
(:mod:`clustertwin.report.views.track`), as ``clustertwin track --out`` draws track.html.

The upload is one multipart form, bounded by :data:`MAX_UPLOAD_BYTES` (read and refused with
413 past it, a message that points to the command line, which streams logs of any size). The
log text goes to a planning worker (:mod:`.workers`: memory-capped, timed, behind the
runner's bounded queue), which plans the scenario, reads the logs and draws the figures; the
server renders the page (jinja2, autoescaped through :mod:`clustertwin.quoting`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from clustertwin.errors import Problem, UserError
from clustertwin.serve.guard import HttpError

MAX_UPLOAD_BYTES = 16 * 2**20  #: the whole form: scenario, logs and sacct file
MAX_PARTS = 24  #: form fields and files in one upload
MAX_LOGS = 8
UPLOADS_AT_ONCE = 4  #: uploads held by the server at a time (read, or waiting for a worker); then 503
NAME_MAX = 100  #: characters of an uploaded file's name kept (for the page's "lines read")
CLI_HINT = "clustertwin track SCENARIO --log FILE [--sacct FILE]"
@dataclass(frozen=True)
class Part:
    name: str
    filename: str | None
    data: bytes


async def parse_multipart(body: bytes, content_type: str) -> list[Part]:
    """The parts of a ``multipart/form-data`` body (RFC 7578), read by starlette's form parser
    (python-multipart) from the body already read and bounded: each part's field name, file
    name (None for a plain field) and bytes. At most :data:`MAX_PARTS` parts; anything
    malformed is a 400."""
    from python_multipart.exceptions import FormParserError
    from python_multipart.multipart import parse_options_header
    from starlette.datastructures import Headers, UploadFile
    from starlette.formparsers import MultiPartException, MultiPartParser

    kind, params = parse_options_header(content_type)
    boundary = params.get(b"boundary", b"")
    if kind != b"multipart/form-data" or not boundary:
        raise HttpError(400, "the form must be sent as multipart/form-data with a boundary")
    if b"--" + boundary + b"--" not in body:
        raise HttpError(400, "the multipart form is cut short (no closing boundary)")

    async def whole() -> Any:
        yield body

    parser = MultiPartParser(Headers({"content-type": content_type}), whole(), max_files=MAX_PARTS,
                             max_fields=MAX_PARTS, max_part_size=MAX_UPLOAD_BYTES)
    try:
        form = await parser.parse()
    except (MultiPartException, FormParserError):
        raise HttpError(400, "the multipart form could not be read (a part without its headers or "
                        "its field name, or too many parts)") from None
    parts = []
    try:
        for name, value in form.multi_items():
            if isinstance(value, UploadFile):
                parts.append(Part(name, value.filename or "", await value.read()))
            else:
                parts.append(Part(name, None, value.encode("utf-8")))
    finally:
        await form.close()
    if len(parts) > MAX_PARTS:
        raise HttpError(400, f"{len(parts)} form parts; at most {MAX_PARTS}")
    return parts


def _file_name(name: str) -> str:
    """An uploaded file's name as shown: its last path component, at most :data:`NAME_MAX`."""
    return re.split(r"[\\/]", name)[-1][:NAME_MAX] or "upload"


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def form_inputs(parts: list[Part], library: Any) -> dict[str, Any]:
    """The upload as a track job's inputs: the scenario document (pasted YAML wins over the
    saved scenario picked), ``[(file name, text)]`` logs, the sacct file and ``--as-of``."""
    from clustertwin.serve.engine import doc_from_yaml
    from clustertwin.track.records import as_of_time

    fields = {p.name: _text(p.data) for p in parts if p.filename is None}
    logs = [(_file_name(p.filename), _text(p.data)) for p in parts
            if p.name == "log" and p.filename is not None and p.data]
    sacct = next(((_file_name(p.filename), _text(p.data)) for p in parts
                  if p.name == "sacct" and p.filename is not None and p.data), None)
    problems = []
    if not logs:
        problems.append(Problem("log", "log", "at least one training log file"))
    if len(logs) > MAX_LOGS:
        problems.append(Problem("log", "log", f"at most {MAX_LOGS} log files"))
    pasted = fields.get("yaml", "").strip()
    saved = library.get(fields.get("scenario", ""))
    if not pasted and saved is None:
        problems.append(Problem("scenario", "scenario", "a saved scenario picked, or scenario YAML pasted"))
    if problems:
        raise UserError(problems)
    source = "pasted scenario" if pasted else saved.name
    doc = doc_from_yaml(pasted if pasted else saved.text, source)
    return {"doc": doc, "source": source, "logs": logs, "sacct": sacct,
            "as_of": as_of_time(fields.get("as_of", "").strip()[:40] or None, "as_of")}


def track_job(engine: Any, job: tuple[Any, ...]) -> dict[str, Any]:
    """In a planning worker: plan the scenario, read the logs, draw the page's parts (plain
    strings and figure markup, sent back over the worker's pipe)."""
    from clustertwin.report.html import figure_div
    from clustertwin.report.views import track as view
    from clustertwin.track.core import track
    from clustertwin.track.report import to_doc

    _kind, doc, source, logs, sacct, when = job
    answer = engine.plan(doc, source)
    res = track(answer.plan.scenario, engine.catalog, logs, sacct[0] if sacct else None, when, plan=answer.plan,
                sacct_text=sacct[1] if sacct else None)
    tdoc = to_doc(res)
    sections = [{"title": s["title"], "rows": s["rows"],
                 "figures": [{"title": t, "div": figure_div(f)} for t, f in s.get("figures", [])]}
                for s in view.sections(res, tdoc)]
    forecast = [(f"P{q}", tdoc["forecast"][f"trained_by_p{q}"], tdoc["forecast"][f"remaining_days_p{q}"])
                for q in (10, 50, 90)]
    return {"name": res.scenario_name, "as_of": tdoc["as_of"], "tiles": view.tiles(res, tdoc), "forecast": forecast,
            "drift": tdoc["drift"], "sections": sections}


def _page(status: int = 200, headers: dict[str, str] | None = None, **ctx: Any) -> Any:
    from clustertwin.serve.render import html

    return html("track.html.j2", status=status, headers=headers, title="clustertwin track", max_bytes=MAX_UPLOAD_BYTES,
                max_mib=MAX_UPLOAD_BYTES >> 20, max_logs=MAX_LOGS, cli=CLI_HINT, **ctx)


async def track_form(request: Any) -> Any:
    """GET /track: the form (a saved scenario or pasted YAML, the logs, the sacct file)."""
    return _page(saved=request.app.state.library.items.values(), picked="")


def _too_large(exc: HttpError) -> list[str]:
    return [f"The upload is too large ({exc.problems[0].message}). The page takes at most {MAX_UPLOAD_BYTES:,} "
            f"bytes ({MAX_UPLOAD_BYTES >> 20} MiB) of logs and scenario in all; read larger logs with the command "
            f"line, which streams logs of any size: {CLI_HINT}"]


async def track_post(request: Any) -> Any:
    """POST /track: at most :data:`UPLOADS_AT_ONCE` uploads held at a time (each up to
    :data:`MAX_UPLOAD_BYTES`, so the server's memory stays bounded); one more is a 503."""
    st = request.app.state
    held = st.track_uploads
    if held >= UPLOADS_AT_ONCE:
        return _page(503, {"Retry-After": "5"}, saved=st.library.items.values(), picked="",
                     errors=[f"{held} uploads are being tracked (at most {UPLOADS_AT_ONCE} at once); try again "
                             "in a few seconds"])
    st.track_uploads = held + 1
    try:
        return await _track_upload(request)
    finally:
        st.track_uploads -= 1


async def _track_upload(request: Any) -> Any:
    """The upload read (bounded), tracked in a worker, the page with the result; problems (a
    bad scenario, no training records, an unknown log format) on the page, 422."""
    from clustertwin.serve.guard import read_body

    st = request.app.state
    ctx: dict[str, Any] = {"saved": st.library.items.values(), "picked": ""}
    try:
        body = await read_body(request, MAX_UPLOAD_BYTES)
    except HttpError as exc:
        if exc.status != 413:
            raise
        return _page(413, errors=_too_large(exc), **ctx)
    parts = await parse_multipart(body, request.headers.get("content-type", ""))
    del body
    try:
        inputs = form_inputs(parts, st.library)
    except UserError as exc:
        return _page(422, errors=[str(p) for p in exc.problems], **ctx)
    ctx["picked"] = next((_text(p.data) for p in parts if p.name == "scenario" and p.filename is None), "")
    try:
        result = await st.runner.track(inputs)
    except HttpError as exc:
        if exc.status != 422:
            raise
        return _page(422, errors=[str(p) for p in exc.problems], **ctx)
    return _page(result=result, **ctx)


def routes() -> list[Any]:
    from starlette.routing import Route

    return [Route("/track", track_form, methods=["GET"]), Route("/track", track_post, methods=["POST"])]
