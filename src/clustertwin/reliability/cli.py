"""``clustertwin reliability SCENARIO``: failures, checkpoints and goodput of the run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


def register(app: typer.Typer) -> None:
    """Add the ``reliability`` command to ``app``."""
    from clustertwin.cli_common import handle_user_errors

    @app.command("reliability")
    @handle_user_errors
    def reliability(
        scenario: Annotated[Optional[Path], typer.Argument(  # noqa: UP045
            help="scenario file (.yaml/.toml); omitted = the built-in default")] = None,
        json_out: Annotated[bool, typer.Option(
            "--json", help="print the reliability block as JSON on stdout")] = False,
        catalog: Annotated[Optional[list[Path]], typer.Option(  # noqa: UP045
            "--catalog", help="extra catalog folder (YAML); repeatable")] = None,
    ) -> None:
        """Failures, checkpoint interval, ETTR and lost GPU-hours of the training run."""
        from clustertwin.cli_common import emit_json, load_inputs
        from clustertwin.perf import estimate as perf_estimate
        from clustertwin.reliability import analyze

        scen, cat = load_inputs(scenario, catalog)
        est = perf_estimate(scen, cat)
        design = None
        try:
            from clustertwin.design import design as make_design
        except ImportError:
            make_design = None
        if make_design is not None:
            design = make_design(scen, cat, est)
        result = analyze(scen, cat, est, design)
        if json_out:
            emit_json(result.to_contract())
            return
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"reliability: {scen.name}", show_header=False)
        table.add_column("", style="bold")
        table.add_column("")
        for label, value in result.summary_rows():
            table.add_row(label, value)
        Console().print(table)
