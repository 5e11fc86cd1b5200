"""``clustertwin catalog list`` and ``clustertwin catalog show``: browse the catalog."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from clustertwin.cli.common import CatalogOpt, handle_user_errors


def register(app: typer.Typer) -> None:
    """Add the ``catalog`` command group to ``app``."""
    catalog_app = typer.Typer(help="Browse the hardware, model, price and failure catalog.", no_args_is_help=True)
    catalog_app.command("list")(handle_user_errors(catalog_list))
    catalog_app.command("show")(handle_user_errors(catalog_show))
    app.add_typer(catalog_app, name="catalog")


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


def catalog_show(
    entry_id: Annotated[str, typer.Argument(help="catalog id, e.g. h100-sxm-80gb")],
    json_out: Annotated[bool, typer.Option("--json")] = False,
    catalog: CatalogOpt = None,
) -> None:
    """Show every field of a catalog entry, with its source."""
    from clustertwin.catalog import load_catalog
    from clustertwin.cli.common import emit_json
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

