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
