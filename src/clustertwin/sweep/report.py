"""Terminal and HTML-table views of a sweep's choice (rich; shared cell formatting)."""

from __future__ import annotations

from typing import Any

from clustertwin.quoting import html_text, terminal_text
from clustertwin.sweep.choose import DAYS, Choice

#: metrics shown for each ranked scenario: (column, header, format)
METRICS = (
    ("training.days", "days", "days"),
    (DAYS, "wall days", "days"),
    ("economics.run_cost_owned_usd", "$ owned", "usd"),
    ("economics.run_cost_cloud_usd", "$ cloud", "usd"),
    ("economics.capex_usd", "capex", "usd"),
    ("design.power.facility_kw", "MW", "mw"),
    ("buildout.go_live_days_p50", "go-live", "days"),
)
#: what the short headers mean (printed under the terminal table and in the HTML)
LEGEND = ("days = training.days (no failures); wall days = reliability.effective_days; "
          "$ owned / $ cloud = economics.run_cost_*_usd; MW = facility power; "
          "go-live = buildout.go_live_days_p50")


def fmt(value: Any, kind: str = "") -> str:
    from clustertwin.report.text import usd

    if value is None:
        return "—"
    if kind == "usd":
        return usd(value)
    if kind == "mw":
        return f"{value / 1000:,.1f}"
    if kind == "days":
        return f"{value:,.1f}"
    if isinstance(value, float):
        return f"{value:,.4g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def columns(table: Any) -> dict[str, list[Any]]:
    """Every column of a sweep table as a Python list (one conversion per view, not per part)."""
    return {n: table.column(n).to_pylist() for n in table.column_names}


def ranking_rows(table: Any, choice: Choice, swept: list[str], limit: int = 15,
                 with_keys: bool = True,
                 cols: dict[str, list[Any]] | None = None) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the ranked scenarios (best first), marking the Pareto set.
    ``cols``: the table's :func:`columns` when the caller has them already."""
    cols = cols if cols is not None else columns(table)
    metrics = [m for m in METRICS if m[0] in cols]
    header = ["#", "scenario", *swept, *(m[1] for m in metrics), "Pareto"]
    front = set(choice.pareto)
    out = []
    for rank, i in enumerate(choice.ranked[:limit], start=1):
        out.append([str(rank), str(cols["point"][i]), *(fmt(cols[k][i]) for k in swept),
                    *(fmt(cols[c][i], kind) for c, _, kind in metrics), "yes" if i in front else ""])
    if not with_keys:  # the label already names the swept values
        drop = set(range(2, 2 + len(swept)))
        header = [h for k, h in enumerate(header) if k not in drop]
        out = [[c for k, c in enumerate(r) if k not in drop] for r in out]
    return header, out


def _kind(column: str) -> str:
    return "usd" if column.endswith("_usd") else "days" if column.endswith("_days") else ""


def print_choice(sw: Any, table: Any, choice: Choice, console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    from clustertwin.sweep.table import swept_of

    console = console or Console()
    swept = swept_of(table)
    cols = columns(table)
    header, rows = ranking_rows(table, choice, swept, with_keys=False, cols=cols)
    req = " and ".join(r.text for r in choice.requirements) or "none"
    t = Table(title=terminal_text(f"{sw.title}: ranked by {choice.objective} (requirements: {req})"))
    for h in header:
        t.add_column(h, justify="left" if h in ("scenario", "#") else "right")
    for k, cells in enumerate(rows):
        t.add_row(*map(terminal_text, cells), style="bold green" if k == 0 else None)
    console.print(t)
    console.print(LEGEND, style="dim")
    errors = [(cols["point"][i], e) for i, e in enumerate(cols["error"]) if e]
    n = table.num_rows
    console.print(f"{len(choice.feasible)} of {n} scenarios meet the requirements; {len(errors)} failed to plan.")
    if choice.best is not None:
        console.print(f"[bold]best:[/bold] {cols['point'][choice.best]} "
                      f"({choice.column} = {fmt(cols[choice.column][choice.best], _kind(choice.column))})")
    elif choice.best_by_job:  # rows train different models: one ranking per model, never across
        console.print(f"[bold]ranked within each model[/bold] ({len(choice.jobs)} models/token counts; "
                      "their costs and dates are not comparable)")
        for j, i in zip(choice.jobs, choice.best_by_job, strict=True):
            console.print(f"[bold]best:[/bold] {cols['point'][i]} for {j} "
                          f"({choice.column} = {fmt(cols[choice.column][i], _kind(choice.column))})")
    else:
        console.print("[bold red]no scenario meets the requirements[/bold red]")
    if choice.pareto:
        names = ", ".join(str(cols["point"][i]) for i in choice.pareto)
        console.print(f"Pareto set ({choice.cost_column} vs {DAYS}): {names}")
    for label, err in errors[:5]:
        console.print(f"[yellow]failed[/yellow] {label}: {err}")
    if len(errors) > 5:
        console.print(f"... and {len(errors) - 5} more failures (column 'error' of sweep.csv)")


def html_table(header: list[str], rows: list[list[str]], highlight: int | None = 0) -> str:
    head = "".join(f"<th>{html_text(h)}</th>" for h in header)
    body = "".join(
        "<tr{}>{}</tr>".format(" style='background:#e8f5e9;font-weight:600'" if k == highlight else "",
                               "".join(f"<td>{html_text(c)}</td>" for c in r))
        for k, r in enumerate(rows))
    return f"<table class='data'><tr>{head}</tr>{body}</table>"
