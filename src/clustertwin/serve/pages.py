"""The pages: the scenario editor with its answer (updated in place by htmx), downloads and
the static files. Every page is rendered by jinja2 with autoescape on."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from clustertwin.errors import UserError
from clustertwin.serve.render import env, html

STATIC = Path(__file__).parent / "static"
_STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".txt": "text/plain"}


def _editor_ctx(request: Any, text: str, doc: dict[str, Any] | None) -> dict[str, Any]:
    from clustertwin.fmt import dotted
    from clustertwin.serve.form import fields, shown

    st = request.app.state
    ids = st.engine.catalog_ids()
    rows = [{"f": f, "value": shown(dotted(doc, f.key)) if doc else "", "options": ids.get(f.catalog, [])}
            for f in fields()]
    return {"fields": rows, "yaml": text, "saved": st.library.items.values(), "errors": {}}


async def editor(request: Any) -> Any:
    """GET /: the editor, opened on ``?example=NAME`` (a saved scenario's name) or the first."""
    from clustertwin.serve.engine import doc_from_yaml

    lib = request.app.state.library
    saved = lib.get(request.query_params.get("example", "")) or lib.first()
    try:
        doc = doc_from_yaml(saved.text, saved.name)
    except UserError:
        doc = None
    return html("editor.html.j2", title="clustertwin", current=saved.name,
                **_editor_ctx(request, saved.text, doc))


async def _form_doc(request: Any, fields_win: bool = False) -> tuple[Any, dict[str, Any] | None, list[Any], str]:
    """(form, document or None, problems, the trigger's name) from a posted editor form.
    The fields override the YAML after a field edit (or ``fields_win``), not after a YAML edit
    and not on the page's first load (no trigger), which keeps the YAML as written."""
    from clustertwin.serve.engine import doc_from_yaml
    from clustertwin.serve.form import apply_fields
    from clustertwin.serve.guard import MAX_BODY_BYTES, HttpError, parse_form, read_body

    form = parse_form(await read_body(request, MAX_BODY_BYTES))
    trigger = request.headers.get("hx-trigger-name", "")
    text = form.get("yaml")
    if not isinstance(text, str):
        raise HttpError(400, "the form has no yaml field")
    try:
        doc = doc_from_yaml(text, "yaml")
        if fields_win or trigger not in ("yaml", ""):
            doc = apply_fields(doc, form)
    except UserError as exc:
        return form, None, exc.problems, trigger
    return form, doc, [], trigger


async def answer(request: Any) -> Any:
    """POST /answer: the answer fragment for the form, plus out-of-band updates of the other
    pane (YAML after a field edit, fields after a YAML edit) and the problems at their fields."""
    from clustertwin.serve.answer import render_answer
    from clustertwin.serve.form import field_problems, fields, yaml_of

    st = request.app.state
    _form, doc, problems, trigger = await _form_doc(request)
    result = None
    if doc is not None:
        result, problems = await st.runner.plan_or_problems(doc)
    at, rest = field_problems(problems)
    ctx = {"errors": at, "problems": rest, "trigger": trigger, "ok": not problems,
           "all_keys": [f.key for f in fields()]}
    if doc is not None and trigger == "yaml":
        ctx.update(_editor_ctx(request, "", doc), errors=at)
    elif doc is not None and trigger:
        ctx["new_yaml"] = yaml_of(doc)
    if problems:
        return html("oob.html.j2", headers={"HX-Reswap": "none"}, **ctx)
    body = await st.runner.run(render_answer, env(), result, st.engine.catalog)
    return html("oob.html.j2", body=body, **ctx)


async def download(request: Any) -> Any:
    """POST /download: the form's scenario as a YAML file."""
    from starlette.responses import Response

    from clustertwin.serve.form import yaml_of
    from clustertwin.serve.guard import HttpError

    _form, doc, problems, _ = await _form_doc(request, fields_win=True)
    if doc is None:
        raise HttpError(400, problems)
    from clustertwin.quoting import IDENT_MAX, IDENT_RE

    name = _file_name(doc.get("name"), IDENT_MAX - 5, IDENT_RE) or "scenario"  # an identifier only
    return Response(yaml_of(doc), media_type="application/yaml",
                    headers={"Content-Disposition": f'attachment; filename="{name}.yaml"'})


def _file_name(name: Any, limit: int, pattern: Any) -> str:
    """A scenario name as an identifier (runs of other characters -> '-'), '' if none is left."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", str(name or ""))[:limit].strip(".-_")
    return text if pattern.fullmatch(text) else ""


async def save(request: Any) -> Any:
    """POST /save: keep the form's scenario (fields applied) under its name for compare and
    sweep. Answers a line of HTML for the page either way (htmx swaps only 2xx answers)."""
    from starlette.responses import HTMLResponse

    from clustertwin.quoting import IDENT_MAX, IDENT_RE
    from clustertwin.serve.form import yaml_of

    _form, doc, problems, _ = await _form_doc(request, fields_win=True)
    name = _file_name(doc.get("name"), IDENT_MAX, IDENT_RE) if doc is not None else ""
    if doc is None:
        msg, name = "fix the problems first: " + "; ".join(p.message for p in problems), ""
    elif not name:
        msg = "give the scenario a name (the name field) to save it"
    else:
        try:
            request.app.state.library.save(name, yaml_of(doc))
            msg = ""
        except UserError as exc:
            msg = exc.problems[0].message
    tpl = ("{% if msg %}<span class='err'>{{ msg }}</span>{% else %}saved as <strong>{{ n }}</strong>: "
           "pick it in <a href='/compare'>compare</a> or <a href='/sweep'>sweep</a>{% endif %}")
    return HTMLResponse(env().from_string(tpl).render(n=name, msg=msg))


@functools.lru_cache(maxsize=8)
def _static_bytes(name: str) -> bytes:
    if name == "plotly.min.js":  # the plotly.js of the installed plotly package
        from plotly.offline import get_plotlyjs

        return get_plotlyjs().encode("utf-8")
    return (STATIC / name).read_bytes()


async def static(request: Any) -> Any:
    """GET /static/NAME: only the files shipped in ``serve/static`` (and plotly.js)."""
    from starlette.responses import Response

    from clustertwin.serve.guard import HttpError

    name = request.path_params["name"]
    known = {p.name for p in STATIC.iterdir() if p.is_file()} | {"plotly.min.js"}
    if name not in known:
        raise HttpError(404, f"no static file {name[:60]!r}")
    kind = _STATIC_TYPES.get(Path(name).suffix, "application/octet-stream")
    return Response(_static_bytes(name), media_type=kind,
                    headers={"Cache-Control": "max-age=3600"})


def routes() -> list[Any]:
    from starlette.routing import Route

    from clustertwin.serve.compare import compare

    return [
        Route("/", editor, methods=["GET"]),
        Route("/answer", answer, methods=["POST"]),
        Route("/download", download, methods=["POST"]),
        Route("/save", save, methods=["POST"]),
        Route("/compare", compare, methods=["GET"]),
        Route("/static/{name}", static, methods=["GET"]),
    ]
