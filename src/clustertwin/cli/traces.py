"""``clustertwin traces list``: the traces packaged with clustertwin, their size and terms."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the ``traces`` command group (``traces list``) to the main app."""
    traces_app = typer.Typer(help="The job traces packaged with clustertwin.",
                             no_args_is_help=True)
    app.add_typer(traces_app, name="traces")

    @traces_app.command("list")
    def list_cmd(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
        """Name, jobs, source and licence of every packaged trace (each folder also holds its
        ATTRIBUTION.md and licence text). Traces whose terms forbid redistribution are read
        from the folder CLUSTERTWIN_TRACES names."""
        from dataclasses import asdict

        from clustertwin.cli.common import emit_json
        from clustertwin.scheduling.traces.listing import packaged_traces
        from clustertwin.scheduling.traces.locate import ENV, PACKAGED

        rows = packaged_traces()
        if as_json:  # the contract's [{name, jobs, source, license}], plus unit, folder, cite
            emit_json([{**asdict(r), "folder": str(PACKAGED / r.folder)} for r in rows])
            return
        _print(rows)
        typer.echo(f"\nfiles, attribution and licences: {PACKAGED}\n[bracketed]: reference "
                   "data, not replayed by --trace. Other traces (Sia's workloads, ...): set "
                   f"{ENV} to a folder holding them.")


def _print(rows) -> None:  # noqa: ANN001
    from rich.console import Console
    from rich.table import Table

    from clustertwin.quoting import terminal_text

    table = Table(show_header=True, header_style="bold")
    for col, just in (("name", "left"), ("jobs", "right"), ("source", "left"),
                      ("license", "left")):
        table.add_column(col, justify=just)
    for r in rows:
        table.add_row(terminal_text(r.name), f"{r.jobs:,} {r.unit}", terminal_text(r.source, 200),
                      terminal_text(r.license))
    Console().print(table)
