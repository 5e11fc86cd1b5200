"""The ``clustertwin`` command line. Thin: parse, call the stages, hand results to reports.

Heavy imports (numpy, pydantic models, plotly) happen inside the commands so that
``clustertwin --help`` stays fast.
"""

from __future__ import annotations

import importlib
import os
import sys
import time

# One BLAS thread: the command's arrays are small, and starting a pool of OpenBLAS threads
# is a third of numpy's import time (set before numpy is first imported; a user's own
# setting wins).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from pathlib import Path
from typing import Annotated, Optional

import typer

from clustertwin.cli_common import CatalogOpt, ScenarioArg, handle_user_errors

app = typer.Typer(
    name="clustertwin",
    help="A digital twin of an AI training cluster: training time, physical design, reliability, "
    "economics, build-out and scheduling — from one scenario file, offline, in seconds.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
catalog_app = typer.Typer(help="Browse the hardware, model, price and failure catalog.", no_args_is_help=True)
app.add_typer(catalog_app, name="catalog")


@app.command()
@handle_user_errors
def plan(
    scenario: ScenarioArg = None,
    json_out: Annotated[bool, typer.Option("--json", help="print the plan as JSON (contract section 2) on stdout")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="write plan.json and plan.html into this folder")] = None,  # noqa: UP045
    force: Annotated[bool, typer.Option("--force", help="overwrite files in --out that clustertwin did not write")] = False,
    catalog: CatalogOpt = None,
    measured: Annotated[Optional[Path], typer.Option("--measured", help="check.json from 'clustertwin check': re-predict with the measured GEMM and fabric figures, drained nodes removed, beside the catalog plan")] = None,  # noqa: UP045
) -> None:
    """Plan a training run end to end: training time, design, reliability, economics, build-out, and
    the decision: trained by when via which route (build, colo, lease, cloud) for how much."""
    from clustertwin.cli_common import OutputDir, load_inputs, to_json
    from clustertwin.plan import make_plan

    t0 = time.perf_counter()
    # refuse before doing the work
    folder = OutputDir(out, ["plan.json", "plan.html"], force) if out is not None else None
    scen, cat = load_inputs(scenario, catalog)
    if measured is not None:
        from clustertwin.acceptance.cli import plan_measured

        return plan_measured(scen, cat, measured, json_out, folder)
    if json_out:
        result = make_plan(scen, cat)
    else:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn

        console = Console(stderr=True)
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=console, transient=True) as prog:
            task = prog.add_task("planning", total=None)
            result = make_plan(scen, cat, on_stage=lambda name: prog.update(task, description=f"stage: {name}"))
    doc = result.to_dict()
    if folder is not None:
        from clustertwin.report import html as html_report

        page = html_report.render(result)  # rendered before anything is written
        folder.write("plan.json", to_json(doc) + "\n")
        folder.write("plan.html", page)
        folder.commit()
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


def _exit_if_skipped(result) -> None:  # noqa: ANN001
    """A plan with a stage skipped (not available) is incomplete: exit status 3, said on stderr."""
    if getattr(result, "skipped", ()):
        typer.echo(f"warning: incomplete plan, stages skipped: {', '.join(result.skipped)} (exit 3)", err=True)
        raise typer.Exit(3)


@app.command()
@handle_user_errors
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


@catalog_app.command("list")
@handle_user_errors
def catalog_list(
    kind: Annotated[Optional[str], typer.Argument(help="gpu, node, fabric, switch, model, ... (omit for all)")] = None,  # noqa: UP045
    catalog: CatalogOpt = None,
) -> None:
    """List catalog entries (id, name, as_of), optionally of one kind."""
    from rich.console import Console
    from rich.table import Table

    from clustertwin.catalog import load_catalog
    from clustertwin.errors import UsageError

    cat = load_catalog(catalog or [])
    kinds = cat.kinds()
    if kind is not None and kind not in kinds:
        import difflib

        close = difflib.get_close_matches(kind, kinds, n=1)
        raise UsageError(f"unknown kind {kind!r}; " + (f"did you mean {close[0]}?" if close else f"known: {', '.join(kinds)}"), "catalog list")
    from clustertwin.quoting import terminal_text

    table = Table("kind", "id", "name", "as_of")
    for k in [kind] if kind else kinds:
        for e in cat.all(k):
            table.add_row(k, e.id, terminal_text(e.name), terminal_text(e.as_of))
    Console().print(table)


@catalog_app.command("show")
@handle_user_errors
def catalog_show(
    entry_id: Annotated[str, typer.Argument(help="catalog id, e.g. h100-sxm-80gb")],
    json_out: Annotated[bool, typer.Option("--json")] = False,
    catalog: CatalogOpt = None,
) -> None:
    """Show every field of a catalog entry, with its source."""
    from clustertwin.catalog import load_catalog
    from clustertwin.cli_common import emit_json
    from clustertwin.errors import UsageError
    from clustertwin.quoting import terminal_yaml

    cat = load_catalog(catalog or [])
    found = cat.find(entry_id)
    if not found:
        import difflib

        every = sorted({i for k in cat.kinds() for i in cat.ids(k)})
        close = difflib.get_close_matches(entry_id, every, n=3, cutoff=0.4)
        raise UsageError(f"no catalog entry {entry_id!r}" + (f"; did you mean {', '.join(close)}?" if close else ""), "catalog show")
    docs = [{"kind": k, "origin": cat.origins[(k, e.id)], **e.model_dump(mode="json", exclude_none=True)} for k, e in found]
    if json_out:
        emit_json(docs if len(docs) > 1 else docs[0])
    else:
        typer.echo(terminal_yaml(docs).rstrip())


# Stage commands live with their stages; each module exposes register(app).
_STAGE_CLIS = (
    "clustertwin.perf.cli",
    "clustertwin.design.cli",
    "clustertwin.reliability.cli",
    "clustertwin.buildout.cli",
    "clustertwin.scheduling.cli",
    "clustertwin.scheduling.cli_traces",
    "clustertwin.acceptance.cli",
    "clustertwin.sweep.cli",
    "clustertwin.export.cli",
    "clustertwin.serve.cli",
    "clustertwin.measure.cli",
    "clustertwin.track.cli",
)
for _mod in _STAGE_CLIS:
    try:
        importlib.import_module(_mod).register(app)
    except ModuleNotFoundError as _exc:  # a stage without a command yet
        if _exc.name is None or not _mod.startswith(_exc.name):
            raise


def _no_empty_out(argv: list[str]) -> None:
    """``--out ''`` would become the current folder once parsed as a path: refuse it here,
    where the text is still what the user typed."""
    from clustertwin.errors import Problem, UsageError

    for i, arg in enumerate(argv):
        value = arg[len("--out="):] if arg.startswith("--out=") else (
            argv[i + 1] if arg == "--out" and i + 1 < len(argv) else None)
        if value is not None and not value.strip():
            raise UsageError([Problem("command line", "--out", "is empty; give a folder name")])


def _one_line_warnings() -> None:
    """A numerical library's warning (overflow, a cast) reaches the terminal as one of our
    ``warning:`` lines, once per message, never as a source line and a module path."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001, ARG001
        from clustertwin.errors import _one_line

        if issubclass(category, RuntimeWarning):
            typer.echo(f"warning: numerical: {_one_line(str(message))} (a result near a limit "
                       "may be inexact)", err=True)
        else:
            typer.echo(f"warning: {category.__name__}: {_one_line(str(message))}", err=True)

    warnings.showwarning = show


def main() -> None:
    """The console entry point: every input error is one ``error:`` line and exit 2, click's
    own (a bad option value such as ``--workers 0``, an unknown option) included."""
    from clustertwin.errors import UserError, _one_line

    # the command-line library's exceptions, wherever this typer release keeps them (typer
    # >= 0.20 vendors click as typer._click; older releases use click itself)
    cx = sys.modules[typer.BadParameter.__module__]

    _one_line_warnings()
    try:
        _no_empty_out(sys.argv[1:])
        rc = app(standalone_mode=False)
    except UserError as exc:  # backstop for commands without the decorator
        for line in exc.lines():
            typer.echo(f"error: {line}", err=True)
        sys.exit(2)
    except getattr(cx, "NoArgsIsHelpError", ()) as exc:  # bare `clustertwin CMD`: its help
        exc.show()
        sys.exit(exc.exit_code)
    except cx.ClickException as exc:
        typer.echo(f"error: {_one_line(exc.format_message(), 600)}", err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(1)
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
