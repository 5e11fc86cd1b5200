"""Connection limits for ``clustertwin serve`` (uvicorn): how many, how slow, how loud.

- At most :data:`MAX_CONNECTIONS` open connections: one more closes the connection that has
  waited longest for its request head (a slow client gives way), or is itself closed when every
  connection is being answered. Past :data:`LIMIT_CONCURRENCY` connections or requests, uvicorn
  answers 503.
- A connection must send a complete request head within :data:`HEADER_TIMEOUT_S` of opening
  (and of its previous answer): a client that trickles its headers in holds no descriptor for
  long. Headers are at most :data:`MAX_HEADER_BYTES`; an idle keep-alive ends after
  :data:`KEEP_ALIVE_S`. (The body's time is bounded in :func:`.guard.read_body`.)
- The log is bounded: a refused connection or a message the event loop would print with a
  traceback is one line, and each kind at most once per :data:`LOG_EVERY_S` (with a count of
  those left out).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from clustertwin.serve.guard import MAX_HEADER_BYTES

MAX_CONNECTIONS = 256
LIMIT_CONCURRENCY = MAX_CONNECTIONS + 1  #: requests in progress (the connection cap acts first)
HEADER_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
LOG_EVERY_S = 10.0
OPEN_FILES = 4096  #: soft limit on descriptors the server asks for (under the hard limit)

log = logging.getLogger("clustertwin.serve")


class OneLinePerKind(logging.Filter):
    """Let a record through as one line (no traceback), each kind at most once per ``every_s``
    seconds; the next one that passes says how many were left out."""

    def __init__(self, every_s: float = LOG_EVERY_S) -> None:
        super().__init__()
        self.every_s = every_s
        self._last: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        kind = f"{record.name}:{str(record.msg)[:60]}"
        now = time.monotonic()
        with self._lock:
            last, dropped = self._last.get(kind, (-1e9, 0))
            if now - last < self.every_s:
                self._last[kind] = (last, dropped + 1)
                return False
            self._last[kind] = (now, 0)
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(exc).__name__}: {str(exc)[:120]})"
            record.args = None
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        if dropped:
            record.msg = f"{record.getMessage()} [{dropped} like it in the last {self.every_s:g} s not shown]"
            record.args = None
        return True


def bound_logs(every_s: float = LOG_EVERY_S) -> OneLinePerKind:
    """Put the one-line, rate-limited filter on the loggers that a flood of bad connections
    writes to (the event loop's, uvicorn's, ours), on each logger and its handlers."""
    flt = OneLinePerKind(every_s)
    for name in ("asyncio", "uvicorn", "uvicorn.error", "clustertwin.serve"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, OneLinePerKind) for f in logger.filters):
            logger.addFilter(flt)
    return flt


def raise_open_files(want: int = OPEN_FILES) -> int:
    """Raise the soft limit on open descriptors toward ``want`` (never past the hard limit)."""
    try:
        import resource
    except ImportError:
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


def guarded_protocol(max_connections: int = MAX_CONNECTIONS, header_timeout_s: float = HEADER_TIMEOUT_S) -> Any:
    """uvicorn's h11 protocol with a connection cap and a deadline on each request head."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11(H11Protocol):  # type: ignore[misc]
        _head_timer: Any = None

        _since = 0.0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                idle = [c for c in self.connections if c is not self and c._waiting() and not c.transport.is_closing()]
                if not idle:  # every connection is being answered: refuse this one
                    log.warning("refused a connection: %d open (at most %d)", len(self.connections) - 1,
                                max_connections)
                    transport.close()
                    return
                oldest = min(idle, key=lambda c: c._since)  # a slow client gives way to a new one
                log.warning("closed the longest-waiting connection: %d open (at most %d)",
                            len(self.connections) - 1, max_connections)
                oldest.transport.close()
            self._arm()

        def _waiting(self) -> bool:
            """Waiting for a request head (none yet, or the last one answered)."""
            return self.cycle is None or self.cycle.response_complete

        def _arm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            self._since = self.loop.time()
            self._head_timer = self.loop.call_later(header_timeout_s, self._head_late)

        def _head_late(self) -> None:
            self._head_timer = None
            if self._waiting() and not self.transport.is_closing():
                log.warning("closed a connection that sent no complete request in %g s", header_timeout_s)
                self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            super().connection_lost(exc)

    return GuardedH11


def server_config(app: Any, host: str, port: int, **kw: Any) -> Any:
    """A uvicorn Config with every limit above (``kw`` overrides, e.g. for tests)."""
    import uvicorn

    limits = {"max_connections": kw.pop("max_connections", MAX_CONNECTIONS),
              "header_timeout_s": kw.pop("header_timeout_s", HEADER_TIMEOUT_S)}
    opts = {"log_level": "warning", "limit_concurrency": LIMIT_CONCURRENCY, "timeout_keep_alive": KEEP_ALIVE_S,
            "h11_max_incomplete_event_size": MAX_HEADER_BYTES, "backlog": 512, "access_log": False, **kw}
    return uvicorn.Config(app, host=host, port=port, http=guarded_protocol(**limits), **opts)
