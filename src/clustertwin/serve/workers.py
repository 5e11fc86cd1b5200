"""Planning processes for ``clustertwin serve``: each plan runs in a worker process with a cap
on its address space (``RLIMIT_AS``) and a wall-clock limit, so one scenario that asks for
millions of spares cannot take the server or other users' requests down with it.

A worker is a spawned process holding its own warm :class:`~clustertwin.serve.engine.Engine`;
it answers one job at a time over a pipe. Past its time the parent kills it; past its memory
it raises MemoryError, says so and exits (or the kernel ends it). Either way the slot starts a
fresh worker and the request gets a JSON error that names the limit.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("clustertwin.serve")

MEMORY_CAP_MB = 1024  #: address space of one planning process (the default plan peaks ~250 MB)
STARTUP_S = 120.0  #: time a fresh worker may take to import the stages and load the catalog
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass(frozen=True)
class Outcome:
    """What a job came to: ``kind`` is ok / user / memory / timeout / died / bug."""

    kind: str
    value: Any = None


def cap_memory(cap_bytes: int) -> None:
    """Cap this process's address space (and so each process it starts) at ``cap_bytes``, and
    ask for one BLAS thread (each thread's pool reserves address space); call it before numpy
    is imported."""
    for var in _THREAD_VARS:
        os.environ.setdefault(var, "1")
    try:
        import resource
    except ImportError:  # not on this platform: the time limit still holds
        return
    if cap_bytes > 0:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = cap_bytes if hard == resource.RLIM_INFINITY else min(cap_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _job(engine: Any, job: tuple[Any, ...]) -> Any:
    kind, doc, source = job[:3]
    if kind == "plan":
        return engine.plan(doc, source)
    if kind == "file":  # a download (serve/files.py): the CLI's bytes for the planned scenario
        from clustertwin.serve.files import make_file

        return make_file(engine.plan(doc, source), engine.catalog, job[3])
    if kind == "problems":
        return [_plain(p) for p in engine.problems(doc, source)]
    if kind == "track":  # the track page (serve/track_page.py): the run's logs against its plan
        from clustertwin.serve.track_page import track_job

        return track_job(engine, job)
    raise ValueError(f"unknown job {kind!r}")


def _answer(engine: Any, job: tuple[Any, ...]) -> tuple[str, Any]:
    from clustertwin.errors import UserError

    try:
        return "ok", _job(engine, job)
    except UserError as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, MemoryError):
            return "memory", None
        return "user", [_plain(p) for p in exc.problems]
    except MemoryError:
        return "memory", None
    except RecursionError:
        from clustertwin.errors import Problem

        return "user", [Problem(job[2], "", "the scenario is nested too deeply to plan")]
    except Exception as exc:  # noqa: BLE001 - one line in the server log; the user gets a 500 without details
        return "bug", f"{type(exc).__name__} at {where(exc)}"


#: the shape of :func:`clustertwin.plan.cannot_compute`'s message: the exception's own text inside
_COMPUTE = re.compile(r"cannot compute this scenario \((\w+): [^\n]*\); check the values it uses")


def plain_message(message: str) -> str:
    """A stage's "cannot compute" message with the exception's name and text (which speak of
    internals, e.g. ``math range error``) replaced by what it means for the user."""
    def said(m: re.Match[str]) -> str:
        name = m.group(1)
        what = ("it ran out of memory" if name == "MemoryError" else
                "a number too large to compute with" if name in ("OverflowError", "ZeroDivisionError",
                                                                  "ArithmeticError", "FloatingPointError")
                else "a value outside what its model computes")
        return f"cannot compute this scenario ({what}); check the values it uses"

    return _COMPUTE.sub(said, message)


def _plain(problem: Any) -> Any:
    from clustertwin.errors import Problem

    text = plain_message(problem.message)
    return problem if text == problem.message else Problem(problem.source, problem.path, text)


def where(exc: BaseException) -> str:
    """``file:line`` where an exception was raised: for the server's one-line log entry."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb else "?"


def worker_main(conn: Any, catalog_dirs: tuple[str, ...], cap_bytes: int, warm: tuple[Any, ...] | None,
                server: int | None = None) -> None:
    """The worker process: cap memory, load the engine, answer jobs until the pipe closes;
    ``server``: the server's process id, taken before the worker started (see
    :func:`clustertwin.children.exit_with_parent`)."""
    import signal

    from clustertwin.children import exit_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    exit_with_parent(parent=server)  # kill -9 of the server: no worker left behind
    cap_memory(cap_bytes)
    from clustertwin.serve.engine import Engine

    engine = Engine(catalog_dirs, cache_size=2)
    conn.send(("ready", _answer(engine, warm) if warm else None))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        kind, value = _answer(engine, job)
        try:
            conn.send((kind, value))
        except MemoryError:
            kind = "memory"
        except (BrokenPipeError, OSError):
            return
        if kind == "memory":  # the heap may be left fragmented past the cap: start afresh
            conn.close()
            os._exit(0)


def _context() -> Any:
    """Fork while the server is still one thread (at start-up: the worker begins with the
    stages imported and the catalog loaded); spawn once it has threads (a replacement)."""
    import multiprocessing

    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        import clustertwin.plan  # noqa: F401 - imported once here, inherited by the worker

        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _mapped_bytes() -> int:
    """This process's address space now (VmSize), 0 where /proc does not say."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


class Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, catalog_dirs: tuple[str, ...], cap_bytes: int, warm: tuple[Any, ...] | None) -> None:
        ctx = _context()
        if cap_bytes > 0 and ctx.get_start_method() == "fork":
            # a forked worker starts with the server's mappings (shared, copy-on-write): the cap
            # is the headroom above them, as a spawned worker's is above a bare interpreter
            cap_bytes += _mapped_bytes()
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker_main, args=(child, catalog_dirs, cap_bytes, warm, os.getpid()),
                                daemon=True, name="clustertwin-plan")
        self.proc.start()
        child.close()
        self.ready = False
        self.warm_answer: tuple[str, Any] | None = None

    def wait_ready(self, timeout_s: float) -> Outcome | None:
        """None once the worker is up; an Outcome when it did not come up."""
        if self.ready:
            return None
        got = self._receive(timeout_s)
        if got.kind != "ok":
            return got
        self.ready = True
        self.warm_answer = got.value[1] if isinstance(got.value, tuple) else None
        return None

    def _receive(self, timeout_s: float) -> Outcome:
        try:
            if not self.conn.poll(timeout_s):
                return Outcome("timeout")
            return Outcome("ok", self.conn.recv())
        except (EOFError, OSError):
            self.proc.join(1)
            return Outcome("died", self.proc.exitcode)
        except MemoryError:  # the parent could not hold the reply
            return Outcome("memory")

    def call(self, job: tuple[Any, ...], timeout_s: float) -> Outcome:
        try:
            self.conn.send(job)
        except (BrokenPipeError, OSError):
            return Outcome("died", self.proc.exitcode)
        got = self._receive(timeout_s)
        return Outcome(*got.value) if got.kind == "ok" else got

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


class Slot:
    """A place in the pool: one worker at a time, replaced when it fails."""

    def __init__(self, catalog_dirs: tuple[str, ...], cap_bytes: int, warm: tuple[Any, ...] | None) -> None:
        self._args = (catalog_dirs, cap_bytes)
        self._lock = threading.Lock()
        self.worker = Worker(catalog_dirs, cap_bytes, warm)
        self.restarts = 0

    def warm_answer(self) -> tuple[str, Any] | None:
        with self._lock:
            failed = self.worker.wait_ready(STARTUP_S)
            if failed is not None:
                self._replace(failed)
                return None
            return self.worker.warm_answer

    def call(self, job: tuple[Any, ...], timeout_s: float) -> Outcome:
        """Run a job (blocking): the worker's answer, or why there is none."""
        with self._lock:
            failed = self.worker.wait_ready(STARTUP_S)
            if failed is not None:
                self._replace(failed)
                return Outcome("died", None)
            got = self.worker.call(job, timeout_s)
            if got.kind in ("timeout", "died", "memory"):
                self._replace(got)
            return got

    def _replace(self, why: Outcome) -> None:
        self.restarts += 1
        log.warning("plan worker %s (pid %s): %s; starting a fresh one", self.restarts,
                    self.worker.proc.pid, why.kind)
        self.worker.stop()
        self.worker = Worker(*self._args, None)

    def stop(self) -> None:
        with self._lock:
            self.worker.stop()

