"""``clustertwin design SCENARIO``: the physical cluster - racks, fabric, storage, power,
cooling, floor and bill of materials."""

from __future__ import annotations

import typer

from clustertwin.cli.common import CatalogOpt, JsonOpt, ScenarioArg


def register(app: typer.Typer) -> None:
    """Add the ``design`` command to ``app``."""
    from clustertwin.cli.common import handle_user_errors

    @app.command("design")
    @handle_user_errors
    def design_cmd(scenario: ScenarioArg = None, json_out: JsonOpt = False,
                   catalog: CatalogOpt = None) -> None:
        """Racks, scalable units, compute fabric, storage, power chain, cooling and BOM."""
        from clustertwin.cli.common import show_stage
        from clustertwin.design import design

        result = show_stage(scenario, catalog, "design", json_out,
                            lambda scen, cat, plan: design(scen, cat, plan.training))
        if result is None:
            return
        from rich.console import Console
        from rich.table import Table

        bom = Table("category", "item", "qty", "unit USD", "total USD", title="bill of materials")
        for ln in result.bom:
            bom.add_row(ln.category, ln.item, f"{ln.quantity:,.0f}",
                        "-" if ln.unit_usd is None else f"{ln.unit_usd:,.0f}",
                        "unpriced" if ln.total_usd is None else f"{ln.total_usd:,.0f}")
        Console().print(bom)
        for w in result.warnings:
            typer.echo(f"warning: {w}", err=True)
