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
from dataclasses import dataclass
from typing import Any

from clustertwin.errors import Problem, UsageError, UserError

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class Runner:
    """How a sweep's points are planned: ``executor`` ``"local"`` (a process pool of
    ``workers``, default one per core) or ``"ray"`` (``ray_address`` or a local Ray), on the
    catalog with ``catalog_dirs`` added, ``cache``: each worker reuses stage results with the
    same inputs (:mod:`clustertwin.sweep.memo`; the rows are the same either way).
    ``on_progress(n)`` is called as batches of ``n`` rows finish; ``log`` (a
    :class:`clustertwin.sweep.runlog.RunLog`) records where each batch ran."""

    executor: str = "local"
    workers: int | None = None
    ray_address: str | None = None
    catalog_dirs: Iterable[str | os.PathLike] = ()
    cache: bool = True
    on_progress: Callable[[int], None] | None = None
    log: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "catalog_dirs", tuple(str(d) for d in self.catalog_dirs))
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


Batch = list[tuple[int, dict[str, Any]]]
#: a finished batch: (node id, node address, CPU seconds it took there, rows)
Done = tuple[str, str, float, Batch]


def _where(on_ray: bool) -> tuple[str, str]:
    """This process's node: Ray's node id and address, or the host's name."""
    if on_ray:
        import ray

        return ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address()
    import socket

    return socket.gethostname(), "local"


def _work(items: Batch, source: str, dirs: tuple[str, ...], cache: bool = True,
          on_ray: bool = False) -> Done:
    """:func:`_batch` plus where it ran and the CPU seconds it took there."""
    import time

    t0 = time.process_time()
    rows = _batch(items, source, dirs, cache)
    node, address = _where(on_ray)
    return node, address, time.process_time() - t0, rows


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


def run_local(jobs: Batch, source: str, dirs: tuple[str, ...], workers: int,
              cache: bool = True) -> Iterator[Done]:
    """Yield finished batches from a process pool (``workers == 1``: in this process, its CPU
    counted as the driver's)."""
    if workers <= 1 or len(jobs) <= 1:
        for chunk in _chunks(jobs, 1):
            node, address, _, rows = _work(chunk, source, dirs, cache)
            yield node, address, 0.0, rows
        return
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    ctx = _mp_context(dirs)
    chunks = _chunks(jobs, workers)
    from clustertwin.children import exit_with_parent, watch_args

    with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=ctx,
                             initializer=exit_with_parent,
                             initargs=watch_args(ctx)) as pool:  # none outlives a kill -9
        pending = {pool.submit(_work, c, source, dirs, cache) for c in chunks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()


def run_ray(jobs: Batch, source: str, dirs: tuple[str, ...], workers: int | None,
            address: str | None, cache: bool = True, log: Any = None) -> Iterator[Done]:
    """Yield finished batches from Ray tasks; connect to ``address`` or start a local Ray. A
    batch whose worker or node dies is submitted again (at most :data:`RAY_ATTEMPTS` times in
    all) and the retry recorded in ``log``."""
    try:
        import ray
    except ImportError:
        raise UsageError([Problem("--executor", "ray", "Ray is not installed; "
                                  "pip install 'clustertwin[ray]' or use --executor local")]) from None
    from clustertwin.sweep.rayconn import connect

    started = connect(ray, address, workers, log)
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(_work)
        chunks = _chunks(jobs, workers or _ray_cpus(ray))
        refs = {task.remote(c, source, dirs, cache, True): (c, 1) for c in chunks}
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1)
            chunk, attempt = refs.pop(done[0])
            try:
                yield ray.get(done[0])
            except ray.exceptions.RayError as exc:
                if isinstance(exc, ray.exceptions.RayTaskError) or attempt >= RAY_ATTEMPTS:
                    raise UsageError([Problem("--executor", "ray", f"a batch of {len(chunk)} points "
                                              f"failed {attempt} times: {type(exc).__name__}: "
                                              f"{str(exc).splitlines()[0][:200]}")]) from None
                if log is not None:
                    log.retry(chunk[0][0], len(chunk), attempt, type(exc).__name__)
                refs[task.remote(chunk, source, dirs, cache, True)] = (chunk, attempt + 1)
    finally:
        if started:
            ray.shutdown()


#: times one batch is tried on Ray before the sweep gives up (workers or nodes dying)
RAY_ATTEMPTS = 4


def _ray_cpus(ray: Any) -> int:
    """CPUs of the Ray cluster (batches are sized for them), at least 1."""
    try:
        return max(1, int(ray.cluster_resources().get("CPU", 1)))
    except Exception:  # pragma: no cover - a cluster that cannot say
        return default_workers()


def execute(docs: list[dict[str, Any]], source: str = "sweep", runner: Runner = Runner(),
            skip: dict[int, str] | None = None) -> list[dict[str, Any]]:
    """Plan every document as ``runner`` says; return one row per document, in the documents'
    order. ``skip`` maps indexes to an error already known (invalid combinations): those rows
    are not planned."""
    rows: list[dict[str, Any] | None] = [None] * len(docs)
    for i, row in stream(list(enumerate(docs)), source, runner, skip):
        rows[i] = row
    return [r if r is not None else {"error": "not run"} for r in rows]


def stream(points: list[tuple[int, dict[str, Any]]], source: str = "sweep",
           runner: Runner = Runner(), skip: dict[int, str] | None = None,
           ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Plan ``(index, document)`` points as ``runner`` says; yield ``(index, row)`` as batches
    finish (in no set order). Indexes in ``skip`` yield their known error without being planned."""
    executor, workers, cache = runner.executor, runner.workers, runner.cache
    on_progress, log = runner.on_progress, runner.log
    if executor not in EXECUTORS:
        raise UsageError([Problem("--executor", executor, f"expected one of {', '.join(EXECUTORS)}")])
    skip = skip or {}
    known = [(i, {"error": skip[i]}) for i, _ in points if i in skip]
    yield from known
    if on_progress and known:
        on_progress(len(known))
    if log is not None:
        log.skipped_invalid += len(known)
    jobs = [(i, d) for i, d in points if i not in skip]
    dirs = runner.catalog_dirs
    if executor == "ray":
        batches = run_ray(jobs, source, dirs, workers, runner.ray_address, cache, log)
    else:
        batches = run_local(jobs, source, dirs, workers or default_workers(), cache)
    for node, address, cpu_s, batch in batches:
        if log is not None:
            log.batch_done(node, address, cpu_s, len(batch))
        yield from batch
        if on_progress:
            on_progress(len(batch))
