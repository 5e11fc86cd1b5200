"""The Starlette application: the JSON API, the pages and the static files, all local.

``create_app`` builds it around one warm :class:`~clustertwin.serve.engine.Engine`. Every
response is JSON or server-rendered HTML (jinja2, autoescaped); every error is JSON with a 4xx/5xx
status and never a traceback.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from clustertwin.errors import UserError
from clustertwin.serve.guard import (
    MAX_HEADER_BYTES,
    SAFE_METHODS,
    Allowed,
    HttpError,
    check_host,
    check_origin,
    read_body,
)

log = logging.getLogger(__name__)


def error_body(status: int, problems: list[Any]) -> dict[str, Any]:
    from clustertwin.serve.engine import problem_dicts

    lines = [f"{p.path}: {p.message}" if p.path else p.message for p in problems]
    return {"error": "; ".join(lines)[:2000] or f"HTTP {status}", "status": status,
            "problems": problem_dicts(problems)}


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Any:
    from starlette.responses import Response

    from clustertwin.quoting import json_text

    return Response(json_text(obj, indent=None), status_code=status, media_type="application/json",
                    headers=headers)


def error_response(exc: HttpError) -> Any:
    return json_response(error_body(exc.status, exc.problems), exc.status, exc.headers)


async def request_doc(request: Any) -> dict[str, Any]:
    """The scenario a request carries: a JSON object, or YAML text when the Content-Type says
    ``yaml`` (as a scenario file is written)."""
    from clustertwin.serve.engine import doc_from_json, doc_from_yaml

    body = await read_body(request)
    if "yaml" in request.headers.get("content-type", "").lower():
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise HttpError(400, "the body is not UTF-8 text") from None
        return _parsed(doc_from_yaml, text)
    return _parsed(doc_from_json, body)


async def api_plan(request: Any) -> Any:
    """POST /api/plan: a scenario as a JSON object (or YAML) -> the ``plan --json`` document."""
    doc = await request_doc(request)
    answer = await request.app.state.runner.plan(doc)
    return json_response(answer.doc)


async def api_validate(request: Any) -> Any:
    """POST /api/validate: ``{"ok": bool, "problems": [{"path", "message"}]}`` (one per field)."""
    from clustertwin.serve.engine import problem_dicts

    doc = await request_doc(request)
    problems = await request.app.state.runner.problems(doc)
    return json_response({"ok": not problems, "problems": problem_dicts(problems)})


async def api_catalog(request: Any) -> Any:
    """GET /api/catalog: ``{kind: [ids]}``."""
    return json_response(request.app.state.engine.catalog_ids())


def _parsed(fn: Any, *args: Any) -> Any:
    """Parse a request document; a malformed one is a 400 with its problems."""
    try:
        return fn(*args)
    except UserError as exc:
        raise HttpError(400, exc.problems) from None


class GuardMiddleware:
    """Pure ASGI middleware: the Host check on every request, the Origin check on every
    state-changing one (see :mod:`.guard`)."""

    def __init__(self, app: Any, allowed: Allowed) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            from starlette.datastructures import Headers

            headers = Headers(scope=scope)
            local = scope.get("server")
            try:
                size = sum(len(k) + len(v) for k, v in scope["headers"])
                if size > MAX_HEADER_BYTES:  # h11 bounds a head that arrives in pieces; this, any head
                    raise HttpError(431, f"request headers of {size:,} bytes; at most {MAX_HEADER_BYTES:,}")
                check_host(headers, self.allowed, local)
                if scope["method"] not in SAFE_METHODS:
                    check_origin(headers, self.allowed, local)
            except HttpError as exc:
                await error_response(exc)(scope, receive, send)
                return
        elif scope["type"] == "websocket":  # none served; refuse before any handshake
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)


async def _http_error(request: Any, exc: HttpError) -> Any:
    return error_response(exc)


async def _starlette_error(request: Any, exc: Any) -> Any:
    from clustertwin.errors import Problem

    return json_response(error_body(exc.status_code, [Problem("request", "", str(exc.detail))]), exc.status_code)


async def _bug(request: Any, exc: Exception) -> Any:
    """An exception no handler expected: one line in the log (where), a generic JSON 500."""
    from clustertwin.errors import Problem
    from clustertwin.serve.workers import where

    log.error("internal error on %s: %s at %s", request.url.path[:80], type(exc).__name__, where(exc))
    return json_response(error_body(500, [Problem("server", "", "internal error; see the server log")]), 500)


# the ASGI factory other servers call (README): one keyword per ``clustertwin serve`` option
def create_app(scenarios: list[Path] | None = None, catalog_dirs: tuple[str, ...] = (),
               host: str = "127.0.0.1", timeout_s: float | None = None, warm: bool = False,
               port: int | None = None, allow_hosts: tuple[str, ...] = (), workers: int | None = None,
               memory_mb: int | None = None, db: str | Path | None = None) -> Any:
    """The ASGI app. ``scenarios``: files offered as saved scenarios beside the examples.
    ``host``/``port``/``allow_hosts``: the names the server answers to (the port defaults to
    the one each connection arrived at). ``workers``: planning processes (one per core),
    each capped at ``memory_mb`` and ``timeout_s``. ``warm``: each worker plans the scenario
    the editor opens with as it starts, so the first page finds its answer in the cache.
    ``db``: the SQLite file that remembers saved scenarios and drafts (None: memory only)."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.routing import Route

    from clustertwin.serve.engine import Engine
    from clustertwin.serve.library import Library
    from clustertwin.serve.pages import routes as page_routes
    from clustertwin.serve.runner import PLAN_TIMEOUT_S, Runner
    from clustertwin.serve.saved_pages import routes as saved_routes
    from clustertwin.serve.store import Store
    from clustertwin.serve.sweep_pages import routes as sweep_routes
    from clustertwin.serve.sweeps import SweepBoard
    from clustertwin.serve.track_page import routes as track_routes
    from clustertwin.serve.workers import MEMORY_CAP_MB

    routes = [
        Route("/api/plan", api_plan, methods=["POST"]),
        Route("/api/validate", api_validate, methods=["POST"]),
        Route("/api/catalog", api_catalog, methods=["GET"]),
        *page_routes(), *saved_routes(), *sweep_routes(), *track_routes(),
    ]
    allowed = Allowed(host, port, allow_hosts)
    app = Starlette(routes=routes, middleware=[Middleware(GuardMiddleware, allowed=allowed)],
                    exception_handlers={HttpError: _http_error, HTTPException: _starlette_error,
                                        Exception: _bug})
    app.state.engine = Engine(tuple(catalog_dirs))
    app.state.library = Library(scenarios or [])
    app.state.store = Store(db or ":memory:")
    for v in app.state.store.latest():
        app.state.library.remember(v.name, v.yaml)
    first = _warm_job(app.state.library) if warm else None
    app.state.track_uploads = 0  #: track uploads held now (serve/track_page.py)
    app.state.runner = Runner(app.state.engine, tuple(catalog_dirs), timeout_s or PLAN_TIMEOUT_S,
                              workers, memory_mb or MEMORY_CAP_MB, warm=first)
    app.state.sweeps = SweepBoard(tuple(catalog_dirs), memory_mb or MEMORY_CAP_MB)
    return app


def _warm_job(library: Any) -> tuple[str, Any, str] | None:
    from clustertwin.serve.engine import doc_from_yaml

    first = library.first()
    try:
        return "plan", doc_from_yaml(first.text, first.name), first.name
    except UserError:
        return None  # the page shows the problems when it asks
