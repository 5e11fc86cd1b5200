"""Run the points of a sweep: one whole plan per point, on a process pool or on Ray.

The work unit is :func:`plan_row`, a pure function of a scenario document: it validates the
document, runs :func:`clustertwin.plan.make_plan` and returns the plan flattened into one row
(or the row's ``error``). Nothing depends on which process runs it or when, so the rows (and
the table built from them in grid order) are the same on every executor and worker count.
Each process keeps a small cache of stage results (:mod:`clustertwin.sweep.memo`): points that
differ only in keys a stage does not read reuse its result; ``cache=False`` turns it off.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from clustertwin.errors import Problem, UsageError, UserError

EXECUTORS = ("local", "ray")
_CATALOGS: dict[tuple[str, ...], Any] = {}
_MEMO: Any = None


def cached_catalog(dirs: tuple[str, ...]) -> Any:
    """The catalog, loaded once per process (workers plan many points)."""
    if dirs not in _CATALOGS:
        from clustertwin.catalog import load_catalog

        _CATALOGS[dirs] = load_catalog(list(dirs))
    return _CATALOGS[dirs]


def memo() -> Any:
    """This process's cache of stage results (one per worker, shared by its points)."""
    global _MEMO
    if _MEMO is None:
        from clustertwin.sweep.memo import StageMemo

        _MEMO = StageMemo()
    return _MEMO


def plan_row(doc: dict[str, Any], source: str, catalog_dirs: tuple[str, ...] = (),
             cache: bool = True) -> dict[str, Any]:
    """Plan one scenario document; return its plan flattened with dots plus ``error``.
    ``cache``: reuse stage results of this process's earlier points with the same inputs."""
    from clustertwin.plan import make_plan
    from clustertwin.scenario import scenario_from_dict
    from clustertwin.sweep.table import flatten

    cat = cached_catalog(catalog_dirs)
    try:
        plan = make_plan(scenario_from_dict(doc, source, cat), cat, memo=memo() if cache else None)
    except UserError as exc:
        return {"error": "; ".join(f"{p.path}: {p.message}" if p.path else p.message for p in exc.problems)}
    except Exception:  # a bug in one scenario must not end the sweep; the row says so, and
        # where to see it, without internal exception text (issue 31)
        return {"error": "internal error while planning this point; run `clustertwin plan` on "
                         "it to see the traceback and report it"}
    row = flatten(plan.to_dict())
    row["error"] = None
    return row


def _batch(items: list[tuple[int, dict[str, Any]]], source: str,
           dirs: tuple[str, ...], cache: bool = True) -> list[tuple[int, dict[str, Any]]]:
    return [(i, plan_row(doc, source, dirs, cache)) for i, doc in items]


def _chunks(jobs: list[tuple[int, dict[str, Any]]], workers: int) -> list[list[tuple[int, dict[str, Any]]]]:
    """Small batches (about 4 per worker and round, at most 8 points) keep the pool busy
    and the progress bar moving while paying the inter-process cost per batch, not per point."""
    size = max(1, min(8, len(jobs) // (workers * 4) or 1))
    return [jobs[i:i + size] for i in range(0, len(jobs), size)]


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _mp_context(dirs: tuple[str, ...]) -> Any:
    """Fork where it is safe (POSIX, this process single-threaded): workers then start with the
    stages imported and the catalog loaded. Otherwise forkserver/spawn (workers import anew;
    scripts calling the API need the ``if __name__ == "__main__":`` guard)."""
    import multiprocessing as mp
    import threading

    methods = mp.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        import clustertwin.plan  # noqa: F401 - imported once here, inherited by every worker

        for stage in ("perf", "design", "reliability", "economics", "buildout"):
            __import__(f"clustertwin.{stage}")
        cached_catalog(dirs)
        return mp.get_context("fork")
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


def run_local(jobs: list[tuple[int, dict[str, Any]]], source: str, dirs: tuple[str, ...],
              workers: int, cache: bool = True) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    """Yield finished batches from a process pool (``workers == 1``: in this process)."""
    if workers <= 1 or len(jobs) <= 1:
        for chunk in _chunks(jobs, 1):
            yield _batch(chunk, source, dirs, cache)
        return
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    ctx = _mp_context(dirs)
    chunks = _chunks(jobs, workers)
    with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=ctx) as pool:
        pending = {pool.submit(_batch, c, source, dirs, cache) for c in chunks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()


def run_ray(jobs: list[tuple[int, dict[str, Any]]], source: str, dirs: tuple[str, ...],
            workers: int | None, address: str | None,
            cache: bool = True) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    """Yield finished batches from Ray tasks; connect to ``address`` or start a local Ray."""
    try:
        import ray
    except ImportError:
        raise UsageError([Problem("--executor", "ray", "Ray is not installed; "
                                  "pip install 'clustertwin[ray]' or use --executor local")]) from None
    started = not ray.is_initialized()
    if started:
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "configure_logging": False}
        if address:
            kwargs["address"] = address
        elif workers:
            kwargs["num_cpus"] = workers
        try:
            ray.init(**kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise UsageError([Problem("--ray-address", address or "local", f"cannot start or reach Ray: {exc}")]) from None
    try:
        task = ray.remote(num_cpus=1)(_batch)
        refs = [task.remote(c, source, dirs, cache) for c in _chunks(jobs, workers or default_workers())]
        while refs:
            done, refs = ray.wait(refs, num_returns=1)
            yield ray.get(done[0])
    finally:
        if started:
            ray.shutdown()


def execute(docs: list[dict[str, Any]], source: str = "sweep", catalog_dirs: Iterable[str] = (),
            executor: str = "local", workers: int | None = None, ray_address: str | None = None,
            skip: dict[int, str] | None = None,
            on_progress: Callable[[int], None] | None = None, cache: bool = True) -> list[dict[str, Any]]:
    """Plan every document; return one row per document, in the documents' order.

    ``skip`` maps indexes to an error already known (invalid combinations): those rows are
    not planned. ``on_progress(n)`` is called as batches of ``n`` rows finish. ``cache``: each
    worker reuses stage results with the same inputs (the rows are the same either way)."""
    if executor not in EXECUTORS:
        raise UsageError([Problem("--executor", executor, f"expected one of {', '.join(EXECUTORS)}")])
    skip = skip or {}
    rows: list[dict[str, Any] | None] = [None] * len(docs)
    for i, err in skip.items():
        rows[i] = {"error": err}
    if on_progress and skip:
        on_progress(len(skip))
    jobs = [(i, d) for i, d in enumerate(docs) if i not in skip]
    dirs = tuple(str(d) for d in catalog_dirs)
    if executor == "ray":
        batches = run_ray(jobs, source, dirs, workers, ray_address, cache)
    else:
        batches = run_local(jobs, source, dirs, workers or default_workers(), cache)
    for batch in batches:
        for i, row in batch:
            rows[i] = row
        if on_progress:
            on_progress(len(batch))
    return [r if r is not None else {"error": "not run"} for r in rows]
