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
    from clustertwin.report.labels import label_unit as label
    from clustertwin.serve.form import fields, shown

    st = request.app.state
    ids = dict(st.engine.catalog_ids())
    gpu = dotted(doc, "cluster.gpu") if doc else None
    ids["node"] = nodes_for(st.engine.catalog, gpu) or ids.get("node", [])
    rows = [{"f": f, "value": shown(dotted(doc, f.key)) if doc else "", "options": ids.get(f.catalog, []),
             "words": label("scenario." + f.key)} for f in fields()]
    from clustertwin.serve.files import FILES

    return {"fields": rows, "yaml": text, "saved": st.library.items.values(), "errors": {}, "downloads": list(FILES)}


def nodes_for(catalog: Any, gpu: Any) -> list[str]:
    """The catalog nodes that hold ``gpu`` (catalog order: the first is the default one), [] if none."""
    if not isinstance(gpu, str):
        return []
    return [n.id for n in catalog.all("node") if n.gpu == gpu]


def follow_gpu(catalog: Any, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """After the GPU field changed: a node that does not hold the new GPU is replaced by the
    default one that does (:func:`clustertwin.perf.system.default_node`). Returns the document
    and a note for the page ('' when the node already fits or no node holds the GPU)."""
    from clustertwin.fmt import dotted
    from clustertwin.perf.system import default_node
    from clustertwin.sweep.grid import apply

    gpu, node = dotted(doc, "cluster.gpu"), dotted(doc, "cluster.node")
    held = nodes_for(catalog, gpu)
    if not held or node in held:
        return doc, ""
    chosen = default_node(catalog, gpu)
    return apply(doc, {"cluster.node": chosen}), f"node {node or '(none)'} does not hold {gpu}: set to {chosen}"


async def editor(request: Any) -> Any:
    """GET /: the editor, opened on ``?example=NAME`` (a saved scenario's name) or the first."""
    lib = request.app.state.library
    saved = lib.get(request.query_params.get("example", "")) or lib.first()
    return open_editor(request, saved.text, f"ex/{saved.name}", current=saved.name)


PLACE_RE = re.compile(r"(?:ex|s)/[A-Za-z0-9._-]{1,80}")
CLIENT_COOKIE = "ct_client"


def client_id(request: Any) -> tuple[str, bool]:
    """This browser's random id (the cookie), and whether it is new (to be set)."""
    import secrets

    from clustertwin.serve.store import ID_RE

    got = request.cookies.get(CLIENT_COOKIE, "")
    if ID_RE.fullmatch(got):
        return got, False
    return secrets.token_urlsafe(16), True


def open_editor(request: Any, text: str, place: str, current: str = "", **extra: Any) -> Any:
    """The editor page on ``text``; this browser's unsaved edits of the same page (a draft in
    the store) win unless ``?fresh=1``. ``place``: ``ex/NAME`` or ``s/ID``, the draft's key."""
    from clustertwin.serve.engine import doc_from_yaml
    from clustertwin.serve.form import fields

    client, new = client_id(request)
    store = request.app.state.store
    draft = None if request.query_params.get("fresh") or new else store.draft(client, place)
    if draft and isinstance(draft.get("yaml"), str):
        text = draft["yaml"]
    try:
        doc = doc_from_yaml(text, "yaml")
    except UserError:
        doc = None
    ctx = _editor_ctx(request, text, doc)
    for row in ctx["fields"]:
        typed = (draft or {}).get(row["f"].key)
        if isinstance(typed, str) and typed:
            row["value"] = typed[:200]
    keys = [f.key for f in fields()]
    restored = bool(draft) and draft.get("yaml") is not None
    resp = html("editor.html.j2", title="clustertwin", current=current, place=place, restored=restored,
                fresh_url=request.url.path + "?" + _query(request, fresh="1"), keys=keys, **extra, **ctx)
    if new:
        resp.set_cookie(CLIENT_COOKIE, client, max_age=365 * 86400, httponly=True, samesite="strict")
    return resp


def _query(request: Any, **more: str) -> str:
    from urllib.parse import urlencode

    q = {k: v for k, v in request.query_params.items() if k in ("example", "v")}
    return urlencode({**q, **more})


def keep_draft(request: Any, form: dict[str, str], doc: Any, new_yaml: str | None) -> None:
    """After an edit: the form as this browser left it, for a reload of the same page."""
    from clustertwin.serve.form import fields
    from clustertwin.serve.store import ID_RE

    client, place = request.cookies.get(CLIENT_COOKIE, ""), form.get("place", "")
    if not ID_RE.fullmatch(client) or not PLACE_RE.fullmatch(place):
        return
    kept = {"yaml": new_yaml if new_yaml is not None else form.get("yaml", "")}
    if doc is None:  # fields that did not make it into the YAML: kept as typed
        kept.update({f.key: form[f.key] for f in fields() if form.get(f.key)})
    request.app.state.store.put_draft(client, place, kept)


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
        if fields_win or trigger not in ("yaml", "") or form.get("restored") == "1":
            doc = apply_fields(doc, form)
    except UserError as exc:
        return form, None, exc.problems, trigger
    return form, doc, [], trigger


async def answer(request: Any) -> Any:
    """POST /answer: the answer fragment for the form, plus out-of-band updates of the other
    pane (YAML after a field edit, fields after a YAML or GPU edit) and the problems at their
    fields. Headers for the page: ``X-Answer-State`` (``ok``: the body is the answer for exactly
    the posted scenario; ``stale``: it has problems, the page keeps the old answer greyed) and
    ``X-Edit-Seq`` (the page's edit counter, echoed, so an answer to an older edit clears nothing)."""
    from clustertwin.serve.answer import render_answer
    from clustertwin.serve.form import field_problems, fields, yaml_of

    st = request.app.state
    seq = request.headers.get("x-edit-seq", "")
    seq = seq if seq.isdigit() and len(seq) <= 12 else ""
    form, doc, problems, trigger = await _form_doc(request)
    note = ""
    if doc is not None and trigger == "cluster.gpu":
        doc, note = follow_gpu(st.engine.catalog, doc)
    result = None
    if doc is not None:
        result, problems = await st.runner.plan_or_problems(doc)
    at, rest = field_problems(problems)
    ctx = {"errors": at, "problems": rest, "notes": [note] if note else [], "trigger": trigger,
           "ok": not problems, "all_keys": [f.key for f in fields()]}
    if doc is not None and trigger in ("yaml", "cluster.gpu"):
        ctx.update(_editor_ctx(request, "", doc), errors=at)
    if doc is not None and trigger and trigger != "yaml":
        ctx["new_yaml"] = yaml_of(doc, form.get("yaml"))
    if trigger:
        keep_draft(request, form, doc, ctx.get("new_yaml"))
    headers = {"X-Answer-State": "stale" if problems else "ok", "X-Edit-Seq": seq}
    if problems:
        return html("oob.html.j2", headers={"HX-Reswap": "none", **headers}, **ctx)
    body = await st.runner.run(render_answer, env(), result, st.engine.catalog)
    return html("oob.html.j2", body=body, headers=headers, **ctx)


async def download(request: Any) -> Any:
    """POST /download: the form's scenario as a YAML file."""
    from starlette.responses import Response

    from clustertwin.serve.form import yaml_of
    from clustertwin.serve.guard import HttpError

    form, doc, problems, _ = await _form_doc(request, fields_win=True)
    if doc is None:
        raise HttpError(400, problems)
    from clustertwin.quoting import IDENT_MAX, IDENT_RE

    name = _file_name(doc.get("name"), IDENT_MAX - 5, IDENT_RE) or "scenario"  # an identifier only
    return Response(yaml_of(doc, form.get("yaml")), media_type="application/yaml",
                    headers={"Content-Disposition": f'attachment; filename="{name}.yaml"'})


async def download_file(request: Any) -> Any:
    """POST /files/NAME: a file the CLI writes for the form's scenario (:mod:`.files`)."""
    from starlette.responses import Response

    from clustertwin.serve.files import FILES
    from clustertwin.serve.guard import HttpError

    name = request.path_params["name"]
    if name not in FILES:
        raise HttpError(404, f"no download {name[:60]!r}; one of {', '.join(FILES)}")
    _form, doc, problems, _ = await _form_doc(request, fields_win=True)
    if doc is None:
        raise HttpError(400, problems)
    data = await request.app.state.runner.file(doc, name)
    return Response(data, media_type=FILES[name][1],
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


def _file_name(name: Any, limit: int, pattern: Any) -> str:
    """A scenario name as an identifier (runs of other characters -> '-'), '' if none is left."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", str(name or ""))[:limit].strip(".-_")
    return text if pattern.fullmatch(text) else ""


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
        Route("/files/{name}", download_file, methods=["POST"]),
        Route("/compare", compare, methods=["GET"]),
        Route("/static/{name}", static, methods=["GET"]),
    ]
