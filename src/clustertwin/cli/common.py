"""Helpers shared by the CLI commands: loading inputs, printing JSON, safe output folders."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from clustertwin.outputs import OutputDir, write_outputs  # noqa: F401 - the output layer

#: Shared command-line parameters (typer annotations) so every command spells them alike.
ScenarioArg = Annotated[Optional[Path], typer.Argument(  # noqa: UP045
    help="scenario file (.yaml/.toml); omitted = the built-in default")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print the result as JSON on stdout")]
CatalogOpt = Annotated[Optional[list[Path]], typer.Option(  # noqa: UP045
    "--catalog", help="extra catalog folder (YAML); repeatable; overrides built-in ids")]


def print_rows(title: str, rows: list[tuple[str, str]]) -> None:
    """A two-column rich table of a stage result's summary rows."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from clustertwin.quoting import comment_text

    table = Table(title=escape(comment_text(title)), show_header=False)
    table.add_column("", style="bold")
    table.add_column("")
    for label, value in rows:
        table.add_row(label, value)
    Console().print(table)


def load_inputs(scenario_path: str | Path | None, catalog_dirs: list[Path] | None = None):  # noqa: ANN201
    """Load the catalog (built-in + user dirs) and the scenario (None = built-in default):
    :func:`clustertwin.scenario.load.load_inputs`, imported when called."""
    from clustertwin.scenario.load import load_inputs as _load

    return _load(scenario_path, catalog_dirs)


def to_json(obj: Any) -> str:
    from clustertwin.fmt import json_document

    return json_document(obj)


def emit_json(obj: Any) -> None:
    sys.stdout.write(to_json(obj) + "\n")


def handle_user_errors(func):  # noqa: ANN001, ANN201
    """Decorator for commands: a UserError becomes one stderr line per problem and exit 2."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        from clustertwin.errors import UserError

        try:
            return func(*args, **kwargs)
        except UserError as exc:
            import typer

            for line in exc.lines():
                typer.echo(f"error: {line}", err=True)
            raise typer.Exit(2) from None

    return wrapper


def show_stage(scenario_path: str | Path | None, catalog_dirs: list[Path] | None, stage: str,
               json_out: bool, compute: Any) -> Any:
    """What the one-stage commands (``design``, ``reliability``) share: load the inputs, make
    the plan up to ``stage`` (:func:`clustertwin.plan.plan_through`: the installed GPUs and
    deadline rounds ``plan`` uses; a stage failure is raised), take its result
    (``compute(scenario, catalog, plan)`` where the plan has none) and print it: as JSON
    (returns None) or as its summary rows (returns the result, for the command's extras)."""
    from clustertwin.plan import plan_through

    scen, cat = load_inputs(scenario_path, catalog_dirs)
    plan = plan_through(scen, cat, stage)
    result = getattr(plan, stage) or compute(scen, cat, plan)
    if json_out:
        emit_json(result.to_contract())
        return None
    from clustertwin.report import views

    print_rows(f"{stage}: {scen.name}", views.rows(result))
    return result
