"""The Python entry point: ``clustertwin.sweep(base, grid, executor=...) -> pyarrow.Table``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from clustertwin.sweep.run import Runner
from clustertwin.sweep.study import Sweep, build


def prepare(sw: Sweep, catalog_dirs: Iterable[str | Path] = ()) -> dict[int, str]:
    """Validate every point of ``sw`` before any work; return the points that are invalid only
    in combination (``{index: error}``). Bad keys or values raise a UsageError."""
    from clustertwin.sweep.run import cached_catalog
    from clustertwin.sweep.validate import validate_points

    cat = cached_catalog(tuple(str(d) for d in catalog_dirs))
    return validate_points(sw.points, cat, sw.source)


def run_sweep_table(sw: Sweep, runner: Runner = Runner(), skip: dict[int, str] | None = None) -> Any:
    """Run a prepared sweep as ``runner`` says (:class:`clustertwin.sweep.run.Runner`: executor,
    workers, catalog, cache, progress, log) and build its table (rows in grid order)."""
    from clustertwin.sweep.run import execute
    from clustertwin.sweep.table import build_table

    if skip is None:
        skip = prepare(sw, runner.catalog_dirs)
    rows = execute([p.doc for p in sw.points], sw.source, runner, skip)
    return build_table(sw.keys, [p.assignments for p in sw.points], rows, [p.label for p in sw.points])


# the library's documented entry point: one keyword per option, as ``help(clustertwin.sweep)`` shows
def sweep(base: Any = None, grid: dict[str, list[Any]] | None = None, *,
          cases: list[tuple[str, dict[str, Any]]] | None = None, executor: str = "local",
          workers: int | None = None, ray_address: str | None = None,
          catalog: Iterable[str | Path] = (), seeds: str | None = None, cache: bool = True) -> Any:
    """Plan every scenario of a grid and return one row per scenario as a ``pyarrow.Table``.

    ``base``: a scenario file path, a scenario mapping, a ``Scenario`` or None (the built-in
    default); a study file path brings its own cases and grid. ``grid``: ``{dotted key: [values]}``,
    crossed with ``cases`` (``[(name, {key: value})]``). ``executor``: ``"local"`` (process pool,
    ``workers`` processes, default one per core) or ``"ray"`` (``ray_address`` or a local Ray).
    Columns: the swept keys, every plan key flattened with dots, ``point``, ``error``.
    ``seeds``: ``"per-scenario"`` (default; each scenario's seed from the base seed and its
    coordinates) or ``"common"`` (every scenario the base seed: common random numbers).
    ``cache``: each worker reuses a stage's result between scenarios that differ only in keys
    the stage does not read (:mod:`clustertwin.sweep.memo`; the table is the same either way).
    ``table.to_pandas()`` gives a DataFrame when pandas is installed."""
    from clustertwin.sweep.study import is_study, load_study

    if isinstance(base, str | Path) and not cases and _is_study_file(Path(base), is_study):
        sw = load_study(Path(base), grid, seeds)
    else:
        sw = build(base, grid, cases, seeds=seeds or "per-scenario")
    return run_sweep_table(sw, Runner(executor, workers, ray_address, tuple(catalog), cache))


def _is_study_file(path: Path, is_study: Callable[[Any], bool]) -> bool:
    from clustertwin.io import read_document

    return is_study(read_document(path))
