"""What ``clustertwin export KIND`` writes, as data: :func:`build_files` (file name -> text or
bytes) for one kind or all. Pure: writes nothing. The command (``export/cli.py``) and the web
app's downloads (``serve/files.py``) both call it, so both give the same files."""

from __future__ import annotations

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
