"""``clustertwin plan`` and ``clustertwin validate``: the whole pipeline, and its checks."""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from clustertwin.cli.common import CatalogOpt, ScenarioArg, handle_user_errors


def register(app: typer.Typer) -> None:
    """Add ``plan`` and ``validate`` to ``app``."""
    app.command("plan")(handle_user_errors(plan))
    app.command("validate")(handle_user_errors(validate))


def plan(
    scenario: ScenarioArg = None,
    json_out: Annotated[bool, typer.Option("--json", help="print the plan as JSON (contract section 2) on stdout")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="write plan.json and plan.html into this folder")] = None,  # noqa: UP045
    force: Annotated[bool, typer.Option("--force", help="overwrite files in --out that clustertwin did not write")] = False,
    catalog: CatalogOpt = None,
    measured: Annotated[Optional[Path], typer.Option("--measured", help="check.json from 'clustertwin check': re-predict with the measured GEMM and fabric figures, drained nodes removed, beside the catalog plan")] = None,  # noqa: UP045
    cabling: Annotated[bool, typer.Option("--cabling", help="place the site and route every cable: design.cabling gains total / median / longest lengths per medium (slower at scale)")] = False,
) -> None:
    """Plan a training run end to end: training time, design, reliability, economics, build-out, and
    the decision: trained by when via which route (build, colo, lease, cloud) for how much."""
    from clustertwin.cli.common import OutputDir, load_inputs, to_json
    from clustertwin.plan import make_plan, plan_ahead

    t0 = time.perf_counter()
    # refuse before doing the work
    folder = OutputDir(out, ["plan.json", "plan.html"], force) if out is not None else None
    scen, cat = load_inputs(scenario, catalog)
    if measured is not None:
        from clustertwin.cli.acceptance import plan_measured

        return plan_measured(scen, cat, measured, json_out, folder)
    # what is alive now (the modules, the scenario, the catalog) outlives the computation: out
    # of the cycle collector's way while it runs, and the pages the forked child shares stay
    # shared (collected as usual again afterwards, for a caller that goes on in this process)
    gc.freeze()
    try:
        # the cloud route's re-plan (and the spares re-estimate) in a child meanwhile, started
        # before the progress bar's thread
        with plan_ahead(scen, cat) as ahead:
            if json_out:
                result = make_plan(scen, cat, ahead=ahead)
            else:
                from rich.console import Console
                from rich.progress import Progress, SpinnerColumn, TextColumn

                console = Console(stderr=True)
                with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=console,
                              transient=True) as prog:
                    task = prog.add_task("planning", total=None)
                    result = make_plan(scen, cat, ahead=ahead,
                                       on_stage=lambda name: prog.update(task, description=f"stage: {name}"))
    finally:
        gc.unfreeze()
    if cabling:
        result = with_routed_cabling(result, cat)
    doc = result.to_dict()
    if folder is not None:
        from clustertwin.report import html as html_report

        page = html_report.render(result, catalog=cat)  # rendered before anything is written
        folder.write_all({"plan.json": to_json(doc) + "\n", "plan.html": page})
    if json_out:
        sys.stdout.write(to_json(doc) + "\n")
        _exit_if_skipped(result)
        return
    from clustertwin.report import text

    text.render(result)
    if out is not None:
        typer.echo(f"wrote {out / 'plan.json'} and {out / 'plan.html'}")
    typer.echo(f"({time.perf_counter() - t0:.2f} s)", err=True)
    _exit_if_skipped(result)


def with_routed_cabling(result, cat):  # noqa: ANN001, ANN201
    """The plan with its design's cables routed on the placed site (``--cabling``)."""
    if result.design is None:
        return result
    from dataclasses import replace

    from clustertwin.design.site.summary import routed

    return replace(result, design=routed(result.design, cat))


def _exit_if_skipped(result) -> None:  # noqa: ANN001
    """A plan with a stage skipped (not available) is incomplete: exit status 3, said on stderr."""
    if result.skipped:
        typer.echo(f"warning: incomplete plan, stages skipped: {', '.join(result.skipped)} (exit 3)", err=True)
        raise typer.Exit(3)


def validate(
    scenario: Annotated[list[Path], typer.Argument(help="scenario files to check")],
    catalog: CatalogOpt = None,
) -> None:
    """Check scenario files: schema, types, catalog ids, and the feasibility checks `plan` makes
    (a parallelism plan fits, the fabric can be built, the job is not hopeless under its failure
    rate, ...) without running plan's Monte Carlo simulations. A study file (base + cases/grid)
    has every scenario of its grid checked as `sweep` checks them. One line per problem; exit 2
    if any."""
    from clustertwin.catalog import load_catalog
    from clustertwin.errors import UserError
    from clustertwin.plan import feasibility_problems
    from clustertwin.quoting import comment_text
    from clustertwin.scenario import load_scenario

    cat = load_catalog(catalog or [])
    bad = 0
    for path in scenario:
        study = _validated_study(path, cat)
        if study is not None:
            bad += study
            continue
        try:
            s = load_scenario(path, cat)
        except UserError as exc:
            bad += 1
            for line in exc.lines():
                typer.echo(f"error: {line}", err=True)
            continue
        problems = feasibility_problems(s, cat)
        if problems:
            bad += 1
            for line in problems:
                typer.echo(f"error: {line}", err=True)
            continue
        size = f"{s.cluster.gpus} GPUs" if s.cluster.gpus else f"deadline {s.cluster.deadline_days} days"
        what = s.model.name if s.model is not None else "design only"
        typer.echo(f"ok: {path} ({comment_text(s.name)}: {comment_text(what)}, {size})")
    if bad:
        raise typer.Exit(2)


def _validated_study(path: Path, cat: object) -> int | None:
    """``validate`` on a study file: None if it is not one, else the count of bad files (0, 1)."""
    from clustertwin.errors import UserError
    from clustertwin.sweep.validate import check_study

    try:
        found = check_study(path, cat)
    except UserError as exc:
        for line in exc.lines():
            typer.echo(f"error: {line}", err=True)
        return 1
    if found is None:
        return None
    count, combos = found
    for line in combos:
        typer.echo(f"note: {line} (a row with this error in a sweep)", err=True)
    typer.echo(f"ok: {path} (a study: {count} scenarios; run them with `clustertwin sweep {path}`)")
    return 0
