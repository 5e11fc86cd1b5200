"""What keeps ``clustertwin serve`` safe by default: the Host and Origin allow-list, request
body size and read time, and errors as JSON (never a traceback).

The server is a local tool: it binds 127.0.0.1 unless told otherwise. A page on another site
can still make the browser send requests to it, directly (CSRF) or through a DNS name it points
at 127.0.0.1 (DNS rebinding). So the Host header must name this server exactly: the address it
is bound to, ``localhost`` or ``[::1]``, with the port it listens on (plus names given with
``--allow-host``), compared after parsing (no prefix or suffix match); and a state-changing
request from a browser (it carries ``Origin``) must come from one of those same origins.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

from clustertwin.errors import Problem

MAX_BODY_BYTES = 1_000_000  #: a scenario is a few kB; the YAML pane at most this
MAX_HEADER_BYTES = 16 * 1024  #: all request headers together (uvicorn's h11 limit too, in .conn)
BODY_TIMEOUT_S = 20.0  #: time to receive a whole request body before 408
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
EVERY_INTERFACE = ("", "0.0.0.0", "::", "[::]")
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")


class HttpError(Exception):
    """A request the server refuses: status code, problems for the JSON body, extra headers."""

    def __init__(self, status: int, problems: list[Problem] | str, retry_after: int | None = None) -> None:
        if isinstance(problems, str):
            problems = [Problem("request", "", problems)]
        self.status = status
        self.problems = problems
        self.headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        super().__init__(problems[0].message if problems else str(status))


def is_loopback(host: str) -> bool:
    """Whether ``host`` (as given to ``--host``) is a loopback address or ``localhost``."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def canonical_name(name: str) -> str | None:
    """A host name or IP literal in one spelling (IPv6 in brackets, compressed; names lower
    case), or None when it is neither a DNS name nor an address."""
    if name.startswith("[") and name.endswith("]"):
        try:
            return f"[{ipaddress.IPv6Address(name[1:-1]).compressed}]"
        except ValueError:
            return None
    if ":" in name:  # a bare IPv6 address (as given to --host)
        return canonical_name(f"[{name}]")
    try:
        return str(ipaddress.IPv4Address(name))
    except ValueError:
        pass
    low = name.lower()
    return low if len(low) <= 253 and _NAME.fullmatch(low) else None


def parse_authority(text: str, default_port: int = 80) -> tuple[str, int] | None:
    """``"Host:port"`` as (canonical name, port); None for anything else (userinfo, paths,
    spaces, a zone id, an empty or out-of-range port, a name that is not a DNS name)."""
    if not text or len(text) > 300:
        return None
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        host, rest = text[:end + 1], text[end + 1:]
    else:
        host, sep, port = text.partition(":")
        rest = sep + port
    name = canonical_name(host)
    if name is None:
        return None
    if not rest:
        return name, default_port
    digits = rest[1:]
    if rest[0] != ":" or not digits.isascii() or not digits.isdigit() or len(digits) > 5 or not 0 < int(digits) < 65536:
        return None
    return name, int(digits)


class Allowed:
    """The names this server answers to, each with the port it listens on.

    ``bound``: the ``--host`` address. Bound to one address: that address, ``localhost``,
    ``127.0.0.1`` and ``[::1]``. Bound to every interface: also the local address each
    connection arrived at (an IP literal cannot be rebound). ``extra``: more names
    (``--allow-host``), exactly as given."""

    def __init__(self, bound: str = "127.0.0.1", port: int | None = None, extra: tuple[str, ...] = ()) -> None:
        self.port = port
        self.every = bound.strip() in EVERY_INTERFACE
        names = {"localhost", "127.0.0.1", "[::1]"}
        if not self.every:
            names.add(canonical_name(bound.strip()) or bound.strip().lower())
        names |= {n for n in (canonical_name(e.strip()) for e in extra) if n}
        self.names = frozenset(names)

    def ok(self, authority: tuple[str, int] | None, local: tuple[str, int] | None) -> bool:
        if authority is None:
            return False
        name, port = authority
        want = self.port if self.port is not None else (local[1] if local else None)
        if want is not None and port != want:
            return False
        if name in self.names:
            return True
        return bool(self.every and local and canonical_name(str(local[0])) == name)


def check_host(headers: Any, allowed: Allowed, local: tuple[str, int] | None = None) -> None:
    """The Host header must name this server exactly (see :class:`Allowed`): a DNS name that
    an attacker points at this address does not."""
    raw = headers.get("host", "")
    if not allowed.ok(parse_authority(raw.strip()), local):
        raise HttpError(400, f"Host {raw[:60]!r} is not this server's address; use "
                        "http://localhost:PORT/ or the address it listens on")


def check_origin(headers: Any, allowed: Allowed, local: tuple[str, int] | None = None) -> None:
    """A state-changing request from a browser must come from a page of this server. A script
    sends no Origin; a browser always does on a cross-site request (and Sec-Fetch-Site)."""
    origin = headers.get("origin")
    if headers.get("sec-fetch-site", "").lower() == "cross-site":
        raise HttpError(403, "cross-origin request refused (Sec-Fetch-Site: cross-site)")
    if origin is None:
        return
    refused = HttpError(403, f"cross-origin request from {origin[:80]!r} refused")
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        raise refused from None
    if parts.scheme != "http" or parts.path or parts.query or parts.fragment or "@" in parts.netloc:
        raise refused
    if not allowed.ok(parse_authority(parts.netloc), local):
        raise refused


async def read_body(request: Any, limit: int = MAX_BODY_BYTES, timeout_s: float | None = None) -> bytes:
    """The request body, refused with 413 past ``limit`` bytes (checked while reading) and with
    408 when it does not arrive whole within ``timeout_s`` (a slow client holds no slot)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise HttpError(413, f"body of {int(declared):,} bytes; at most {limit:,}")
    timeout_s = BODY_TIMEOUT_S if timeout_s is None else timeout_s
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise HttpError(413, f"body over {limit:,} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise HttpError(408, f"the request body did not arrive within {timeout_s:g} s") from None
    return b"".join(chunks)


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
