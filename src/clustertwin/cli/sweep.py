"""``clustertwin sweep`` and ``clustertwin compare``: thin, all work in the sweep package."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from clustertwin.cli.common import CatalogOpt, handle_user_errors

SWEEP_FILES = ["sweep.parquet", "sweep.csv", "sweep.html", "run.json"]


def _need_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        from clustertwin.errors import UsageError

        raise UsageError("sweep tables need pyarrow: pip install 'clustertwin[parquet]'", "sweep") from None


def _grid_options(sets: list[str], ranges: list[str]) -> dict[str, list]:
    from clustertwin.errors import Problem, UsageError
    from clustertwin.sweep.grid import parse_range, parse_set

    grid: dict[str, list] = {}
    problems = []
    for option, key, values in [("--set", *parse_set(t)) for t in sets] + [("--range", *parse_range(t)) for t in ranges]:
        if key in grid:  # the second one used to replace the first without a word
            problems.append(Problem(option, key, "given twice; list every value once: KEY=V1,V2,..."))
        grid[key] = values
    if problems:
        raise UsageError(problems)
    return grid


def _progress(total: int):  # noqa: ANN202
    """A rich progress bar with scenarios/s and ETA. No refresh thread, so worker processes
    can be forked safely; it redraws as batches finish."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    prog = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[rate]}"), TextColumn("ETA"), TimeRemainingColumn(),
                    console=Console(stderr=True), auto_refresh=False, transient=False)
    task = prog.add_task("sweep", total=total, rate="")

    def advance(n: int) -> None:
        prog.advance(task, n)
        t = prog.tasks[0]
        if t.elapsed:
            prog.update(task, rate=f"{t.completed / t.elapsed:.1f} scenarios/s")
        prog.refresh()

    return prog, advance


# a command: one parameter per command-line option (typer reads this signature)
def sweep_command(
    base: Annotated[Path, typer.Argument(help="base scenario file, or a study file (base + cases/grid)")],
    sets: Annotated[Optional[list[str]], typer.Option("--set", help="KEY=V1,V2,...: values of a dotted scenario key; repeatable")] = None,  # noqa: UP045
    ranges: Annotated[Optional[list[str]], typer.Option("--range", help="KEY=START:STOP:STEP (STOP included); repeatable")] = None,  # noqa: UP045
    out: Annotated[Path, typer.Option("--out", help="folder for sweep.parquet, sweep.csv, sweep.html, run.json")] = Path("sweep-out"),
    executor: Annotated[str, typer.Option("--executor", help="local (process pool) or ray")] = "local",
    workers: Annotated[Optional[int], typer.Option("--workers", min=1, help="processes / Ray CPUs (default: one per core)")] = None,  # noqa: UP045
    ray_address: Annotated[Optional[str], typer.Option("--ray-address", help="Ray cluster to join (default: start a local one)")] = None,  # noqa: UP045
    objective: Annotated[Optional[str], typer.Option("--objective", help="run_cost_owned_usd | run_cost_cloud_usd | effective_days | capex_usd | trained_by | cost_to_model (ranked within each model when the scenarios train different models)")] = None,  # noqa: UP045
    require: Annotated[Optional[list[str]], typer.Option("--require", help="'COLUMN<=NUMBER' a scenario must meet; repeatable")] = None,  # noqa: UP045
    seeds: Annotated[Optional[str], typer.Option("--seeds", help="per-scenario (seed from base seed + grid coordinates) or common (base seed everywhere)")] = None,  # noqa: UP045
    force: Annotated[bool, typer.Option("--force", help="overwrite files in --out that clustertwin did not write")] = False,
    cache: Annotated[bool, typer.Option("--cache/--no-cache", help="reuse a stage's result between scenarios that differ only "
                                        "in keys it does not read (same table either way)")] = True,
    max_scenarios: Annotated[Optional[int], typer.Option("--max-scenarios", help="most scenarios the grid may make, checked before any runs (default 10000)")] = None,  # noqa: UP045
    allow_path: Annotated[Optional[list[Path]], typer.Option("--allow-path", help="folder a study's base: may be read from besides the study's own; repeatable")] = None,  # noqa: UP045
    stream: Annotated[bool, typer.Option("--stream", help="for large grids: rows appended to --out/sweep.parts as they finish "
                                         "(a rerun resumes), then sweep.parquet and run.json; no ranking, csv or html")] = False,
    catalog: CatalogOpt = None,
) -> None:
    """Plan a grid of scenarios (any dotted keys) and rank them; writes sweep.parquet/.csv/.html.
    A grid past --max-scenarios (default 10,000; 10,000,000 with --stream) is refused before anything runs."""
    import time

    from clustertwin.errors import Problem, UsageError
    from clustertwin.outputs import OutputDir
    from clustertwin.sweep import choose as ch
    from clustertwin.sweep.api import prepare, run_sweep_table
    from clustertwin.sweep.study import load_study

    _need_pyarrow()
    if executor not in ("local", "ray"):
        raise UsageError([Problem("--executor", executor, "expected local or ray")])
    if stream:
        from clustertwin.sweep.run import Runner
        from clustertwin.sweep.stream import STREAM_MAX, stream_command

        sw = load_study(base, _grid_options(sets or [], ranges or []), seeds, tuple(allow_path or ()),
                        max_scenarios or STREAM_MAX, lazy=True)
        typer.echo(stream_command(sw, out, Runner(executor, workers, ray_address, tuple(catalog or ()), cache),
                                  force, _progress), err=True)
        return
    from clustertwin.sweep.grid import MAX_SCENARIOS

    if max_scenarios is not None and max_scenarios < 1:
        raise UsageError([Problem("--max-scenarios", str(max_scenarios), "expected at least 1")])
    sw = load_study(base, _grid_options(sets or [], ranges or []), seeds,
                    tuple(allow_path or ()), max_scenarios or MAX_SCENARIOS)
    obj = (sw.objective or "run_cost_owned_usd") if objective is None else objective
    ch.objective_column(obj)
    reqs = [ch.parse_requirement(r) for r in [*sw.require, *(require or [])]]
    ch.check_columns(reqs, sw.keys)
    skip = prepare(sw, catalog or [])  # every point validated before any work
    folder = OutputDir(out, SWEEP_FILES, force)
    t0 = time.perf_counter()
    prog, advance = _progress(len(sw.points))
    from clustertwin.sweep.runlog import RunLog

    log = RunLog(executor)
    with prog:
        from clustertwin.sweep.run import Runner

        runner = Runner(executor, workers, ray_address, tuple(catalog or ()), cache, advance, log)
        table = run_sweep_table(sw, runner, skip)
    elapsed = time.perf_counter() - t0
    choice = ch.choose(table, obj, reqs)
    log.finish()
    _write(folder, sw, table, choice)
    folder.write("run.json", log.to_json())
    folder.commit()  # the four files as one set
    from clustertwin.sweep.report import print_choice

    print_choice(sw, table, choice)
    typer.echo(f"{len(sw.points)} scenarios in {elapsed:.1f} s ({len(sw.points) / elapsed:.1f}/s, "
               f"{executor}); wrote {', '.join(str(folder.path / n) for n in SWEEP_FILES)}", err=True)
    if choice.missing:
        raise UsageError([Problem("--require", m, "no row has this column (see sweep.csv for names)")
                          for m in choice.missing])


def _write(folder, sw, table, choice) -> None:  # noqa: ANN001
    from clustertwin.sweep.html import render_sweep
    from clustertwin.sweep.table import csv_text, parquet_bytes

    page = render_sweep(sw, table, choice)  # everything rendered before the first write
    csv, parquet = csv_text(table), parquet_bytes(table)
    folder.write("sweep.parquet", parquet)
    folder.write("sweep.csv", csv)
    folder.write("sweep.html", page)


def compare_command(
    scenarios: Annotated[list[Path], typer.Argument(help="two or more scenario files")],
    out: Annotated[Optional[Path], typer.Option("--out", help="write compare.html into this folder")] = None,  # noqa: UP045
    force: Annotated[bool, typer.Option("--force", help="overwrite files in --out that clustertwin did not write")] = False,
    catalog: CatalogOpt = None,
) -> None:
    """Plan several scenarios and show them side by side (differences highlighted)."""
    from clustertwin.outputs import OutputDir
    from clustertwin.sweep.compare import compare_plans, print_compare, render_compare

    folder = OutputDir(out, ["compare.html"], force) if out is not None else None
    plans = compare_plans(scenarios, catalog or [])
    print_compare(plans)
    if folder is not None:
        folder.write("compare.html", render_compare(plans))
        folder.commit()
        typer.echo(f"wrote {folder.path / 'compare.html'}", err=True)


def register(app: typer.Typer) -> None:
    app.command("sweep")(handle_user_errors(sweep_command))
    app.command("compare")(handle_user_errors(compare_command))
