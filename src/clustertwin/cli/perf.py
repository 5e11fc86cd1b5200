"""Commands of the perf stage: ``estimate`` (top parallelism plans) and ``calibration``
(predicted vs published). Imports stay inside the commands so ``--help`` is fast."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer


def _fail(exc: Exception) -> None:
    for line in exc.lines():  # type: ignore[attr-defined]
        typer.echo(f"error: {line}", err=True)
    raise typer.Exit(2)


def top_plans(scenario: Any, catalog: Any, k: int) -> dict[str, Any]:
    """The best estimate, the top ``k`` plans and the rejected ones (as plain data)."""
    import numpy as np

    from clustertwin.deadline import train_with_search
    from clustertwin.perf.costmodel import RANK_ORDERS
    from clustertwin.perf.stage import TIME_KEYS

    est, res = train_with_search(scenario, catalog)
    keys = ("step_time_s", "tokens_per_s", "mfu", "hfu", TIME_KEYS[0], "compute_s", *TIME_KEYS[1:])

    def describe(i: int) -> dict[str, Any]:
        row = res.row(i)
        return {
            "plan": res.plan(i),
            "gpus": int(row.get("gpus", est.gpus)),
            "global_batch_seqs": int(row.get("batch_seqs", est.global_batch_seqs)),
            "rank_order": RANK_ORDERS[int(row.get("rank_order", 0))],
            **{k2: row[k2] for k2 in keys},
            "memory_gib": row["memory_bytes"] / 2**30,
            "memory": {
                "states_gib": row["state_bytes"] / 2**30,
                "activations_gib": row["activation_bytes"] / 2**30,
                "reserve_gib": row["reserve_bytes"] / 2**30,
            },
        }

    top = [describe(int(i)) for i in res.ranked()[:k]]
    oom = np.flatnonzero(~res.metrics["fits"])
    oom = oom[np.argsort(res.metrics["step_time_s"][oom], kind="stable")][:k]
    hbm = catalog.gpu(scenario.cluster.gpu).hbm_gib
    rejected = [
        {
            **describe(int(i)),
            "reason": f"out of memory: needs "
            f"{res.metrics['memory_bytes'][i] / 2**30:.1f} GiB of {hbm:g} GiB",
        }
        for i in oom
    ]
    from clustertwin.perf.calreport import published_plans

    published = published_plans(scenario, catalog, est.gpus, est.step_time_s)
    steps = res.metrics["step_time_s"][res.ranked()]
    for p in published:
        if p["fits"]:  # evaluated plans the search ranks ahead of the published one
            p["plans_ahead"] = int((steps < p["step_time_s"] * (1 - 1e-9)).sum())
    return {
        "best": est.to_contract(),
        "top": top,
        "published": published,
        "rejected": rejected,
        "not_built": dict(res.pruned),
        "evaluated": res.size,
        "out_of_memory": int((~res.metrics["fits"]).sum()),
    }


def _plan_str(p: dict[str, Any]) -> str:
    from clustertwin.perf.search import fmt_plan

    return fmt_plan(p)


def _print_calibration(
    rows: list[dict[str, Any]], summ: dict[str, Any], classes: dict[str, Any], free: bool
) -> None:
    """The calibration table, its summary and the error by class of run."""
    from rich.console import Console
    from rich.table import Table

    from clustertwin.perf import calreport

    t = Table(title="training-time model vs published runs")
    cols = ["row", "compared", "predicted", "published", "error", "plan"]
    for col in cols + (["search vs published plan"] if free else []):
        t.add_column(col)
    for r in rows:
        extra = []
        if "search" in r:
            s = r["search"]
            extra = [f"{s['speedup']:.2f}x: {calreport.fmt_changed(s['changed'])}"]
        t.add_row(
            r["id"] + (" (loose)" if r["loose"] else ""),
            r["compared"],
            f"{r['predicted']:.4g}",
            f"{r['published']:.4g}",
            f"{r['error']:+.1%}",
            _plan_str(r["plan"]),
            *extra,
        )
    con = Console()
    con.print(t)
    con.print(
        f"step-time rows: mean |error| {summ['strict_mean_abs_error']:.1%}, max "
        f"{summ['strict_max_abs_error']:.1%} ({summ['strict_rows']} rows); loose rows: max "
        f"{summ['loose_max_abs_error']:.1%} ({summ['loose_rows']} rows); all rows mean "
        f"{summ['all_mean_abs_error']:.1%}"
    )
    for c, st in classes.items():
        con.print(
            f"{c}: {st['rows']} rows, median |error| {st['median_abs_error']:.1%}, mean "
            f"signed {st['mean_signed_error']:+.1%} (+ = predicted slower), max "
            f"{st['max_abs_error']:.1%}"
        )


def _print_estimate(name: str, out: dict[str, Any]) -> None:
    """The best plan's header and notes, the top plans with where their time goes, the fastest
    rejected plans, published plans for the same job and the plans never built."""
    from rich.console import Console
    from rich.table import Table

    con = Console()
    b = out["best"]
    con.print(
        f"[bold]{name}[/]: {b['gpus']:,} of {b['installed_gpus']:,} GPUs, batch "
        f"{b['global_batch_seqs']:,} sequences, {out['evaluated']:,} plans evaluated, "
        f"{out['out_of_memory']:,} out of memory"
    )
    for note in b["notes"]:
        con.print(f"note: {note}")
    peak = f"MFU of the {b['peak_tflops_per_gpu']:,.0f} TFLOP/s dense {b['precision']} peak"
    t = Table(title=f"top {len(out['top'])} plans (seconds per step; {peak})")
    for col in ("plan", "step s", "MFU", "GiB", "where the time goes"):
        t.add_column(col, overflow="fold")
    for r in out["top"]:
        parts = {
            "compute": r["compute_s"],
            "bubble": r["bubble_s"],
            "TP": r["tp_comm_s"],
            "CP": r["cp_comm_s"],
            "EP": r["ep_comm_s"],
            "PP": r["pp_comm_s"],
            "DP": r["dp_exposed_s"],
            "ZeRO-3": r["zero3_exposed_s"],
            "optim": r["optimizer_s"],
        }
        where = " ".join(f"{k} {v:.2f}" for k, v in parts.items() if v >= 0.005)
        t.add_row(
            _plan_str(r["plan"]),
            f"{r['step_time_s']:.2f}",
            f"{r['mfu']:.1%}",
            f"{r['memory_gib']:.1f}",
            where,
        )
    con.print(t)
    if out["rejected"]:
        r2 = Table(title="fastest rejected plans")
        r2.add_column("plan")
        r2.add_column("step s")
        r2.add_column("why rejected")
        for r in out["rejected"]:
            r2.add_row(_plan_str(r["plan"]), f"{r['step_time_s']:.2f}", r["reason"])
        con.print(r2)
    for p in out["published"]:
        if not p["fits"]:
            con.print(f"published plan {p['pinned']} ({p['source']}): does not fit here")
            continue
        con.print(
            f"published plan for this job ({p['source']}): {_plan_str(p['plan'])}, "
            f"{p['step_time_s']:.2f} s per step; the search's plan is "
            f"{p['search_speedup']:.2f}x faster under the same model "
            f"({p['plans_ahead']:,} plans rank ahead of it)"
        )
    for reason, n in sorted(out["not_built"].items(), key=lambda x: -x[1]):
        con.print(f"not built: {reason} ({n})")


def _calibration_rows(results: list[Any], searched: list[Any]) -> list[dict[str, Any]]:
    """One JSON row per calibration result (``search``: the free search's comparison, if run)."""
    from clustertwin.perf import calreport

    return [
        {
            "id": r.row.id,
            "source": r.row.source,
            "compared": r.row.kind,
            "unit": r.row.measured_unit,
            "predicted": r.predicted,
            "published": r.published,
            "error": r.error,
            "loose": r.row.loose,
            "step_time_s": r.step_time_s,
            "plan": r.plan,
            "fits": r.fits,
            "fits_within_memory_tolerance_only": r.tight,
            "memory_gib": r.memory_gib,
            "stack": r.row.stack,
            "class": calreport.row_class(r),
            **({"search": s} if s is not None else {}),
        }
        for r, s in zip(results, searched, strict=True)
    ]


def _crossval(as_json: bool, catalog: list[Path], csv_path: Path | None) -> None:
    """``calibration --cv``: every row's error and leave-one-source-out error, the summary and
    the days band of every stack (clustertwin.perf.crossval)."""
    from clustertwin.catalog import load_catalog
    from clustertwin.cli.common import emit_json
    from clustertwin.errors import Problem, UsageError, UserError
    from clustertwin.perf import calibration as cal
    from clustertwin.perf import calreport, crossval

    try:
        cat = load_catalog(catalog)
        if csv_path is not None and not csv_path.is_file():
            raise UsageError([Problem(str(csv_path), "--csv", "file not found")])
        rows = cal.load_rows(csv_path) if csv_path is not None else calreport.published_rows()
        if not rows:
            raise UsageError([Problem("calibration", "--csv", "no calibration rows found; give --csv FILE")])
        if len({crossval.source_key(r.source) for r in rows}) < 2:  # nothing left to fit a fold on
            raise UsageError([Problem(str(csv_path or "calibration"), "source",
                                      "leave-one-source-out needs rows from at least 2 sources")])
        from clustertwin.reliability.goodput import row_goodput

        res = crossval.cross_validate(cat, rows, goodput=lambda r: row_goodput(cat, r))
    except UserError as exc:
        _fail(exc)
        return
    out = {"rows": [crossval.row_dict(r) for r in res], "summary": crossval.summary(res),
           "whole_run": crossval.whole_run_summary(res), "bands": crossval.stack_bands(cat, res)}
    if as_json:
        emit_json(out)
        return
    _print_crossval(out)


def _print_crossval(out: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="leave-one-source-out check (+ = predicted faster than published)")
    for col in ("row", "stack", "error", "LOSO (scale)", "LOSO (refit)", "band (source left out)",
                "in band"):
        t.add_column(col)
    for r in out["rows"]:
        wall = f" (/goodput {r['wall_clock_error']:+.1%})" if r.get("wall_clock_error") is not None else ""
        t.add_row(r["id"] + (" (whole run)" if r["whole_run"] else ""), r["stack"],
                  f"{r['error']:+.1%}{wall}", f"{r['loso_error']:+.1%}",
                  "" if r.get("refit_error") is None else f"{r['refit_error']:+.1%}",
                  f"{r['band_low']:+.1%} .. {r['band_high']:+.1%}", "yes" if r["in_band"] else "no")
    con = Console()
    con.print(t)
    s = out["summary"]
    con.print(f"{s['rows']} steady-state rows from {s['sources']} sources (in-sample median "
              f"|error| {s['in_sample_median_abs_err']:.1%}); leave-one-source-out, one scale refitted: "
              f"median {s['median_abs_err']:.1%}, mean signed {s['mean_signed_err']:+.1%}")
    if "refit_median_abs_err" in s:
        con.print(f"leave-one-source-out, every fitted constant refitted: median |error| "
                  f"{s['refit_median_abs_err']:.1%}, mean signed {s['refit_mean_signed_err']:+.1%} "
                  f"(median over sources {s['refit_source_median_abs_err']:.1%}); "
                  f"{s['within_band']:.0%} inside the band computed without their source")
    w = out.get("whole_run") or {}
    if w:
        con.print(f"{w['rows']} whole-run rows: against steady state median |error| "
                  f"{w['steady_median_abs_err']:.1%} (mean {w['steady_mean_signed_err']:+.1%}); against "
                  f"steady state / goodput {w['goodput_median_abs_err']:.1%} (mean {w['goodput_mean_signed_err']:+.1%})")
    for sid, b in out["bands"].items():
        con.print(f"days band {sid}: {b['low']:+.1%} .. {b['high']:+.1%} ({b['rows']} rows)")


def register(app: typer.Typer) -> None:
    @app.command("estimate")
    def estimate_cmd(
        scenario: Path = typer.Argument(..., help="scenario file (YAML/TOML)"),
        top: int = typer.Option(5, "--top", min=1, help="plans to show"),
        as_json: bool = typer.Option(False, "--json", help="print JSON"),
        catalog: list[Path] = typer.Option(None, "--catalog", help="extra catalog folder"),
    ) -> None:
        """Top parallelism plans with time, memory and communication breakdowns."""
        from clustertwin.cli.common import emit_json, load_inputs
        from clustertwin.errors import UserError

        try:
            scen, cat = load_inputs(scenario, catalog or [])
            out = top_plans(scen, cat, top)
        except UserError as exc:
            _fail(exc)
            return
        if as_json:
            emit_json(out)
            return
        _print_estimate(scen.name, out)

    @app.command("calibration")
    def calibration_cmd(
        as_json: bool = typer.Option(False, "--json", help="print JSON"),
        catalog: list[Path] = typer.Option(None, "--catalog", help="extra catalog folder"),
        csv_path: Path = typer.Option(
            None, "--csv", help="your own rows to compare (default: the packaged calibration table)"
        ),
        free: bool = typer.Option(
            False, "--search", help="also leave every key to the search and compare plans"
        ),
        cv: bool = typer.Option(
            False, "--cv", help="leave-one-source-out check over the calibration CSV and the "
            "published-runs table (or --csv): LOSO error per row with every fitted constant "
            "refitted without the row's source (and with one scale refitted), the days band per stack"
        ),
    ) -> None:
        """Predicted vs published for every row of the calibration CSV."""
        if cv:
            _crossval(as_json, catalog or [], csv_path)
            return
        from clustertwin.catalog import load_catalog
        from clustertwin.cli.common import emit_json
        from clustertwin.errors import Problem, UsageError, UserError
        from clustertwin.perf import calibration as cal
        from clustertwin.perf import calreport

        try:
            cat = load_catalog(catalog or [])
            if csv_path is not None and not csv_path.is_file():
                raise UsageError([Problem(str(csv_path), "--csv", "file not found")])
            skipped: list[str] = []
            if csv_path is not None:
                results, skipped = cal.run_table(cat, csv_path)
                if not results:  # nothing could be compared: an error, not an empty table
                    why = f"{len(skipped)} skipped, first: {skipped[0]}" if skipped else "the table has no rows"
                    raise UsageError([Problem(str(csv_path), "--csv", f"no row could be compared; {why}")])
            else:
                results = cal.run_all(cat)
        except UserError as exc:
            _fail(exc)
            return
        summ = cal.summary(results)
        classes = calreport.by_class(results)
        searched = [calreport.free_vs_published(cat, r) if free else None for r in results]
        rows = _calibration_rows(results, searched)
        for line in skipped:
            typer.echo(f"skipped: {line}", err=True)
        if as_json:
            emit_json({"rows": rows, "summary": summ, "classes": classes, "skipped": skipped})
            return
        _print_calibration(rows, summ, classes, free)
