"""A real ``clustertwin serve`` app on a free loopback port, in this process (uvicorn in a thread)."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import pytest


def need_server() -> None:
    """Skip, saying why, when the ``serve`` extra (starlette, uvicorn) is not installed."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"{exc.name or 'starlette/uvicorn'} is not installed (a dependency of clustertwin: pip install starlette uvicorn)")


@pytest.fixture
def serve_extra() -> None:
    need_server()


@dataclass
class Reply:
    status: int
    body: bytes
    headers: Any

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Server:
    base: str
    app: Any

    def request(self, path: str, body: bytes | str | None = None, headers: dict[str, str] | None = None,
                method: str | None = None) -> Reply:
        data = body.encode() if isinstance(body, str) else body
        req = urllib.request.Request(self.base + path, data=data, headers=headers or {},
                                     method=method or ("POST" if data is not None else "GET"))
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return Reply(r.status, r.read(), r.headers)
        except urllib.error.HTTPError as e:
            return Reply(e.code, e.read(), e.headers)

    def raw_post(self, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, bytes]:
        """POST with exactly ``headers`` (a Content-Length that lies, none at all) over one
        connection; the status and the body of the answer."""
        import http.client
        from urllib.parse import urlsplit

        u = urlsplit(self.base)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        conn.putrequest("POST", path)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.endheaders()
        try:
            conn.send(body)
        except OSError:  # the server may answer and close before reading a refused body
            pass
        r = conn.getresponse()
        out = r.status, r.read()
        conn.close()
        return out

    def post_json(self, path: str, obj: Any, **kw: Any) -> Reply:
        return self.request(path, json.dumps(obj), {"Content-Type": "application/json"}, **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server() -> Server:
    need_server()
    yield from running_server()


def running_server(**kw: Any) -> Any:
    """A served app on a free loopback port; ``kw``: create_app's and the connection limits'."""
    import uvicorn

    from clustertwin.serve.app import create_app
    from clustertwin.serve.conn import server_config

    limits = {k: kw.pop(k) for k in ("max_connections", "header_timeout_s", "limit_concurrency") if k in kw}
    port = free_port()
    app = create_app(**kw)
    srv = uvicorn.Server(server_config(app, "127.0.0.1", port, **limits))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline, "uvicorn did not start in 30 s"
        time.sleep(0.02)
    try:
        yield Server(f"http://127.0.0.1:{port}", app)
    finally:
        srv.should_exit = True
        thread.join(timeout=10)
        app.state.sweeps.close()
        app.state.runner.close()


@pytest.fixture(scope="module")
def browser():
    """The system Chromium driven by Playwright (the browser tests skip without either)."""
    import shutil

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    """A fresh page that records console errors, page errors and every host it asks."""
    from urllib.parse import urlsplit

    ctx = browser.new_context()
    pg = ctx.new_page()
    pg.errors, pg.hosts = [], set()
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("request", lambda r: pg.hosts.add(urlsplit(r.url).hostname) if r.url.startswith("http") else None)
    pg.set_default_timeout(120_000)
    yield pg
    ctx.close()
