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
        from clustertwin.cli.common import emit_json, load_inputs, print_rows
        from clustertwin.plan import plan_through
        from clustertwin.reliability import analyze

        scen, cat = load_inputs(scenario, catalog)
        # the estimate and design `plan` makes (installed GPUs, deadline rounds)
        plan = plan_through(scen, cat, "reliability")
        result = plan.reliability or analyze(scen, cat, plan.training, plan.design)
        if json_out:
            emit_json(result.to_contract())
            return
        from clustertwin.report import views

        print_rows(f"reliability: {scen.name}", views.rows(result))
