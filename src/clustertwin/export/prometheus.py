"""Prometheus recording and alerting rules for the cluster, their promtool unit tests, and the
dcgm-exporter counters file they need.

Metrics: NVIDIA dcgm-exporter (``DCGM_FI_*``, per-GPU labels ``gpu``, ``UUID``, ``modelName``
and the host label - ``Hostname`` before dcgm-exporter PR #655, ``hostname`` after, so it is a
parameter) and node_exporter's InfiniBand collector (``node_infiniband_*``, labels
``device``, ``port``, the host in ``instance``); names from dcgm-exporter
``etc/default-counters.csv`` and node_exporter ``collector/infiniband_linux.go``
(shared/research/ops-bridge.md 2).

Figures from the design: GPUs per node (GpusMissing), link speed (InfinibandPortRateDegraded:
the slower of the compute and storage NIC speeds, both report through the same collector),
GPU TDP (GpuPowerAboveTdp) and the training estimate's hardware FLOPs utilization
(TrainingThroughputBelowTwin: DCGM's tensor-pipe-active ratio, averaged over the cluster,
below ``throughput_fraction`` of the twin's HFU for 30 minutes while the GPUs are busy).
Critical XIDs: 48 (double-bit ECC), 74 (NVLink error), 79 (GPU fell off the bus), 95
(uncontained ECC) - NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors). Temperature,
flap and symbol-error limits are site thresholds (:class:`Thresholds`), not published figures.

Every alert comes with a promtool unit test that fires and one that does not
(``clustertwin.promtool-tests.yml``, named so that ``*rules*.yml`` matches the rules file
alone); ``promtool check rules`` and ``promtool test rules`` run in the tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clustertwin.export.stage import ExportContext, yaml_text

RULES_FILE = "clustertwin.rules.yml"
TEST_FILE = "clustertwin.promtool-tests.yml"
COUNTERS_FILE = "dcgm-exporter-counters.csv"


@dataclass(frozen=True)
class Thresholds:
    """Site thresholds (not from the design): change them to the site's policy."""

    gpu_temp_c: float = 85.0
    hbm_temp_c: float = 95.0
    link_flaps_per_hour: int = 2
    symbol_errors_per_hour: int = 10
    throughput_fraction: float = 0.8


@dataclass(frozen=True)
class Alert:
    name: str
    expr: str
    severity: str
    summary: str                  #: text with <label> markers, expanded from the alert labels
    for_m: int
    metric: str                   #: the input series' metric (for the unit tests)
    kind: str                     #: gpu | ib | up | cluster | node
    fire: list[float]             #: per-minute values that make it fire
    quiet: list[float]            #: values that must not
    extra: list[tuple[str, str, list[float]]] = field(default_factory=list)  #: (metric, kind, values)


def _series_labels(kind: str, host_label: str, host: str) -> dict[str, str]:
    if kind in ("gpu", "node"):
        return {"gpu": "0", "UUID": "GPU-0", host_label: host, "modelName": "GPU"}
    if kind == "ib":
        return {"device": "mlx5_0", "port": "1", "instance": f"{host}:9100", "job": "node"}
    if kind == "up":
        return {"instance": f"{host}:9400", "job": "dcgm-exporter"}
    return {}


def alerts(ctx: ExportContext, expected_hfu: float | None, host_label: str = "Hostname",
           th: Thresholds = Thresholds()) -> list[Alert]:  # noqa: B008
    gpn = ctx.inventory.gpus_per_node
    tdp = float(ctx.gpu.tdp_w)
    link_bps = min(x for x in (ctx.design.fabric.endpoint_gbps, ctx.inventory.storage_nic_gbps)
                   if x) * 1e9 / 8
    h = host_label
    out = [
        Alert("GpuXidError", "DCGM_FI_DEV_XID_ERRORS > 0", "warning",
              f"GPU <gpu> on <{h}> reported an XID error", 0, "DCGM_FI_DEV_XID_ERRORS", "gpu",
              [0, 0, 13, 13, 13], [0, 0, 0, 0, 0]),
        Alert("GpuXidCritical", " or ".join(f"DCGM_FI_DEV_XID_ERRORS == {x}"
                                            for x in (48, 74, 79, 95)), "critical",
              f"GPU <gpu> on <{h}>: critical XID (ECC, NVLink or fell off the bus); drain it",
              0, "DCGM_FI_DEV_XID_ERRORS", "gpu", [0, 0, 79, 79, 79], [0, 0, 13, 13, 13]),
        Alert("GpuTemperatureHigh", f"DCGM_FI_DEV_GPU_TEMP > {th.gpu_temp_c:g}", "warning",
              f"GPU <gpu> on <{h}> above {th.gpu_temp_c:g} C for 5 minutes", 5,
              "DCGM_FI_DEV_GPU_TEMP", "gpu", [70] + [th.gpu_temp_c + 3] * 9,
              [70] + [th.gpu_temp_c - 1] * 9),
        Alert("GpuMemoryTemperatureHigh", f"DCGM_FI_DEV_MEMORY_TEMP > {th.hbm_temp_c:g}",
              "warning", f"HBM of GPU <gpu> on <{h}> above {th.hbm_temp_c:g} C for 5 minutes",
              5, "DCGM_FI_DEV_MEMORY_TEMP", "gpu", [70] + [th.hbm_temp_c + 2] * 9,
              [70] + [th.hbm_temp_c - 2] * 9),
        Alert("GpuPowerAboveTdp", f"DCGM_FI_DEV_POWER_USAGE > {tdp:g}", "warning",
              f"GPU <gpu> on <{h}> drawing more than its {tdp:g} W TDP for 5 minutes", 5,
              "DCGM_FI_DEV_POWER_USAGE", "gpu", [tdp * 0.8] + [tdp * 1.1] * 9,
              [tdp * 0.8] + [tdp * 0.98] * 9),
        Alert("GpuRowRemapFailure", "DCGM_FI_DEV_ROW_REMAP_FAILURE > 0", "critical",
              f"GPU <gpu> on <{h}> failed a row remap; replace it", 0,
              "DCGM_FI_DEV_ROW_REMAP_FAILURE", "gpu", [0, 0, 1, 1, 1], [0] * 5),
        Alert("GpuUncorrectableRemappedRows",
              "increase(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS[1h]) > 0", "warning",
              f"GPU <gpu> on <{h}> remapped rows after uncorrectable errors; reset it", 0,
              "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "gpu", [0, 0, 1, 1, 1], [2] * 5),
        Alert("NvlinkCrcErrors", "increase(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL[10m]) > 0",
              "warning", f"NVLink CRC errors on GPU <gpu> of <{h}>", 0,
              "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "gpu", [0, 0, 5, 9, 12], [3] * 5),
        Alert("NvlinkRecoveryErrors",
              "increase(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL[10m]) > 0", "warning",
              f"NVLink link recoveries on GPU <gpu> of <{h}>", 0,
              "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "gpu", [0, 0, 1, 2, 2], [1] * 5),
        Alert("GpusMissing", f"node:gpus_reporting:count < {gpn}", "critical",
              f"<{h}> reports fewer than {gpn} GPUs for 5 minutes", 5,
              "DCGM_FI_DEV_GPU_TEMP", "node", [60] * 10, [60] * 10),
        Alert("InfinibandPortDown", "node_infiniband_state_id != 4", "critical",
              "InfiniBand <device> port <port> on <instance> is not active", 2,
              "node_infiniband_state_id", "ib", [4, 4, 1, 1, 1, 1], [4] * 6),
        Alert("InfinibandLinkFlapping",
              f"increase(node_infiniband_link_downed_total[1h]) > {th.link_flaps_per_hour}",
              "warning", "InfiniBand <device> port <port> on <instance> is flapping", 0,
              "node_infiniband_link_downed_total", "ib", [0, 1, 2, 3, 4, 5], [0, 0, 1, 1, 1, 1]),
        Alert("InfinibandSymbolErrors",
              f"increase(node_infiniband_symbol_error_total[1h]) > {th.symbol_errors_per_hour}",
              "warning", "InfiniBand <device> port <port> on <instance>: symbol errors", 0,
              "node_infiniband_symbol_error_total", "ib",
              [0, 5, 10, 20, 30, 40], [0, 1, 2, 3, 4, 5]),
        Alert("InfinibandPortRateDegraded", f"node_infiniband_rate_bytes_per_second < {link_bps:g}",
              "warning", "InfiniBand <device> port <port> on <instance> runs below the "
              f"design's {link_bps * 8 / 1e9:g} Gb/s", 5, "node_infiniband_rate_bytes_per_second",
              "ib", [link_bps] + [link_bps / 2] * 9, [link_bps] * 10),
        Alert("DcgmExporterDown", 'up{job=~".*dcgm.*"} == 0', "critical",
              "dcgm-exporter on <instance> is down: GPU health is unknown", 5, "up", "up",
              [1] + [0] * 9, [1] * 10),
    ]
    if expected_hfu:
        low = th.throughput_fraction * expected_hfu
        out.append(Alert(
            "TrainingThroughputBelowTwin",
            f"cluster:tensor_active:avg < {low:.4g} and on() cluster:gpu_util:avg > 50",
            "warning", f"tensor pipes active below {low:.3g} (twin's HFU {expected_hfu:.3g} x "
            f"{th.throughput_fraction:g}) for 30 minutes while the GPUs are busy", 30,
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "cluster",
            [low * 0.7] * 40, [min(1.0, expected_hfu)] * 40,
            [("DCGM_FI_DEV_GPU_UTIL", "gpu", [95.0] * 40)]))
    return out


def recording(host_label: str) -> list[dict]:
    h = host_label
    return [
        {"record": "node:gpus_reporting:count", "expr": f"count by ({h}) (DCGM_FI_DEV_GPU_TEMP)"},
        {"record": "node:gpu_power_watts:sum",
         "expr": f"sum by ({h}) (DCGM_FI_DEV_POWER_USAGE)"},
        {"record": "cluster:gpus_reporting:count", "expr": "count(DCGM_FI_DEV_GPU_TEMP)"},
        {"record": "cluster:gpu_power_watts:sum", "expr": "sum(DCGM_FI_DEV_POWER_USAGE)"},
        {"record": "cluster:gpu_util:avg", "expr": "avg(DCGM_FI_DEV_GPU_UTIL)"},
        {"record": "cluster:tensor_active:avg", "expr": "avg(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE)"},
        {"record": "instance:infiniband_receive_bytes:rate5m",
         "expr": "sum by (instance) (rate(node_infiniband_port_data_received_bytes_total[5m]))"},
        {"record": "instance:infiniband_transmit_bytes:rate5m",
         "expr": "sum by (instance) (rate(node_infiniband_port_data_transmitted_bytes_total[5m]))"},
    ]


def _template(text: str) -> str:
    return re.sub(r"<(\w+)>", r"{{ $labels.\1 }}", text)


def _expand(text: str, labels: dict[str, str]) -> str:
    return re.sub(r"<(\w+)>", lambda m: labels.get(m.group(1), ""), text)


def rules_yaml(ctx: ExportContext, al: list[Alert], host_label: str) -> str:
    doc = {"groups": [
        {"name": "clustertwin.recording", "interval": "30s", "rules": recording(host_label)},
        {"name": "clustertwin.alerts", "rules": [
            {"alert": a.name, "expr": a.expr, **({"for": f"{a.for_m}m"} if a.for_m else {}),
             "labels": {"severity": a.severity},
             "annotations": {"summary": _template(a.summary)}} for a in al]}]}
    head = (f"# Prometheus rules for {ctx.title}, written by clustertwin export "
            f"prometheus (host label: {host_label}).\n")
    return head + yaml_text(doc)


def _fmt(values: list[float]) -> str:
    return " ".join(f"{v:g}" for v in values)


def _alert_labels(a: Alert, labels: dict[str, str], host_label: str) -> dict[str, str]:
    if a.kind == "node":
        return {host_label: labels[host_label]}
    if a.kind == "cluster":
        return {}
    return dict(labels)


def tests_yaml(ctx: ExportContext, al: list[Alert], host_label: str) -> str:
    host = ctx.inventory.nodes[0].name
    gpn = ctx.inventory.gpus_per_node
    tests = []
    for a in al:
        labels = _series_labels(a.kind, host_label, host)
        for fires in (True, False):
            values = a.fire if fires else a.quiet
            series = [(a.metric, labels, values)]
            if a.kind == "node":   # one GPU fewer than the node has, or all of them
                n = gpn - 1 if fires else gpn
                series = [(a.metric, {**labels, "gpu": str(g), "UUID": f"GPU-{g}"}, values)
                          for g in range(n)]
            series += [(m, _series_labels(k, host_label, host), v) for m, k, v in a.extra]
            exp_labels = {**_alert_labels(a, labels, host_label), "severity": a.severity}
            exp = [{"exp_labels": exp_labels,
                    "exp_annotations": {"summary": _expand(a.summary, exp_labels)}}]
            tests.append({
                "name": f"{a.name} {'fires' if fires else 'stays quiet'}",
                "interval": "1m",
                "input_series": [{"series": _selector(m, lab), "values": _fmt(v)}
                                 for m, lab, v in series],
                "alert_rule_test": [{"eval_time": f"{len(values) - 1}m", "alertname": a.name,
                                     "exp_alerts": exp if fires else []}]})
    doc = {"rule_files": [RULES_FILE], "evaluation_interval": "1m", "tests": tests}
    return yaml_text(doc)


def _selector(metric: str, labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{metric}{{{inner}}}" if inner else metric


#: (field, type, help) of every dcgm-exporter counter the rules and dashboards read; the
#: NVLink error counters and the profiling fields are off in dcgm-exporter's default file
COUNTERS = [
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot "
     "(in mJ)."),
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for "
     "uncorrectable errors"),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for "
     "correctable errors"),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth "
     "counters for all lanes."),
    ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink "
     "flow-control CRC errors."),
    ("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink "
     "recovery errors."),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is "
     "active."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is "
     "active sending or receiving data."),
]


def counters_csv() -> str:
    lines = ["# dcgm-exporter counters for the clustertwin rules and dashboards.",
             "# Pass to dcgm-exporter with -f (--collectors). Format: DCGM FIELD, Prometheus "
             "metric type, help message"]
    lines += [f"{f}, {t}, {h}" for f, t, h in COUNTERS]
    return "\n".join(lines) + "\n"


def expected_hfu(ctx: ExportContext) -> tuple[float | None, str]:
    """The twin's hardware FLOPs utilization for the scenario's training run, or (None, why)."""
    from clustertwin.catalog import load_catalog
    from clustertwin.errors import UserError

    if getattr(ctx.scenario, "model", None) is None:
        return None, "the scenario has no model: no throughput expectation"
    try:
        from clustertwin.deadline import train

        est = train(ctx.scenario, ctx.catalog or load_catalog())
    except UserError as exc:
        return None, f"no training estimate ({exc}); TrainingThroughputBelowTwin left out"
    return float(est.hfu), ""


def prometheus_files(ctx: ExportContext, host_label: str = "Hostname",
                     hfu: float | None = None) -> dict[str, str]:
    al = alerts(ctx, hfu, host_label)
    return {RULES_FILE: rules_yaml(ctx, al, host_label),
            TEST_FILE: tests_yaml(ctx, al, host_label),
            COUNTERS_FILE: counters_csv()}
