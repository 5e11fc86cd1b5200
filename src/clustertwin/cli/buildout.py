"""``clustertwin buildout``: the build-out schedule, critical path and go-live dates."""

from __future__ import annotations

from pathlib import Path

import typer

#: a paragraph after a ``\b`` line keeps its layout (click's help rewraps the others)
HELP = """Schedule the 195 build-out steps: critical path, slack, Monte Carlo go-live P50/P80/P90.

What-ifs (--what-if, repeatable; each is compared with the baseline; put several changes in one
what-if separated by spaces or ';'):

\b
  gpu_lead_time_days=+90       shift GPU delivery by 90 days (also switch_lead_time_days,
                               nic_lead_time_days, optics_lead_time_days, utility_study_days,
                               utility_agreement_days, switchgear_days, substation_days,
                               ups_days, generator_days, chiller_days, cooling_tower_days,
                               storage_lead_time_days, burn_in_days, validation_days,
                               gpu_allocation_days)

\b
  value forms: +N / -N shift all three points, xF scale them, N set the likely value (the
  others move with it), O/L/P set optimistic/likely/pessimistic

\b
  step.42.days=30/45/90        any step by number; also step.N.optimistic, step.N.likely,
                               step.N.pessimistic (one point) and step.N.after=12,40
                               (replace predecessors; +12 adds, -12 removes)

\b
  profile=fast-track           new-build | existing-facility | fast-track

\b
  crews=x2                     multiply every crew cap;   gpus=50000   another cluster size
"""


def register(app: typer.Typer) -> None:
    """Add the ``buildout`` command to the app."""

    # a command: one parameter per command-line option (typer reads this signature)
    @app.command("buildout", help=HELP)
    def buildout(
        scenario: Path | None = typer.Argument(
            None, help="scenario file (default: built-in example)"
        ),
        what_if: list[str] | None = typer.Option(
            None, "--what-if", "-w", help="KEY=VALUE what-if (see above)"
        ),
        json_out: bool = typer.Option(False, "--json", help="print the buildout block as JSON"),
        out: Path | None = typer.Option(
            None, "--out", help="write buildout.csv and buildout.json here"
        ),
        force: bool = typer.Option(
            False, "--force", help="overwrite files clustertwin did not write"
        ),
        catalog: list[Path] | None = typer.Option(
            None, "--catalog", help="extra catalog directory"
        ),
        samples: int = typer.Option(10_000, "--samples", help="Monte Carlo samples", min=2, max=1_000_000),
        distribution: str = typer.Option("triangular", "--distribution", help="triangular | pert"),
    ) -> None:
        from clustertwin.errors import UserError

        try:
            _show(_plan(scenario, catalog or [], what_if or [], samples, distribution), json_out, out, force)
        except UserError as exc:
            for line in exc.lines():
                typer.echo(f"error: {line}", err=True)
            raise typer.Exit(exc.exit_code) from None


def _plan(scenario: Path | None, catalog: list[Path], what_if: list[str], samples: int,
          distribution: str):  # noqa: ANN202
    """The build-out plan of the scenario's design (the one ``plan`` makes), with the what-ifs."""
    from clustertwin.buildout import plan_buildout
    from clustertwin.cli import common as cli_common
    from clustertwin.errors import Problem, UsageError

    if distribution not in ("triangular", "pert"):
        raise UsageError([Problem("--distribution", "", "expected triangular or pert")])
    sc, cat = cli_common.load_inputs(scenario, catalog)
    from clustertwin.plan import plan_through

    # the design plan makes: the one source of racks, power and links
    design = plan_through(sc, cat, "design").design
    return plan_buildout(sc, cat, design, what_if, samples=samples, distribution=distribution)


def _show(plan, json_out: bool, out: Path | None, force: bool) -> None:  # noqa: ANN001
    """Write buildout.csv and buildout.json into ``out``; print JSON or the summary table."""
    from clustertwin.cli import common as cli_common

    if out is not None:
        cli_common.write_outputs(out, {"buildout.csv": plan.to_csv(),
                                       "buildout.json": cli_common.to_json(plan.to_contract()) + "\n"},
                                 force)
    if json_out:
        cli_common.emit_json(plan.to_contract())
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Build-out", show_header=False)
    table.add_column("", style="bold")
    table.add_column("")
    from clustertwin.report import views

    for label, value in views.rows(plan):
        table.add_row(label, value)
    Console().print(table)
    if out is not None:
        Console().print(f"wrote {out / 'buildout.csv'} and {out / 'buildout.json'}")
