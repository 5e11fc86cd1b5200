"""Child processes: workers that end with the process that started them, and a value computed
ahead in a forked child (:class:`Ahead`).

A pool worker blocked on its pipe may never see the end of it when its parent is killed: a
forked sibling can hold a copy of the parent's side, so ``kill -9`` of a sweep, a trace
parse or the web server would leave its workers waiting for good (each ~130 MB). Each worker
runs :func:`exit_with_parent` first: a daemon thread watches the parent's process id, and a
worker whose parent is gone (re-parented) exits.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

#: seconds between two looks at the parent's id
WATCH_PERIOD_S = 1.0


def exit_with_parent(period_s: float = WATCH_PERIOD_S, parent: int | None = None) -> None:
    """End this process when its parent is gone: usable as a pool's ``initializer``. The
    parent is read here unless given, so a pool started through a fork server watches the fork
    server (which itself ends with the process that started it). A forked child passes the
    id its parent had before the fork: read after it, a parent killed meanwhile would already
    be the process that adopted the child."""
    if parent is None:
        parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period_s)
        os._exit(0)

    threading.Thread(target=watch, name="clustertwin-parent-watch", daemon=True).start()


def watch_args(ctx: Any) -> tuple[Any, ...]:
    """``initargs`` for :func:`exit_with_parent` as the initializer of a pool made with the
    multiprocessing context ``ctx``: this process's id, taken now, where the workers are its own
    children (fork, spawn: a parent killed before a worker first looks is still seen); nothing
    under a fork server (the workers' parent is the server, read in the worker)."""
    if ctx.get_start_method() in ("fork", "spawn"):
        return (WATCH_PERIOD_S, os.getpid())
    return ()


#: what :meth:`Ahead.get` answers when it has no value for the key asked
MISSING = object()


def _compute_and_send(fn: Callable[[], Any], fd: int, parent: int) -> None:
    """The child's side of :class:`Ahead`: ``fn()`` pickled into the pipe ``fd``. Any failure
    is only the missing value (the parent computes it itself and meets the error there, with
    its own traceback); nothing else is written. The child ends as soon as ``parent`` does."""
    exit_with_parent(0.2, parent)
    try:
        out: tuple[bool, Any] = (True, fn())
    except BaseException:  # noqa: BLE001 (a Ctrl-C included: the parent sees it too)
        out = (False, None)
    try:
        data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 (a value that does not pickle)
        data = pickle.dumps((False, None))
    with os.fdopen(fd, "wb") as pipe:
        pipe.write(data)


def can_fork_ahead() -> bool:
    """Whether :class:`Ahead` may start a child here: Linux, and two or more usable CPUs."""
    return sys.platform.startswith("linux") and len(os.sched_getaffinity(0)) >= 2


class Ahead:
    """``fn()`` computed in a forked child while this process goes on with other work: on a
    machine with a core to spare, the wall time of the two overlaps. :meth:`get` with the same
    ``key`` waits for the value; a child that failed, was killed, or computed another key gives
    :data:`MISSING`, and the caller computes the value itself (so an answer never depends on
    whether it came from the child). :meth:`close` stops a child whose value was not read.

    A bare ``os.fork`` and a pipe: the child inherits everything imported and built so far (no
    pickled arguments, no interpreter started) and leaves through ``os._exit`` (no exit
    handlers, no buffered output of this process written twice). Only on Linux (a forked child
    of a process that has loaded macOS system frameworks is not safe), from a process with one
    thread (a lock another thread holds at the fork stays held in the child), where the process
    may start children (not a daemonic pool worker) and at least two CPUs are usable:
    :meth:`start` answers None otherwise."""

    def __init__(self, key: Hashable, fn: Callable[[], Any]) -> None:
        self.key = key
        read, write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                os.close(read)
                _compute_and_send(fn, write, parent)
            finally:
                os._exit(0)
        os.close(write)  # the child's end: a child that dies unheard is EOF here, not a hang
        self._pid: int | None = pid
        self._read = read

    @classmethod
    def start(cls, key: Hashable, fn: Callable[[], Any]) -> Ahead | None:
        """An :class:`Ahead` computing ``fn()``, or None where a child cannot help."""
        if not can_fork_ahead() or threading.active_count() > 1:
            # another thread could hold a lock the child then waits on for good
            return None
        # a daemonic multiprocessing worker (a pool's) has that module loaded; any other
        # process is no such worker and need not import it to know
        mp = sys.modules.get("multiprocessing.process")
        if mp is not None and mp.current_process().daemon:
            return None
        try:
            return cls(key, fn)
        except OSError:  # no process or pipe to be had: compute in place
            return None

    def get(self, key: Hashable) -> Any:
        """The child's value of ``key`` (waiting for it), else :data:`MISSING`. Once only."""
        if self._pid is None or key != self.key:
            return MISSING
        try:
            with os.fdopen(os.dup(self._read), "rb") as pipe:
                ok, value = pickle.loads(pipe.read())
        except Exception:  # noqa: BLE001 (EOF: the child died; any unpickling failure: computed here)
            ok, value = False, None
        self.close()
        return value if ok else MISSING

    def close(self) -> None:
        """Stop the child (if its value was never read) and reap it."""
        if self._pid is None:
            return
        pid, self._pid = self._pid, None
        try:
            if os.waitpid(pid, os.WNOHANG) == (0, 0):  # still running: not needed any more
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
        except ChildProcessError:  # reaped already
            pass
        os.close(self._read)
