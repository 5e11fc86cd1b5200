"""Terminal summary of a plan (rich)."""

from __future__ import annotations

from typing import Any

from clustertwin.fmt import plural, usd

__all__ = ["TITLES", "plural", "render", "usd"]


TITLES = {
    "training": "Training",
    "design": "Design",
    "reliability": "Reliability",
    "economics": "Economics",
    "buildout": "Build-out",
}


def render(plan: Any, console: Any = None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from clustertwin.quoting import comment_text

    console = console or Console()
    s = plan.scenario
    model, training = getattr(s, "model", None), getattr(s, "training", None)
    job = (f"{comment_text(model.name)} · {training.tokens / 1e12:.2f}T tokens · "
           if model is not None and training is not None else "design only · ")
    # names are free text: no terminal control characters, no rich markup
    head = f"[bold]{escape(comment_text(s.name))}[/bold]  {escape(job)}{s.cluster.gpu} in {s.cluster.node}"
    console.print(head)
    grid = Table.grid(padding=(0, 2))
    for name, res in plan.blocks():
        t = Table(title=TITLES.get(name, name), title_justify="left", show_header=False,
                  box=None, pad_edge=False, min_width=38)
        t.add_column(style="dim")
        t.add_column(justify="right")
        for label, value in res.summary_rows():
            t.add_row(label, value)
        grid.add_row(t)
    console.print(grid)
    for w in plan.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")
