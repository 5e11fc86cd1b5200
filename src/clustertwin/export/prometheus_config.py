"""``prometheus.yml``: scrape jobs for every exporter the rules and dashboards read, by host
and port, the rules file, and the Alertmanager.

Jobs: ``dcgm-exporter`` on every GPU node (port 9400, dcgm-exporter's default),
``node-exporter`` on every GPU node and management server (9100, node_exporter's default;
its InfiniBand collector feeds the fabric alerts), ``slurm-exporter`` on the Slurm
controllers (8080, vpenso/prometheus-slurm-exporter's default ``-listen-address``). Targets
are grouped per rack with ``rack``, ``su`` and ``pod`` labels, so queries can select a rack or
a scalable unit without a relabelling step. Prometheus and Alertmanager (9093) run on the
first management server. Ports are site settings (:class:`Ports`).
"""

from __future__ import annotations

from dataclasses import dataclass

from clustertwin.export.stage import ExportContext, yaml_text

CONFIG_FILE = "prometheus.yml"


@dataclass(frozen=True)
class Ports:
    dcgm_exporter: int = 9400
    node_exporter: int = 9100
    slurm_exporter: int = 8080
    alertmanager: int = 9093


def _by_rack(ctx: ExportContext, port: int) -> list[dict]:
    groups: dict[str, dict] = {}
    for n in ctx.inventory.nodes:
        g = groups.setdefault(n.rack, {"targets": [], "labels": {
            "rack": n.rack, "su": f"{n.su:03d}", "pod": f"{n.pod:02d}"}})
        g["targets"].append(f"{n.name}:{port}")
    return list(groups.values())


def prometheus_yml(ctx: ExportContext, rules_file: str, ports: Ports = Ports()) -> str:  # noqa: B008
    mgmt = [m.name for m in ctx.inventory.role("management")] or ["localhost"]
    controllers = mgmt[:2]
    node_exp = _by_rack(ctx, ports.node_exporter)
    node_exp.append({"targets": [f"{m}:{ports.node_exporter}" for m in mgmt],
                     "labels": {"role": "management"}})
    doc = {
        "global": {"scrape_interval": "30s", "evaluation_interval": "30s",
                   "external_labels": {"cluster": ctx.cluster_name}},
        "rule_files": [rules_file],
        "alerting": {"alertmanagers": [{"static_configs": [
            {"targets": [f"{mgmt[0]}:{ports.alertmanager}"]}]}]},
        "scrape_configs": [
            {"job_name": "dcgm-exporter", "scrape_interval": "15s",
             "static_configs": _by_rack(ctx, ports.dcgm_exporter)},
            {"job_name": "node-exporter", "static_configs": node_exp},
            {"job_name": "slurm-exporter", "scrape_interval": "60s", "static_configs": [
                {"targets": [f"{c}:{ports.slurm_exporter}" for c in controllers]}]},
        ],
    }
    head = (f"# prometheus.yml for {ctx.cluster_name}, written by clustertwin export "
            "prometheus; Prometheus runs on the first management server.\n")
    return head + yaml_text(doc)
