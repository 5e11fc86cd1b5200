"""``clustertwin compare``: several plans side by side, in the terminal and in compare.html."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clustertwin.fmt import dotted as value
from clustertwin.sweep.report import fmt

#: rows of the side-by-side table: (plan key, label, format)
ROWS = (
    ("training.gpus", "GPUs in the run", ""),
    ("training.parallelism", "parallelism (tp/pp/cp/ep/dp)", "par"),
    ("training.step_time_s", "step time s", ""),
    ("training.mfu", "MFU", "pct"),
    ("training.memory_gib_per_gpu", "memory GiB/GPU", ""),
    ("training.days", "days (no failures)", "days"),
    ("reliability.mtbf_h", "job MTBF h", ""),
    ("reliability.ettr_mean", "ETTR", "pct"),
    ("reliability.effective_days", "wall-clock days", "days"),
    ("design.nodes", "nodes", ""),
    ("design.racks", "racks", ""),
    ("design.power.facility_kw", "facility MW", "mw"),
    ("design.cooling.mode", "cooling", ""),
    ("economics.capex_usd", "capex", "usd"),
    ("economics.opex_usd_per_month", "opex / month", "usd"),
    ("economics.run_cost_owned_usd", "run $ owned", "usd"),
    ("economics.run_cost_cloud_usd", "run $ cloud", "usd"),
    ("buildout.go_live_days_p50", "go-live p50 days", "days"),
    ("buildout.go_live_days_p90", "go-live p90 days", "days"),
    ("decision.best", "best route", ""),
    ("decision.trained_by", "trained by (best route)", ""),
    ("decision.cost_usd", "cost to model (best route)", "usd"),
)


@dataclass(frozen=True)
class Compared:
    name: str
    source: str
    doc: dict[str, Any] | None     # plan JSON, None when it failed
    error: str | None = None


def compare_plans(paths: list[Path], catalog_dirs: list[Path]) -> list[Compared]:
    """Load every scenario first (all problems reported at once), then plan each."""
    from clustertwin.catalog import load_catalog
    from clustertwin.errors import UsageError, UserError
    from clustertwin.plan import make_plan
    from clustertwin.scenario import load_scenario

    if len(paths) < 2:
        raise UsageError("give two or more scenario files to compare", "compare")
    cat = load_catalog(catalog_dirs)
    scenarios, problems = [], []
    for p in paths:
        try:
            scenarios.append(load_scenario(p, cat))
        except UserError as exc:
            problems += exc.problems
    if problems:
        raise UsageError(problems)
    out = []
    for p, s in zip(paths, scenarios, strict=True):
        try:
            out.append(Compared(s.name, str(p), make_plan(s, cat).to_dict()))
        except UserError as exc:  # an infeasible scenario is a column saying why
            out.append(Compared(s.name, str(p), None, "; ".join(exc.lines())))
    return out


def cell(v: Any, kind: str) -> str:
    if v is None:
        return "—"
    if kind == "par" and isinstance(v, dict):
        return "/".join(str(v.get(k, "?")) for k in ("tp", "pp", "cp", "ep", "dp"))
    if kind == "pct" and isinstance(v, int | float):
        return f"{100 * v:.1f}%"
    return fmt(v, kind)


def side_by_side(plans: list[Compared]) -> list[tuple[str, list[str], bool]]:
    """(label, one cell per plan, whether the plans differ) for every row."""
    rows = []
    for key, label, kind in ROWS:
        cells = [cell(value(p.doc, key), kind) if p.doc else "—" for p in plans]
        rows.append((label, cells, len(set(cells)) > 1))
    rows.append(("error", [p.error or "" for p in plans], any(p.error for p in plans)))
    return rows


def print_compare(plans: list[Compared], console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    t = Table(title="clustertwin compare (rows that differ in bold yellow)")
    t.add_column("")
    for p in plans:
        t.add_column(p.name, justify="right", overflow="fold")
    for label, cells, differs in side_by_side(plans):
        if label == "error" and not differs:
            continue
        style = "bold yellow" if differs else "dim"
        t.add_row(label, *cells, style=style)
    console.print(t)


def render_compare(plans: list[Compared]) -> str:
    from clustertwin.report.html import render_page
    from clustertwin.sweep.compare_figs import breakdown_figures, grouped_bars
    from clustertwin.sweep.report import html_table

    rows = side_by_side(plans)
    header = ["", *(p.name for p in plans)]
    body = [[label + (" ≠" if differs else ""), *cells] for label, cells, differs in rows
            if label != "error" or differs]
    sections = [
        {"title": "Side by side", "html": html_table(header, body, highlight=None)
         + "<p class='sub'>≠ marks rows where the scenarios differ.</p>"},
        {"title": "Headline figures", "figures": grouped_bars(plans)},
        {"title": "Where the time and money go", "figures": breakdown_figures(plans)},
    ]
    sub = " vs ".join(f"{p.name} ({p.source})" for p in plans)
    return render_page("clustertwin compare", sections, sub)
