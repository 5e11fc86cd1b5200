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
    "decision": "Decision: build, colocate, lease or rent",
}


def render(plan: Any, console: Any = None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from clustertwin.quoting import comment_text
    from clustertwin.report import views

    console = console or Console()
    decision = plan.decision
    if decision is not None:  # the answer first: trained by when, via which route, for how much
        console.print(f"[bold]{decision.headline()}[/bold]", markup=True, highlight=False)
    s = plan.scenario
    model, training = s.model, s.training
    job = (f"{comment_text(model.name)} · {training.tokens / 1e12:.2f}T tokens · "
           if model is not None and training is not None else "design only · ")
    # names are free text: no terminal control characters, no rich markup
    head = f"[bold]{escape(comment_text(s.name))}[/bold]  {escape(job)}{s.cluster.gpu} in {s.cluster.node}"
    console.print(head)
    if decision is not None:
        console.print(options_table(decision))
        for label, value in views.rows(decision):
            if label in ("margin", "drivers", "break-even"):  # how sure, and what would change it
                console.print(f"[dim]{label}:[/dim] {escape(value)}", highlight=False)
    grid = Table.grid(padding=(0, 2))
    for name, res in plan.blocks():
        if name == "decision":
            continue
        t = Table(title=TITLES.get(name, name), title_justify="left", show_header=False,
                  box=None, pad_edge=False, min_width=38)
        t.add_column(style="dim")
        t.add_column(justify="right")
        for label, value in views.rows(res):
            t.add_row(label, value)
        grid.add_row(t)
    console.print(grid)
    for w in plan.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")


def options_table(decision: Any) -> Any:
    """The routes side by side: one column per route."""
    from rich.table import Table

    t = Table(title=TITLES["decision"], title_justify="left", box=None, pad_edge=False)
    t.add_column("", style="dim")
    for o in decision.options:
        t.add_column(o.mode + (" *" if o.mode == decision.best else ""), justify="right")
    rows = [
        ("GPUs", lambda o: f"{o.gpus:,}"),
        ("ready", lambda o: o.ready_date.isoformat()),
        ("start", lambda o: o.start_date.isoformat()),
        ("wall-clock days", lambda o: f"{o.wall_clock_days_p50:.0f}"),
        ("trained by P50", lambda o: o.trained_by_p50.isoformat()),
        ("trained by P90", lambda o: o.trained_by_p90.isoformat()),
        ("MFU", lambda o: f"{o.mfu:.1%}"),
        ("cost, usage basis" + (" *" if decision.basis == "usage" else ""), lambda o: usd(o.cost_usage_usd)),
        ("cost, exit basis" + (" *" if decision.basis == "exit" else ""), lambda o: usd(o.cost_exit_usd)),
        ("$/GPU-hour", lambda o: f"${o.usd_per_gpu_hour:.2f}"),
        (f"NPV at {decision.discount_rate:.0%}", lambda o: usd(o.npv_usd)),
        ("peak cash", lambda o: usd(o.cash_peak_usd)),
        ("meets target" + (f" ({decision.target_date})" if decision.target_date else ""),
         lambda o: "yes" if o.meets_target else "no"),
    ]
    if any(o.p_best is not None for o in decision.options):
        rows.append(("chance best", lambda o: f"{o.p_best:.0%}" if o.p_best is not None else "—"))
        if decision.target_date is not None:
            rows.append(("chance meets target",
                         lambda o: f"{o.p_meets_target:.0%}" if o.p_meets_target is not None else "—"))
    if decision.target_date is not None:
        rows.append(("GPUs to meet it (est.)",
                     lambda o: "cannot" if o.gpus_to_meet_target is None else f"{o.gpus_to_meet_target:,}"))
    for label, cell in rows:
        t.add_row(label, *[cell(o) for o in decision.options])
    return t
