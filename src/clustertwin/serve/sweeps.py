"""The sweep page: axes from a form, run in the background on the local process pool (or Ray)
as ``clustertwin sweep`` runs them, a progress bar polled by htmx, then a sortable table and a
Pareto plot (run cost against wall-clock days) with every point labelled.

A sweep runs in a process of its own, under the same memory cap as a plan (``RLIMIT_AS`` is
inherited by the pool it starts: each process of it is capped) and a wall-clock limit
(:data:`SWEEP_TIMEOUT_S`); past either it is stopped and the page says which limit. The sweep
process leads a process group of its own, which the pool it starts joins: stopping a sweep
(time limit, cancel, server shutdown) kills the whole group, so no pool worker outlives it
(killed alone, the sweep process left its workers blocked on their pipes for good)."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

from clustertwin.errors import Problem, UserError

MAX_POINTS = 64  #: scenarios one sweep from the page may plan
MAX_AXES = 3
MAX_RUNNING = 2
KEEP = 16  #: finished sweeps remembered
SWEEP_TIMEOUT_S = 900.0  #: one sweep's wall-clock time before its process is stopped
COLUMNS = ("decision.mode", "decision.trained_by", "decision.cost_usd", "training.days", "reliability.effective_days", "training.mfu", "economics.capex_usd",
           "economics.run_cost_owned_usd", "design.power.facility_kw")


@dataclass
class Job:
    id: str
    title: str
    keys: list[str]
    labels: list[str]
    assignments: list[dict[str, Any]]
    total: int
    done: int = 0
    rows: list[dict[str, Any]] | None = None
    error: str = ""
    objective: str = "run_cost_owned_usd"  #: a key of clustertwin.sweep.choose.OBJECTIVES
    cancelled: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    _table: Any = None

    def table(self) -> Any:
        """The sweep table as ``clustertwin sweep`` builds it (sweep.csv, sweep.parquet)."""
        from clustertwin.sweep.table import build_table

        if self._table is None and self.rows is not None:
            self._table = build_table(self.keys, self.assignments, self.rows, self.labels)
        return self._table

    @property
    def finished(self) -> bool:
        return self.rows is not None or bool(self.error)


class SweepBoard:
    """The sweeps this server runs or ran (the last :data:`KEEP`)."""

    def __init__(self, catalog_dirs: tuple[str, ...] = (), memory_mb: int = 0,
                 timeout_s: float = SWEEP_TIMEOUT_S) -> None:
        self.catalog_dirs = catalog_dirs
        self.memory_mb = memory_mb
        self.timeout_s = timeout_s
        self.jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._procs: set[Any] = set()
        self._threads: list[threading.Thread] = []

    def cancel(self, job: Job) -> None:
        """Stop a running sweep (its process and the pool it started)."""
        job.cancelled = True
        with self._lock:
            procs = [p for p in self._procs if p.name == f"clustertwin-sweep-{job.id}"]
        for proc in procs:
            stop_group(proc)

    def start(self, sw: Any, executor: str, objective: str = "run_cost_owned_usd") -> Job:
        with self._lock:
            if sum(not j.finished for j in self.jobs.values()) >= MAX_RUNNING:
                from clustertwin.serve.guard import HttpError

                raise HttpError(503, f"{MAX_RUNNING} sweeps are running; wait for one to finish",
                                retry_after=30)
            job = Job(secrets.token_hex(8), sw.title, list(sw.keys), [p.label for p in sw.points],
                      [p.assignments for p in sw.points], len(sw.points), objective=objective)
            self.jobs[job.id] = job
            for old in list(self.jobs)[:-KEEP]:
                if self.jobs[old].finished:
                    del self.jobs[old]
        thread = threading.Thread(target=self._run, args=(job, sw, executor), daemon=True,
                                  name=f"sweep-{job.id}")
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()
        return job

    def _run(self, job: Job, sw: Any, executor: str) -> None:
        import multiprocessing

        from clustertwin.sweep.api import prepare

        try:
            skip = prepare(sw, self.catalog_dirs)
        except UserError as exc:
            job.error = "; ".join(exc.lines())
            return
        ctx = multiprocessing.get_context("spawn")  # the server has threads: never fork it
        conn, child = ctx.Pipe(duplex=False)
        # not a daemon: the sweep starts a pool of its own; close() stops it with the server
        proc = ctx.Process(target=sweep_process, daemon=False, name=f"clustertwin-sweep-{job.id}",
                           args=(child, [p.doc for p in sw.points], sw.source, self.catalog_dirs,
                                 executor, skip, self.memory_mb << 20))
        proc.start()
        child.close()
        with self._lock:
            self._procs.add(proc)
        if job.cancelled:  # cancelled while it was being prepared
            stop_group(proc)
        try:
            self._follow(job, conn, proc)
        finally:
            stop_group(proc)      # also the pool of a sweep process that died on its own
            proc.join(5)
            conn.close()
            with self._lock:
                self._procs.discard(proc)

    def close(self) -> None:
        """Stop the sweeps still running (the server is stopping), and wait for their threads
        to let their processes go."""
        with self._lock:
            procs, threads = list(self._procs), list(self._threads)
        for proc in procs:
            stop_group(proc)
            proc.join(5)
            with self._lock:
                self._procs.discard(proc)
        for thread in threads:
            thread.join(10)

    def _follow(self, job: Job, conn: Any, proc: Any) -> None:
        """Read the sweep process's progress and rows until it ends or runs out of time."""
        import time

        deadline = time.monotonic() + self.timeout_s
        while True:
            left = deadline - time.monotonic()
            try:
                if left <= 0 or not conn.poll(left):
                    job.error = f"the sweep took longer than the {self.timeout_s:g} s limit and was stopped"
                    return
                kind, value = conn.recv()
            except (EOFError, OSError):
                if job.cancelled:
                    job.error = "cancelled"
                    return
                job.error = (f"the sweep stopped before it finished (the {self.memory_mb:,} MiB "
                             "memory limit per process is the likely cause)")
                return
            if kind == "progress":
                with job.lock:
                    job.done += value
            elif kind == "rows":
                job.rows = value
                return
            else:
                job.error = value
                return


def stop_group(proc: Any) -> None:
    """Kill a sweep process and every process of its group (the pool it started). Its group
    id is its pid once :func:`sweep_process` has made it a leader; before that no group has
    that id (a live process group's id is never given to a new process) and only the process
    itself is killed."""
    import os
    import signal

    if proc.pid is not None and hasattr(os, "killpg"):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if proc.is_alive():
        proc.kill()


def sweep_process(conn: Any, docs: list[dict[str, Any]], source: str, dirs: tuple[str, ...],
                  executor: str, skip: dict[int, str], cap_bytes: int) -> None:
    """The sweep's own process: a process group of its own (:func:`stop_group`), capped, then
    the sweep as ``clustertwin sweep`` runs it."""
    import logging
    import os

    from clustertwin.serve.workers import cap_memory, where

    if hasattr(os, "setpgid"):
        os.setpgid(0, 0)
    cap_memory(cap_bytes)
    from clustertwin.sweep.run import Runner, execute

    try:
        runner = Runner(executor, catalog_dirs=dirs, on_progress=lambda n: conn.send(("progress", n)))
        rows = execute(docs, source, runner, skip)
        conn.send(("rows", rows))
    except UserError as exc:
        conn.send(("error", "; ".join(exc.lines())))
    except MemoryError:
        conn.send(("error", "the sweep needs more than the memory limit per process (--memory-cap)"))
    except Exception as exc:  # noqa: BLE001 - the page says so; the server keeps serving
        logging.getLogger("clustertwin.serve").error("a sweep failed: %s at %s", type(exc).__name__, where(exc))
        conn.send(("error", "the sweep failed with an internal error; see the server log"))


def parse_axes(form: dict[str, str]) -> dict[str, list[Any]]:
    """``axis1_key``/``axis1_values`` ... from the form -> ``{dotted key: [values]}``."""
    from clustertwin.sweep.grid import check_key, parse_value

    grid: dict[str, list[Any]] = {}
    for i in range(1, MAX_AXES + 1):
        key = form.get(f"axis{i}_key", "").strip()
        text = form.get(f"axis{i}_values", "").strip()
        if not key and not text:
            continue
        check_key(key, f"axis {i}")
        values = [parse_value(v[:200], f"axis {i}", key) for v in text.split(",") if v.strip()]
        if not values:
            raise UserError([Problem(f"axis {i}", key, "expected values separated by commas")])
        grid[key] = values
    if not grid:
        raise UserError([Problem("sweep", "", "give at least one axis: a scenario key and its values")])
    return grid
