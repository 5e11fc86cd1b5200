"""The sweep page: axes from a form, run in the background on the local process pool (or Ray)
as ``clustertwin sweep`` runs them, a progress bar polled by htmx, then a sortable table and a
Pareto plot (run cost against wall-clock days) with every point labelled."""

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
COLUMNS = ("training.days", "reliability.effective_days", "training.mfu", "economics.capex_usd",
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
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def finished(self) -> bool:
        return self.rows is not None or bool(self.error)


class SweepBoard:
    """The sweeps this server runs or ran (the last :data:`KEEP`)."""

    def __init__(self, catalog_dirs: tuple[str, ...] = ()) -> None:
        self.catalog_dirs = catalog_dirs
        self.jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def start(self, sw: Any, executor: str) -> Job:
        with self._lock:
            if sum(not j.finished for j in self.jobs.values()) >= MAX_RUNNING:
                from clustertwin.serve.guard import HttpError

                raise HttpError(503, f"{MAX_RUNNING} sweeps are running; wait for one to finish")
            job = Job(secrets.token_hex(8), sw.title, list(sw.keys), [p.label for p in sw.points],
                      [p.assignments for p in sw.points], len(sw.points))
            self.jobs[job.id] = job
            for old in list(self.jobs)[:-KEEP]:
                if self.jobs[old].finished:
                    del self.jobs[old]
        threading.Thread(target=self._run, args=(job, sw, executor), daemon=True,
                         name=f"sweep-{job.id}").start()
        return job

    def _run(self, job: Job, sw: Any, executor: str) -> None:
        from clustertwin.sweep.api import prepare
        from clustertwin.sweep.run import execute

        def progress(n: int) -> None:
            with job.lock:
                job.done += n

        try:
            skip = prepare(sw, self.catalog_dirs)
            rows = execute([p.doc for p in sw.points], sw.source, self.catalog_dirs, executor,
                           None, None, skip, progress)
        except UserError as exc:
            job.error = "; ".join(exc.lines())
            return
        except Exception as exc:  # noqa: BLE001 - the page says so; the server keeps serving
            import logging

            from clustertwin.serve.workers import where

            logging.getLogger("clustertwin.serve").error("sweep %s failed: %s at %s", job.id,
                                                         type(exc).__name__, where(exc))
            job.error = "the sweep failed with an internal error; see the server log"
            return
        job.rows = rows


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
