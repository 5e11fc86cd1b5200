"""Saving scenarios in the server's database (:mod:`.store`) and opening them by share link.

- ``POST /save`` (the editor's button): the form's scenario, fields applied, its YAML comments
  kept, saved under its name as a new version. A name the project already has is not replaced
  silently: the answer asks (overwrite = a new version of it, or save as the first free
  ``NAME-N``), which the page posts back as ``on_conflict``.
- ``GET /s/<id>[?v=N]``: the editor on that scenario (its latest version, or version N), with
  its share link and history (who saved each version, when).
- ``POST /api/scenarios`` (JSON ``{"name", "yaml", "on_conflict": "ask"|"overwrite"|"rename"}``)
  -> 201 ``{"id", "name", "version", "url", "who", "at"}``, or 409 with ``suggested`` when the
  name is taken and ``on_conflict`` is ``ask``; ``GET /api/scenarios/<id>``: the latest version
  with its plan and history.
"""

from __future__ import annotations

from typing import Any

from clustertwin.errors import UserError

CONFLICTS = ("ask", "overwrite", "rename")


def _json(obj: Any, status: int = 200) -> Any:
    from starlette.responses import Response

    from clustertwin.quoting import json_text

    return Response(json_text(obj, indent=None), status_code=status, media_type="application/json")


def _parsed(fn: Any, *args: Any) -> Any:
    """A request's document, or a 400 naming its problems."""
    from clustertwin.serve.guard import HttpError

    try:
        return fn(*args)
    except UserError as exc:
        raise HttpError(400, exc.problems) from None


def _identifier(name: Any) -> str:
    from clustertwin.quoting import IDENT_MAX, IDENT_RE
    from clustertwin.serve.pages import _file_name

    return _file_name(name, IDENT_MAX, IDENT_RE)


async def _keep(st: Any, name: str, text: str, doc: dict[str, Any], on_conflict: str) -> Any:
    """Plan (usually a cache hit: the page showed it) and save; the library offers it after."""
    from clustertwin.errors import Problem, UsageError
    from clustertwin.serve.library import SESSION, STORED

    old = st.library.get(name)
    if old is not None and old.origin not in (STORED, SESSION):
        raise UsageError([Problem("save", "name", f"{name!r} is a {old.origin} scenario; rename yours")])
    answer, _problems = await st.runner.plan_or_problems(doc)
    version = st.store.save(name, text, answer.doc if answer is not None else None, on_conflict)
    st.library.remember(version.name, text)
    return version


async def save(request: Any) -> Any:
    """POST /save: a line of HTML for the page either way (htmx swaps only 2xx answers)."""
    from starlette.responses import HTMLResponse

    from clustertwin.serve.form import yaml_of
    from clustertwin.serve.pages import CLIENT_COOKIE, _form_doc
    from clustertwin.serve.render import env
    from clustertwin.serve.store import NameTaken, StoreFull

    st = request.app.state
    form, doc, problems, _ = await _form_doc(request, fields_win=True)
    on_conflict = form.get("on_conflict") if form.get("on_conflict") in CONFLICTS else "ask"
    name = _identifier(doc.get("name")) if doc is not None else ""
    ctx: dict[str, Any] = {"name": name}
    if doc is None:
        ctx["msg"] = "fix the problems first: " + "; ".join(p.message for p in problems)
    elif not name:
        ctx["msg"] = "give the scenario a name (the name field) to save it"
    else:
        try:
            ctx["v"] = await _keep(st, name, yaml_of(doc, form.get("yaml")), doc, on_conflict)
            st.store.drop_draft(request.cookies.get(CLIENT_COOKIE, ""), form.get("place", ""))
        except NameTaken as exc:
            ctx["taken"] = exc.suggested
        except StoreFull as exc:
            ctx["msg"] = str(exc)
        except UserError as exc:
            ctx["msg"] = exc.problems[0].message
    return HTMLResponse(env().get_template("saved.html.j2").render(**ctx))


async def shared(request: Any) -> Any:
    """GET /s/<id>[?v=N]: the editor on a saved scenario."""
    from clustertwin.serve.guard import HttpError
    from clustertwin.serve.pages import open_editor

    st = request.app.state
    sid = request.path_params["sid"]
    v = request.query_params.get("v", "")
    got = st.store.get(sid, int(v) if v.isdigit() and len(v) < 9 else None)
    if got is None:
        raise HttpError(404, "no saved scenario with this link (or no such version)")
    share = {"id": sid, "name": got.name, "version": got.version, "who": got.who, "at": got.at,
             "history": st.store.history(sid)}
    return open_editor(request, got.yaml, f"s/{sid}", current=got.name, share=share)


async def api_save(request: Any) -> Any:
    from clustertwin.errors import Problem
    from clustertwin.serve.engine import doc_from_json, doc_from_yaml
    from clustertwin.serve.guard import HttpError, read_body
    from clustertwin.serve.store import NameTaken, StoreFull

    body = _parsed(doc_from_json, await read_body(request), "request")
    text, name, how = body.get("yaml"), _identifier(body.get("name")), body.get("on_conflict", "ask")
    if not isinstance(text, str) or not name or how not in CONFLICTS:
        raise HttpError(400, [Problem("request", "", 'expected {"name": an identifier, "yaml": the scenario '
                                      'as YAML text, "on_conflict": "ask", "overwrite" or "rename"}')])
    doc = _parsed(doc_from_yaml, text, "yaml")
    try:
        v = await _keep(request.app.state, name, text, doc, how)
    except NameTaken as exc:
        return _json({"error": f"a scenario named {exc.name!r} exists in this project; post again "
                              "with on_conflict overwrite or rename", "status": 409,
                              "suggested": exc.suggested}, 409)
    except UserError as exc:
        raise HttpError(409, exc.problems) from None
    except StoreFull as exc:
        raise HttpError(507, str(exc)) from None
    return _json({"id": v.scenario_id, "name": v.name, "version": v.version,
                          "url": f"/s/{v.scenario_id}", "who": v.who, "at": v.at}, 201)


async def api_get(request: Any) -> Any:
    import json

    from clustertwin.serve.guard import HttpError

    store = request.app.state.store
    got = store.get(request.path_params["sid"])
    if got is None:
        raise HttpError(404, "no saved scenario with this id")
    return _json({"id": got.scenario_id, "name": got.name, "version": got.version, "yaml": got.yaml,
                          "who": got.who, "at": got.at, "plan": json.loads(got.plan_json) if got.plan_json else None,
                          "versions": [{"version": h.version, "who": h.who, "at": h.at}
                                       for h in store.history(got.scenario_id)]})


def routes() -> list[Any]:
    from starlette.routing import Route

    return [
        Route("/save", save, methods=["POST"]),
        Route("/s/{sid}", shared, methods=["GET"]),
        Route("/api/scenarios", api_save, methods=["POST"]),
        Route("/api/scenarios/{sid}", api_get, methods=["GET"]),
    ]
