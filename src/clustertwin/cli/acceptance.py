"""``clustertwin acceptance`` (the test plan) and ``clustertwin check`` (the health report);
``plan --measured`` calls :func:`plan_measured`. Thin: parse, call, print or write."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from clustertwin.cli.common import CatalogOpt, JsonOpt, ScenarioArg, handle_user_errors

OutOpt = Annotated[Optional[Path], typer.Option("--out", help="write the files into this folder")]  # noqa: UP045
ForceOpt = Annotated[bool, typer.Option("--force", help="overwrite files clustertwin did not write")]


def _print_table(title: str, head: list[str], rows: list[list[str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    from clustertwin.quoting import terminal_text

    t = Table(*head, title=terminal_text(title))
    for r in rows:
        t.add_row(*r)
    Console().print(t)


def acceptance_cmd(scenario: ScenarioArg = None, json_out: JsonOpt = False, out: OutOpt = None,
                   force: ForceOpt = False, catalog: CatalogOpt = None) -> None:
    """The acceptance test plan: expected value and pass/warn/fail band of every test, with the
    nccl-tests / dcgmi command lines to run (acceptance.json, acceptance.txt with --out)."""
    from clustertwin.acceptance.plan import build_plan
    from clustertwin.acceptance.report import plan_rows
    from clustertwin.cli.common import OutputDir, emit_json, load_inputs, to_json

    folder = OutputDir(out, ["acceptance.json", "acceptance-commands.txt"], force) if out else None
    scen, cat = load_inputs(scenario, catalog)
    plan = build_plan(scen, cat)
    doc = plan.to_dict()
    cmds = "\n".join(dict.fromkeys(f"# {c.id.split('@')[0]} ({c.scope})\n{c.command}" for c in plan.checks)) + "\n"
    if folder is not None:
        folder.write_all({"acceptance.json": to_json(doc) + "\n", "acceptance-commands.txt": cmds})
    if json_out:
        emit_json(doc)
        return
    _print_table(f"Acceptance plan: {plan.scenario} ({plan.nodes} x {plan.node_id}, {plan.fabric_id})",
                 ["test", "scope", "expected", "pass >=", "warn >=", "unit", "published"], plan_rows(plan))
    for x in plan.crosschecks:
        typer.echo(f"cross-check {x['id']}: twin {x['twin']} {x['unit']} vs published "
                   f"{x['published_low']}-{x['published_high']} -> {'within' if x['within'] else 'OUTSIDE'}")
    typer.echo("\ncommands:\n" + cmds)
    if folder is not None:
        typer.echo(f"wrote {out / 'acceptance.json'} and {out / 'acceptance-commands.txt'}")


def _load_all(nccl: list[Path], dcgm: list[Path], burnin: list[Path], ibnet: Path | None):
    """Every file, read by the importer its content calls for (the option is a hint)."""
    from clustertwin.acceptance.importers import burnin as bi
    from clustertwin.acceptance.importers import dcgm as dc
    from clustertwin.acceptance.importers import ibnet as ib
    from clustertwin.acceptance.importers import nccl as nc
    from clustertwin.acceptance.importers.common import read_text
    from clustertwin.acceptance.importers.detect import sniff
    from clustertwin.errors import Problem, UsageError, UserError

    loaders = {"nccl": nc.load, "dcgm": dc.load, "burnin": bi.load, "ibnet": ib.load}
    problems, reports = [], []
    got: dict[str, list[Any]] = {"nccl": [], "dcgm": [], "burnin": [], "ibnet": []}
    given = ([("nccl", p) for p in nccl] + [("dcgm", p) for p in dcgm]
             + [("burnin", p) for p in burnin] + ([("ibnet", ibnet)] if ibnet else []))
    for hint, path in given:
        try:
            kind = sniff(read_text(path, f"--{hint}")) or hint
            data, rep = loaders[kind](path)
        except UserError as exc:
            problems.extend(exc.problems)
            continue
        got[kind].append(data)
        reports.append(rep.to_dict() | {"given_as": f"--{hint}", "recognised_as": kind})
    if problems:
        raise UsageError(problems)
    if len(got["ibnet"]) > 1:
        raise UsageError([Problem(str(ibnet), "--ibnet", "more than one ibnetdiscover output "
                                  "given (by option or by content); give one per fabric")])
    return got, reports


def _merge_burnin(parts: list[Any]) -> Any:
    if len(parts) <= 1:
        return parts[0] if parts else None
    import numpy as np

    from clustertwin.acceptance.importers.burnin import BurnIn
    from clustertwin.errors import Problem, UsageError

    if len({p.precision for p in parts}) > 1:
        raise UsageError([Problem("--burnin", "precision", "all burn-in files must use one precision")])
    cat = {f: np.concatenate([getattr(p, f) for p in parts]) for f in
           ("node", "gpu", "serial", "tflops", "max_temp_c", "errors")}
    hours = None
    if any(p.hours is not None for p in parts):
        hours = np.concatenate([p.hours if p.hours is not None else np.full(len(p), np.nan) for p in parts])
    return BurnIn(",".join(p.source for p in parts), precision=parts[0].precision, hours=hours, **cat)


def run_check(scen: Any, cat: Any, nccl: list[Path], dcgm: list[Path], burnin: list[Path],
              ibnet: Path | None) -> tuple[Any, Any]:
    """(HealthReport, AcceptancePlan) of the files against the scenario."""
    from clustertwin.acceptance.coverage import coverage
    from clustertwin.acceptance.curves import busbw_curves
    from clustertwin.acceptance.grade import HealthReport, Imported, health
    from clustertwin.acceptance.model import model_for
    from clustertwin.acceptance.plan import build_plan
    from clustertwin.design.site.inventory import build_inventory
    from clustertwin.export.stage import export_design

    got, reports = _load_all(nccl, dcgm, burnin, ibnet)
    from clustertwin.acceptance.bounds import apply_bounds, limits_for

    got = apply_bounds(got, reports, limits_for(scen, cat))  # never grade beyond physics
    plan = build_plan(scen, cat)
    design = export_design(scen, cat)
    wiring, nodes, designed = None, None, None
    if got["ibnet"]:
        from clustertwin.acceptance.wiring import compare, expected_compute_links

        designed = expected_compute_links(scen, cat, design)
        wiring = compare(designed, got["ibnet"][0])
        nodes = sorted({a for a, ap, *_ in designed if not str(ap).isdigit()})
    model = model_for(scen, cat)
    rep = health(plan, model, Imported(_merge_burnin(got["burnin"]), got["dcgm"], got["nccl"],
                                       wiring, reports), nodes)
    cov = coverage(rep, plan, build_inventory(scen, cat, design), designed)
    curves = busbw_curves(got["nccl"], rep.nccl, model)
    return HealthReport(**{**rep.__dict__, "coverage": cov, "curves": tuple(curves)}), plan


# a command: one parameter per command-line option (typer reads this signature)
def check_cmd(
    scenario: ScenarioArg = None,
    nccl: Annotated[Optional[list[Path]], typer.Option("--nccl", help="nccl-tests output (text or -J JSON); repeatable")] = None,  # noqa: UP045
    dcgm: Annotated[Optional[list[Path]], typer.Option("--dcgm", help="dcgmi diag -j output, one per node (dcgm-NODE.json); repeatable")] = None,  # noqa: UP045
    burnin: Annotated[Optional[list[Path]], typer.Option("--burnin", help="burn-in CSV: node,gpu,serial,tflops,max_temp_c,errors; repeatable")] = None,  # noqa: UP045
    ibnet: Annotated[Optional[Path], typer.Option("--ibnet", help="ibnetdiscover output of the compute fabric")] = None,  # noqa: UP045
    out: OutOpt = None, json_out: JsonOpt = False, force: ForceOpt = False, catalog: CatalogOpt = None,
) -> None:
    """Grade measured acceptance results against the twin: check.json and check.html."""
    from clustertwin.acceptance.report import check_doc, summary_rows
    from clustertwin.cli.common import OutputDir, emit_json, load_inputs, print_rows, to_json
    from clustertwin.errors import UsageError
    from clustertwin.report.views.acceptance import render_html

    if not (nccl or dcgm or burnin or ibnet):
        raise UsageError("give at least one of --nccl, --dcgm, --burnin, --ibnet", "check")
    folder = OutputDir(out, ["check.json", "check.html"], force) if out else None
    scen, cat = load_inputs(scenario, catalog)
    rep, plan = run_check(scen, cat, nccl or [], dcgm or [], burnin or [], ibnet)
    doc = check_doc(rep, plan)
    if folder is not None:
        folder.write_all({"check.json": to_json(doc) + "\n", "check.html": render_html(rep, plan)})
    if json_out:
        emit_json(doc)
        return
    print_rows(f"Health check: {plan.scenario}", summary_rows(rep))
    for a in rep.actions():
        typer.echo(f"- {a}")
    if folder is not None:
        typer.echo(f"wrote {out / 'check.json'} and {out / 'check.html'}")


def plan_measured(scen: Any, cat: Any, measured: Path, json_out: bool, folder: Any) -> None:
    """``plan --measured check.json``: the catalog plan and the re-predicted plan side by side."""
    from clustertwin.acceptance.recalibrate import read_measured, recalibrate
    from clustertwin.cli.common import emit_json, to_json

    rec = recalibrate(scen, cat, read_measured(measured))
    doc = {**rec.measured.to_dict(), "recalibration": rec.to_dict()}  # the plan's own stays as is
    if folder is not None:
        from clustertwin.report.views.acceptance import recalibration_html

        folder.write_all({"plan.json": to_json(doc) + "\n", "plan.html": recalibration_html(rec)})
    if json_out:
        emit_json(doc)
        return
    _print_table("Catalog plan vs measured plan", ["", "catalog", "measured"], [list(r) for r in rec.rows()])
    note = rec.figures.get("note")
    if note:
        typer.echo(note)


def register(app: typer.Typer) -> None:
    app.command("acceptance")(handle_user_errors(acceptance_cmd))
    app.command("check")(handle_user_errors(check_cmd))
