"""``clustertwin design SCENARIO``: the physical cluster - racks, fabric, storage, power,
cooling, floor and bill of materials."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


def register(app: typer.Typer) -> None:
    """Add the ``design`` command to ``app``."""
    from clustertwin.cli_common import handle_user_errors

    @app.command("design")
    @handle_user_errors
    def design_cmd(
        scenario: Annotated[Optional[Path], typer.Argument(  # noqa: UP045
            help="scenario file (.yaml/.toml); omitted = the built-in default")] = None,
        json_out: Annotated[bool, typer.Option(
            "--json", help="print the design block as JSON on stdout")] = False,
        catalog: Annotated[Optional[list[Path]], typer.Option(  # noqa: UP045
            "--catalog", help="extra catalog folder (YAML); repeatable")] = None,
    ) -> None:
        """Racks, scalable units, compute fabric, storage, power chain, cooling and BOM."""
        from clustertwin.cli_common import emit_json, load_inputs
        from clustertwin.design import design
        from clustertwin.perf import estimate as perf_estimate

        scen, cat = load_inputs(scenario, catalog)
        result = design(scen, cat, perf_estimate(scen, cat))
        if json_out:
            emit_json(result.to_contract())
            return
        from rich.console import Console
        from rich.table import Table

        console = Console()
        table = Table(title=f"design: {scen.name}", show_header=False)
        table.add_column("", style="bold")
        table.add_column("")
        for label, value in result.summary_rows():
            table.add_row(label, value)
        console.print(table)
        bom = Table("category", "item", "qty", "unit USD", "total USD", title="bill of materials")
        for ln in result.bom:
            bom.add_row(ln.category, ln.item, f"{ln.quantity:,.0f}",
                        "-" if ln.unit_usd is None else f"{ln.unit_usd:,.0f}",
                        "unpriced" if ln.total_usd is None else f"{ln.total_usd:,.0f}")
        console.print(bom)
        for w in result.warnings:
            typer.echo(f"warning: {w}", err=True)
