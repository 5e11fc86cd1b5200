"""``clustertwin export KIND SCENARIO --out DIR``: the files the real cluster's tools read.

KIND: inventory, cabling, slurm, kueue, prometheus, grafana, ansible, bom, drawings, dhcp,
netbox, or all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from clustertwin.cli.common import CatalogOpt, ScenarioArg

KINDS = ("inventory", "cabling", "slurm", "kueue", "prometheus", "grafana", "ansible", "bom",
         "drawings", "dhcp", "netbox", "all")


def build_files(kind: str, ctx, *, policy: str = "multifactor+backfill",
                host_label: str = "Hostname") -> tuple[dict[str, str], list[str]]:
    """(file name -> text, warnings) for one kind (or all) of export. Pure: writes nothing."""
    from clustertwin.export import tables

    files: dict[str, str] = {}
    warnings: list[str] = []
    kinds = KINDS[:-1] if kind == "all" else (kind,)
    hfu = None
    if "prometheus" in kinds or "grafana" in kinds:
        from clustertwin.export.prometheus import expected_hfu

        hfu, why = expected_hfu(ctx)
        if why:
            warnings.append(why)
    cache: dict = {}

    def links():  # the cabling map, built once for the CSVs and the drawings
        if "cols" not in cache:
            from clustertwin.design.site.cabling import cabling_columns

            cache["cols"] = cabling_columns(ctx.inventory, ctx.design)
        return cache["cols"]

    for k in kinds:
        if k == "inventory":
            from clustertwin.drawings import drawing_files

            files |= {"inventory.csv": tables.inventory_csv(ctx),
                      "inventory.json": tables.inventory_json(ctx)} | drawing_files(ctx, links)
            files |= _ip_files(ctx)
        elif k == "dhcp":
            from clustertwin.export.dhcp import dnsmasq_conf
            from clustertwin.export.ipplan import ip_plan

            files["dnsmasq.conf"] = dnsmasq_conf(ctx, ip_plan(ctx))
        elif k == "netbox":
            from clustertwin.export.netbox import netbox_files

            files |= netbox_files(ctx, links())
        elif k == "cabling":
            files |= tables.cabling_files(ctx, links())
        elif k == "bom":
            from clustertwin.export.bom_files import bom_files

            bom, why = bom_files(ctx)
            files |= bom
            warnings += why
        elif k == "drawings":
            from clustertwin.drawings import drawing_files

            files |= drawing_files(ctx, links)
        elif k == "slurm":
            from clustertwin.export.slurm import slurm_files

            files |= slurm_files(ctx, policy)
        elif k == "kueue":
            from clustertwin.export.kueue import kueue_files

            files |= kueue_files(ctx)
        elif k == "prometheus":
            from clustertwin.export.prometheus import prometheus_files

            files |= prometheus_files(ctx, host_label, hfu)
        elif k == "grafana":
            from clustertwin.export.grafana import grafana_files

            files |= grafana_files(ctx, host_label, hfu)
        elif k == "ansible":
            from clustertwin.export.ansible import ansible_files

            files |= ansible_files(ctx)
    return files, warnings


def _ip_files(ctx) -> dict[str, str]:
    from clustertwin.export.dhcp import addresses_csv, ip_plan_csv
    from clustertwin.export.ipplan import ip_plan

    plan = ip_plan(ctx)
    return {"ip-plan.csv": ip_plan_csv(plan), "addresses.csv": addresses_csv(plan)}


def register(app: typer.Typer) -> None:
    """Add the ``export`` command to ``app``."""
    from clustertwin.cli.common import handle_user_errors

    # a command: one parameter per command-line option (typer reads this signature)
    @app.command("export")
    @handle_user_errors
    def export_cmd(
        kind: Annotated[str, typer.Argument(help="inventory | cabling | slurm | kueue | "
                                            "prometheus | grafana | ansible | bom | drawings | "
                                            "dhcp | netbox | all")],
        scenario: ScenarioArg = None,
        out: Annotated[Path, typer.Option("--out", help="folder to write the files into")] = Path("export"),
        naming: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
            "--naming", help="KEY=VALUE naming option, repeatable: node=gpu, rack=r, "
            "compute=fab, storage=stor, pad=4, ... (see README)")] = None,
        policy: Annotated[str, typer.Option(
            "--policy", help="scheduling policy for slurm.conf, as in 'clustertwin schedule' "
            "(e.g. multifactor+backfill, fifo+backfill+preempt)")] = "multifactor+backfill",
        host_label: Annotated[str, typer.Option(
            "--host-label", help="dcgm-exporter's host label: Hostname (releases before PR "
            "#655) or hostname")] = "Hostname",
        force: Annotated[bool, typer.Option("--force", help="overwrite files in --out that "
                                            "clustertwin did not write")] = False,
        catalog: CatalogOpt = None,
    ) -> None:
        """Write the design as files for the real cluster: inventory (with the IP plan),
        cabling map (lengths, media, part numbers), Slurm, Kueue, Prometheus, Grafana, Ansible,
        DHCP/DNS (dnsmasq), NetBox bulk-import CSVs, the vendor bill of materials (bom.csv,
        bom.xlsx) and drawings to scale (floor-plan.svg, rack-elevations.svg, topology.svg)."""
        import time

        from clustertwin.cli.common import load_inputs
        from clustertwin.design.site.naming import parse_naming
        from clustertwin.errors import Problem, UsageError
        from clustertwin.export.stage import make_context
        from clustertwin.outputs import write_outputs

        t0 = time.perf_counter()
        problems = []
        if kind not in KINDS:
            problems.append(Problem("command line", "KIND",
                                    f"{kind!r} is not one of {', '.join(KINDS)}"))
        if host_label not in ("Hostname", "hostname"):
            problems.append(Problem("command line", "--host-label",
                                    f"{host_label!r}: expected Hostname or hostname"))
        from clustertwin.errors import UserError
        from clustertwin.scheduling.policies import parse_policy

        try:
            parse_policy(policy)
        except UserError as exc:
            problems.extend(exc.problems)
        try:
            names = parse_naming(naming)
        except UserError as exc:
            problems.extend(exc.problems)
        if problems:
            raise UsageError(problems)
        scen, cat = load_inputs(scenario, catalog)
        ctx = make_context(scen, cat, naming=names)
        files, warnings = build_files(kind, ctx, policy=policy, host_label=host_label)
        write_outputs(out, files, force)
        for w in warnings:
            typer.echo(f"warning: {w}", err=True)
        typer.echo(f"wrote {len(files)} files to {out}: {', '.join(sorted(files))}")
        typer.echo(f"({time.perf_counter() - t0:.2f} s)", err=True)
