"""What keeps ``clustertwin serve`` safe by default: request body size, Host and Origin checks,
a bounded run time per plan, and errors as JSON (never a traceback).

The server is a local tool: it binds 127.0.0.1 unless told otherwise. A web page from another
site can still make the browser POST to it, so every POST must carry no Origin (a script) or the
server's own; the Host header must be one the server answers to (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from clustertwin.errors import Problem, UserError

MAX_BODY_BYTES = 1_000_000  #: a scenario is a few kB; the YAML pane at most this
PLAN_TIMEOUT_S = 60.0  #: one request's planning time before it is answered 504
MAX_IN_FLIGHT = 4  #: plans running at once (timed-out ones included) before 503
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


class HttpError(Exception):
    """A request the server refuses: status code and problems for the JSON body."""

    def __init__(self, status: int, problems: list[Problem] | str) -> None:
        if isinstance(problems, str):
            problems = [Problem("request", "", problems)]
        self.status = status
        self.problems = problems
        super().__init__(problems[0].message if problems else str(status))


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


def host_name(header: str) -> str:
    """``"127.0.0.1:8000"`` -> ``"127.0.0.1"``; ``"[::1]:8000"`` -> ``"[::1]"``."""
    if header.startswith("["):
        return header.split("]", 1)[0] + "]"
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def check_host(headers: Any, bound_host: str) -> None:
    """Answer only to the names of the address the server is bound to (loopback names when
    bound to loopback): a rebound DNS name cannot reach a loopback server through the browser."""
    name = host_name(headers.get("host", "")).lower()
    if is_loopback(bound_host):
        ok = is_loopback(name)
    elif bound_host in ("", "0.0.0.0", "::"):  # every interface: any name may be this server
        ok = True
    else:
        ok = name == bound_host.lower() or is_loopback(name)
    if not ok:
        raise HttpError(400, f"Host {name[:60]!r} is not this server's address")


def check_origin(headers: Any) -> None:
    """A POST from a browser must come from a page of this server (same host and port)."""
    origin = headers.get("origin")
    if origin is None:
        return
    parts = urlsplit(origin)
    if origin == "null" or parts.netloc.lower() != headers.get("host", "").lower():
        raise HttpError(403, f"cross-origin request from {origin[:80]!r} refused")


async def read_body(request: Any, limit: int = MAX_BODY_BYTES) -> bytes:
    """The request body, refused with 413 past ``limit`` bytes (checked while reading)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HttpError(413, f"body of {int(declared):,} bytes; at most {limit:,}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HttpError(413, f"body over {limit:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


class Runner:
    """Runs blocking planning work off the event loop with a time bound per request.

    Python cannot stop a thread: a plan past its time is answered 504 and finishes in the
    background; at most :data:`MAX_IN_FLIGHT` such runs at once, then requests get 503."""

    def __init__(self, timeout_s: float = PLAN_TIMEOUT_S, workers: int = 2) -> None:
        self.timeout_s = timeout_s
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="plan")
        self._busy = 0
        self._lock = threading.Lock()

    def _done(self, _fut: Any) -> None:
        with self._lock:
            self._busy -= 1

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        with self._lock:
            if self._busy >= MAX_IN_FLIGHT:
                raise HttpError(503, "the server is busy with earlier plans; try again shortly")
            self._busy += 1
        fut = self._pool.submit(fn, *args)
        fut.add_done_callback(self._done)
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), self.timeout_s)
        except TimeoutError:
            raise HttpError(504, f"planning took longer than {self.timeout_s:g} s") from None
        except UserError as exc:
            raise HttpError(422, exc.problems) from None


def parse_form(body: bytes) -> dict[str, str]:
    """An urlencoded form body (what htmx and a plain form post): first value of each name."""
    from urllib.parse import parse_qsl

    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=200)
    except (UnicodeDecodeError, ValueError):
        raise HttpError(400, "the form is not UTF-8 urlencoded text with at most 200 fields") from None
    out: dict[str, str] = {}
    for k, v in pairs:
        out.setdefault(k, v)
    return out
