"""``clustertwin reliability SCENARIO``: failures, checkpoints and goodput of the run."""

from __future__ import annotations

import typer

from clustertwin.cli.common import CatalogOpt, JsonOpt, ScenarioArg


def register(app: typer.Typer) -> None:
    """Add the ``reliability`` command to ``app``."""
    from clustertwin.cli.common import handle_user_errors

    @app.command("reliability")
    @handle_user_errors
    def reliability(scenario: ScenarioArg = None, json_out: JsonOpt = False,
                    catalog: CatalogOpt = None) -> None:
        """Failures, checkpoint interval, ETTR and lost GPU-hours of the training run."""
        from clustertwin.cli.common import show_stage
        from clustertwin.reliability import analyze

        show_stage(scenario, catalog, "reliability", json_out,
                   lambda scen, cat, plan: analyze(scen, cat, plan.training, plan.design))
