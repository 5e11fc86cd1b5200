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
import struct
import sys
import threading
import time
from collections.abc import Callable, Hashable, Sequence
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
#: a value's frame on the pipe: its pickle's length, then the pickle
_LENGTH = struct.Struct("<Q")


def _compute_and_send(jobs: Sequence[tuple[Hashable, Callable[[], Any]]], fd: int,
                      parent: int) -> None:
    """The child's side of :class:`Ahead`: each job's ``fn()`` in order, pickled into the pipe
    ``fd`` as one frame each, sent as soon as it is computed. A job that fails sends only its
    value's absence (the parent computes it itself and meets the error there, with its own
    traceback) and the next job runs. The child ends as soon as ``parent`` does."""
    exit_with_parent(0.2, parent)
    with os.fdopen(fd, "wb") as pipe:
        for _, fn in jobs:
            try:
                out: tuple[bool, Any] = (True, fn())
            except Exception:  # noqa: BLE001
                out = (False, None)
            try:
                data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 (a value that does not pickle)
                data = pickle.dumps((False, None))
            pipe.write(_LENGTH.pack(len(data)) + data)
            pipe.flush()


def can_fork_ahead() -> bool:
    """Whether :class:`Ahead` may start a child here: Linux, and two or more usable CPUs."""
    return sys.platform.startswith("linux") and len(os.sched_getaffinity(0)) >= 2


class Ahead:
    """Values computed in a forked child while this process goes on with other work: on a
    machine with a core to spare, the wall time of the two overlaps. The child computes its
    jobs (``(key, fn)`` pairs) in order and sends each value as it is done. :meth:`get` with a
    job's key waits for that value; a job that failed, a child that was killed, or a key that
    is no job's gives :data:`MISSING`, and the caller computes the value itself (so an answer
    never depends on whether it came from the child). :meth:`close` stops a child whose values
    are no longer wanted.

    A bare ``os.fork`` and a pipe: the child inherits everything imported and built so far (no
    pickled arguments, no interpreter started) and leaves through ``os._exit`` (no exit
    handlers, no buffered output of this process written twice). Only on Linux (a forked child
    of a process that has loaded macOS system frameworks is not safe), from a process with one
    thread (a lock another thread holds at the fork stays held in the child), where the process
    may start children (not a daemonic pool worker) and at least two CPUs are usable:
    :meth:`start` answers None otherwise."""

    def __init__(self, jobs: Sequence[tuple[Hashable, Callable[[], Any]]]) -> None:
        read, write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                os.close(read)
                _compute_and_send(jobs, write, parent)
            finally:
                os._exit(0)
        os.close(write)  # the child's end: a child that dies unheard is EOF here, not a hang
        self._pid: int | None = pid
        self._pipe = os.fdopen(read, "rb")
        self._unread = [key for key, _ in jobs]  #: the jobs whose frames are still in the pipe
        self._held: dict[Hashable, Any] = {}  #: values read on the way to a later one

    @classmethod
    def start(cls, jobs: Sequence[tuple[Hashable, Callable[[], Any]]]) -> Ahead | None:
        """An :class:`Ahead` computing ``jobs`` (in order), or None where a child cannot help
        (or there is nothing to compute)."""
        if not jobs or not can_fork_ahead() or threading.active_count() > 1:
            # another thread could hold a lock the child then waits on for good
            return None
        # a daemonic multiprocessing worker (a pool's) has that module loaded; any other
        # process is no such worker and need not import it to know
        mp = sys.modules.get("multiprocessing.process")
        if mp is not None and mp.current_process().daemon:
            return None
        try:
            return cls(jobs)
        except OSError:  # no process or pipe to be had: compute in place
            return None

    def get(self, key: Hashable) -> Any:
        """The child's value of ``key`` (waiting for it), else :data:`MISSING`. Once per key;
        the values of jobs before it that were not asked for yet are kept for their turn."""
        if key in self._held:
            return self._held.pop(key)
        if key not in self._unread:
            return MISSING
        while self._unread:
            k = self._unread.pop(0)
            try:
                (size,) = _LENGTH.unpack(self._pipe.read(_LENGTH.size))
                ok, value = pickle.loads(self._pipe.read(size))
            except Exception:  # noqa: BLE001 (EOF: the child died; any unpickling failure)
                self.close()  # nothing more will come: every value left is computed here
                return MISSING
            if not self._unread:
                self.close()  # the last value: the child is done
            if k == key:
                return value if ok else MISSING
            if ok:
                self._held[k] = value
        return MISSING

    def close(self) -> None:
        """Stop the child (if it is still computing) and reap it."""
        self._unread = []
        if self._pid is None:
            return
        pid, self._pid = self._pid, None
        try:
            if os.waitpid(pid, os.WNOHANG) == (0, 0):  # still running: not needed any more
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
        except ChildProcessError:  # reaped already
            pass
        self._pipe.close()
