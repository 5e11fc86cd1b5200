"""Grafana dashboards (cluster, rack, node, fabric) as plain dashboard JSON (Grafana's
classic dashboard model, ``schemaVersion`` 41, the version Grafana 11/12 write), built from
dicts in the base install: no SDK needed.

Every panel queries the ``${datasource}`` Prometheus variable; the host label of
dcgm-exporter is a parameter (``Hostname`` or ``hostname``, see :mod:`.prometheus`).
Design figures appear as reference lines: installed GPUs, IT power of the GPUs at TDP, the
twin's tensor-active expectation. The rack dashboard's ``rack`` variable maps each rack of the
inventory to a regular expression of its nodes, so Prometheus needs no rack label.
``tests/export`` checks the files against a JSON Schema of the dashboard model and their
PromQL with promtool.
"""

from __future__ import annotations

from clustertwin.export.stage import ExportContext
from clustertwin.quoting import json_text

SCHEMA_VERSION = 41
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def _variable(kind: str, name: str, label: str, query: str, **more) -> dict:
    return {"type": kind, "name": name, "label": label, "query": query, "hide": 0,
            "includeAll": False, "multi": False, "skipUrlSync": False, **more}


class _Board:
    """Collects panels row by row (24 columns wide) so grid positions never overlap."""

    def __init__(self, title: str, uid: str, tags: list[str]) -> None:
        self.board = {"title": title, "uid": uid, "tags": tags, "refresh": "1m",
                      "time": {"from": "now-6h", "to": "now"}, "timezone": "browser",
                      "editable": True, "graphTooltip": 0, "fiscalYearStartMonth": 0,
                      "schemaVersion": SCHEMA_VERSION, "version": 1,
                      "annotations": {"list": []}, "links": [],
                      "templating": {"list": [_variable("datasource", "datasource",
                                                        "Data source", "prometheus")]},
                      "panels": []}
        self.next_id, self.x, self.y, self.row_h = 1, 0, 0, 0

    def variable(self, var: dict) -> None:
        self.board["templating"]["list"].append(var)

    def panel(self, kind: str, title: str, exprs: list[tuple[str, str]], unit: str = "",
              w: int = 12, h: int = 8) -> None:
        if self.x + w > 24:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        defaults = {"unit": unit} if unit else {}
        self.board["panels"].append({
            "id": self.next_id, "type": "stat" if kind == "stat" else "timeseries",
            "title": title, "datasource": dict(DATASOURCE),
            "gridPos": {"h": h, "w": w, "x": self.x, "y": self.y},
            "fieldConfig": {"defaults": defaults, "overrides": []}, "options": {},
            "targets": [{"datasource": dict(DATASOURCE), "expr": expr, "legendFormat": legend,
                         "refId": chr(ord("A") + i)} for i, (expr, legend) in enumerate(exprs)]})
        self.next_id += 1
        self.x += w
        self.row_h = max(self.row_h, h)

    def json(self) -> str:
        return json_text(self.board, indent=1, sort_keys=True) + "\n"


def _cluster(ctx: ExportContext, h: str, hfu: float | None) -> str:
    d = ctx.design
    b = _Board(f"{ctx.title}: cluster", f"ctwin-{ctx.cluster_name}-cluster"[:40],
               ["clustertwin", "cluster"])
    b.panel("stat", "GPUs reporting", [("cluster:gpus_reporting:count", "reporting"),
                                       (f"vector({d.gpus})", "installed (design)")], w=6)
    b.panel("stat", "Nodes with missing GPUs",
            [(f"count(node:gpus_reporting:count < {ctx.inventory.gpus_per_node}) or vector(0)",
              "nodes")], w=6)
    b.panel("stat", "Critical alerts", [('count(ALERTS{alertstate="firing",'
                                         'severity="critical"}) or vector(0)', "firing")], w=6)
    b.panel("stat", "GPU power", [("cluster:gpu_power_watts:sum", "now")], "watt", w=6)
    tensor = [("cluster:tensor_active:avg", "tensor active (avg)")]
    if hfu:
        tensor.append((f"vector({hfu:.4g})", "twin's HFU"))
    b.panel("ts", "Tensor pipes active vs the twin", tensor, "percentunit")
    b.panel("ts", "GPU utilization", [("cluster:gpu_util:avg", "average")], "percent")
    b.panel("ts", "GPU power", [("cluster:gpu_power_watts:sum", "all GPUs"),
                                (f"vector({d.gpus * float(ctx.gpu.tdp_w):g})",
                                 "GPUs at TDP (design)")], "watt")
    b.panel("ts", "XID errors by node", [(f"count by ({h}) (DCGM_FI_DEV_XID_ERRORS > 0)",
                                          f"{{{{{h}}}}}")])
    b.panel("ts", "InfiniBand traffic", [
        ("sum(instance:infiniband_receive_bytes:rate5m)", "receive"),
        ("sum(instance:infiniband_transmit_bytes:rate5m)", "transmit")], "Bps", w=24)
    return b.json()


def _rack(ctx: ExportContext, h: str) -> str:
    b = _Board(f"{ctx.title}: rack", f"ctwin-{ctx.cluster_name}-rack"[:40],
               ["clustertwin", "rack"])
    members: dict[str, list[str]] = {}
    for n in ctx.inventory.nodes:
        members.setdefault(n.rack, []).append(n.name)
    options = ",".join(f"{r} : {'|'.join(v)}" for r, v in members.items())
    b.variable(_variable("custom", "rack", "Rack", options))
    sel = f'{h}=~"$rack"'
    b.panel("ts", "GPU temperature", [(f"max by ({h}) (DCGM_FI_DEV_GPU_TEMP{{{sel}}})",
                                       f"{{{{{h}}}}}")], "celsius")
    b.panel("ts", "GPU power by node", [(f"sum by ({h}) (DCGM_FI_DEV_POWER_USAGE{{{sel}}})",
                                         f"{{{{{h}}}}}")], "watt")
    b.panel("ts", "GPU utilization", [(f"avg by ({h}) (DCGM_FI_DEV_GPU_UTIL{{{sel}}})",
                                       f"{{{{{h}}}}}")], "percent")
    b.panel("ts", "GPUs reporting", [(f"count by ({h}) (DCGM_FI_DEV_GPU_TEMP{{{sel}}})",
                                      f"{{{{{h}}}}}")])
    return b.json()


def _node(ctx: ExportContext, h: str) -> str:
    b = _Board(f"{ctx.title}: node", f"ctwin-{ctx.cluster_name}-node"[:40],
               ["clustertwin", "node"])
    b.variable(_variable("query", "host", "Node", f"label_values(DCGM_FI_DEV_GPU_TEMP, {h})",
                         datasource=dict(DATASOURCE), refresh=1))
    sel = f'{h}="$host"'
    for title, metric, unit in (("GPU temperature", "DCGM_FI_DEV_GPU_TEMP", "celsius"),
                                ("HBM temperature", "DCGM_FI_DEV_MEMORY_TEMP", "celsius"),
                                ("GPU power", "DCGM_FI_DEV_POWER_USAGE", "watt"),
                                ("GPU utilization", "DCGM_FI_DEV_GPU_UTIL", "percent"),
                                ("Tensor pipes active", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                                 "percentunit"),
                                ("Last XID", "DCGM_FI_DEV_XID_ERRORS", "")):
        b.panel("ts", title, [(f"{metric}{{{sel}}}", "GPU {{gpu}}")], unit)
    b.panel("ts", "Row remapping", [
        (f"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{{{sel}}}", "uncorrectable GPU {{gpu}}"),
        (f"DCGM_FI_DEV_ROW_REMAP_FAILURE{{{sel}}}", "failure GPU {{gpu}}")])
    b.panel("ts", "NVLink errors (10 min)", [
        (f"increase(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{{{sel}}}[10m])",
         "CRC GPU {{gpu}}"),
        (f"increase(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL{{{sel}}}[10m])",
         "recovery GPU {{gpu}}")])
    return b.json()


def _fabric(ctx: ExportContext) -> str:
    b = _Board(f"{ctx.title}: fabric", f"ctwin-{ctx.cluster_name}-fabric"[:40],
               ["clustertwin", "fabric"])
    b.variable(_variable("query", "instance", "Host",
                         "label_values(node_infiniband_state_id, instance)",
                         datasource=dict(DATASOURCE), refresh=1, multi=True, includeAll=True))
    sel = 'instance=~"$instance"'
    b.panel("stat", "Ports not active",
            [(f"count(node_infiniband_state_id{{{sel}}} != 4) or vector(0)", "ports")], w=8)
    b.panel("stat", "Ports below design speed", [
        (f"count(node_infiniband_rate_bytes_per_second{{{sel}}} < "
         f"{ctx.design.fabric.endpoint_gbps * 1e9 / 8:g}) or vector(0)", "ports")], w=8)
    b.panel("stat", "Link downs (1 h)", [
        (f"sum(increase(node_infiniband_link_downed_total{{{sel}}}[1h])) or vector(0)",
         "events")], w=8)
    b.panel("ts", "Receive rate by port", [
        (f"rate(node_infiniband_port_data_received_bytes_total{{{sel}}}[$__rate_interval])",
         "{{instance}} {{device}}")], "Bps")
    b.panel("ts", "Transmit rate by port", [
        (f"rate(node_infiniband_port_data_transmitted_bytes_total{{{sel}}}[$__rate_interval])",
         "{{instance}} {{device}}")], "Bps")
    b.panel("ts", "Symbol errors (1 h)", [
        (f"increase(node_infiniband_symbol_error_total{{{sel}}}[1h])",
         "{{instance}} {{device}}")])
    b.panel("ts", "Port transmit wait", [
        (f"rate(node_infiniband_port_transmit_wait_total{{{sel}}}[$__rate_interval])",
         "{{instance}} {{device}}")])
    return b.json()


def grafana_files(ctx: ExportContext, host_label: str = "Hostname",
                  hfu: float | None = None) -> dict[str, str]:
    return {"grafana-cluster.json": _cluster(ctx, host_label, hfu),
            "grafana-rack.json": _rack(ctx, host_label),
            "grafana-node.json": _node(ctx, host_label),
            "grafana-fabric.json": _fabric(ctx)}
