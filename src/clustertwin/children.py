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
import sys
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

#: seconds between two looks at the parent's id
WATCH_PERIOD_S = 1.0


def exit_with_parent(period_s: float = WATCH_PERIOD_S) -> None:
    """End this process when its parent (as of this call) is gone: usable as a pool's
    ``initializer``. The parent is read here, not passed in, so a pool started through a fork
    server watches the fork server (which itself ends with the process that started it)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period_s)
        os._exit(0)

    threading.Thread(target=watch, name="clustertwin-parent-watch", daemon=True).start()


#: what :meth:`Ahead.get` answers when it has no value for the key asked
MISSING = object()


def _compute_and_send(fn: Callable[[], Any], send: Any) -> None:
    """The child's side of :class:`Ahead`: any failure is only the missing value (the parent
    computes it again itself and meets the error there, with its own traceback)."""
    exit_with_parent(0.2)
    try:
        out: tuple[bool, Any] = (True, fn())
    except BaseException:  # noqa: BLE001 (a Ctrl-C included: the parent sees it too)
        out = (False, None)
    try:
        send.send(out)
    except BaseException:  # noqa: BLE001 (the parent is gone or the value does not pickle)
        pass


def can_fork_ahead() -> bool:
    """Whether :class:`Ahead` may start a child here: Linux, and two or more usable CPUs."""
    return sys.platform.startswith("linux") and len(os.sched_getaffinity(0)) >= 2


class Ahead:
    """``fn()`` computed in a forked child while this process goes on with other work: on a
    machine with a core to spare, the wall time of the two overlaps. :meth:`get` with the same
    ``key`` waits for the value; a child that failed, was killed, or computed another key gives
    :data:`MISSING`, and the caller computes the value itself (so an answer never depends on
    whether it came from the child). :meth:`close` stops a child whose value was not read.

    Only on Linux (a forked child of a process that has loaded macOS system frameworks is not
    safe), where the process may start children (not a daemonic pool worker) and at least two
    CPUs are usable: :meth:`start` answers None otherwise."""

    def __init__(self, key: Hashable, fn: Callable[[], Any]) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        self.key = key
        self._recv, send = ctx.Pipe(duplex=False)
        self._proc: Any = ctx.Process(target=_compute_and_send, args=(fn, send),
                                      name="clustertwin-ahead", daemon=True)
        self._proc.start()
        send.close()  # the child's end: a child that dies unheard is EOF here, not a hang

    @classmethod
    def start(cls, key: Hashable, fn: Callable[[], Any]) -> Ahead | None:
        """An :class:`Ahead` computing ``fn()``, or None where a child cannot help."""
        if not can_fork_ahead():
            return None
        import multiprocessing

        if multiprocessing.current_process().daemon:
            return None
        try:
            return cls(key, fn)
        except OSError:  # no process or pipe to be had: compute in place
            return None

    def get(self, key: Hashable) -> Any:
        """The child's value of ``key`` (waiting for it), else :data:`MISSING`. Once only."""
        if self._proc is None or key != self.key:
            return MISSING
        try:
            ok, value = self._recv.recv()
        except Exception:  # noqa: BLE001 (EOF: the child died; any unpickling failure: computed here)
            ok, value = False, None
        self.close()
        return value if ok else MISSING

    def close(self) -> None:
        """Stop the child (if its value was never read) and reap it."""
        if self._proc is None:
            return
        if self._proc.is_alive():
            self._proc.terminate()
        self._proc.join()
        self._recv.close()
        self._proc = None
