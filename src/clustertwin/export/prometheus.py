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
XID alerts fire while ``DCGM_FI_DEV_XID_ERRORS`` (a gauge holding the last XID, not a count)
changed in the last 15 minutes, so they clear; critical XIDs 48, 74, 94, 95 and 79 (fell off
the bus, its own alert) come from NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors).
Double-bit ECC, thermal throttling and SM activity read counters that dcgm-exporter's default
file leaves off; ``dcgm-exporter-counters.csv`` turns them on. Temperature, flap,
symbol-error and SM-idle limits are site thresholds (:class:`Thresholds`), not published
figures.

Every alert comes with a promtool unit test that fires and one that does not (and, where
an alert must end, one where it cleared)
(``clustertwin.promtool-tests.yml``, named so that ``*rules*.yml`` matches the rules file
alone); ``promtool check rules`` and ``promtool test rules`` run in the tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clustertwin.export.prometheus_config import CONFIG_FILE
from clustertwin.export.stage import ExportContext, yaml_text

#: XIDs that mean the GPU must leave service: 48 double-bit ECC, 74 NVLink error, 94/95
#: contained / uncontained ECC (NVIDIA XID catalogue, docs.nvidia.com/deploy/xid-errors)
CRITICAL_XIDS = (48, 74, 94, 95)
XID_NEW = "changes(DCGM_FI_DEV_XID_ERRORS[15m]) > 0"
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
    sm_active_min: float = 0.1       #: SM activity below this with a job on the GPU = idle


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
    #: values after which a fired alert must have cleared again (None = not tested)
    clear: list[float] | None = None


def _series_labels(kind: str, host_label: str, host: str) -> dict[str, str]:
    if kind in ("gpu", "node"):
        return {"gpu": "0", "UUID": "GPU-0", host_label: host, "modelName": "GPU"}
    if kind == "ib":
        return {"device": "mlx5_0", "port": "1", "instance": f"{host}:9100",
                "job": "node-exporter"}
    if kind == "up":
        return {"instance": f"{host}:9400", "job": "dcgm-exporter"}
    return {}


def _xid_alerts(h: str) -> list[Alert]:
    return [
        # DCGM_FI_DEV_XID_ERRORS holds the last XID for ever: alert while it changed in the
        # last 15 minutes, so the alert clears once the GPU stops reporting new ones
        Alert("GpuXidError", f"DCGM_FI_DEV_XID_ERRORS > 0 and {XID_NEW}", "warning",
              f"GPU <gpu> on <{h}> reported an XID error", 0, "DCGM_FI_DEV_XID_ERRORS", "gpu",
              [0, 0, 13, 13, 13], [0, 0, 0, 0, 0], clear=[0, 0, 13] + [13] * 17),
        Alert("GpuXidCritical", "(" + " or ".join(f"DCGM_FI_DEV_XID_ERRORS == {x}"
                                                  for x in CRITICAL_XIDS) + f") and {XID_NEW}",
              "critical", f"GPU <gpu> on <{h}>: critical XID (ECC or NVLink); drain it",
              0, "DCGM_FI_DEV_XID_ERRORS", "gpu", [0, 0, 48, 48, 48], [0, 0, 13, 13, 13],
              clear=[0, 0, 48] + [48] * 17),
        Alert("GpuFellOffBus", f"DCGM_FI_DEV_XID_ERRORS == 79 and {XID_NEW}", "critical",
              f"GPU <gpu> on <{h}> fell off the bus (XID 79); drain and reset the node", 0,
              "DCGM_FI_DEV_XID_ERRORS", "gpu", [0, 0, 79, 79, 79], [0, 0, 48, 48, 48],
              clear=[0, 0, 79] + [79] * 17),
        Alert("GpuEccDoubleBit", "increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[10m]) > 0", "critical",
              f"GPU <gpu> on <{h}>: uncorrectable (double-bit) ECC errors; drain it", 0,
              "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "gpu", [0, 0, 1, 1, 1], [2] * 5,
              clear=[0, 0, 1] + [1] * 14),
        Alert("GpuThermalThrottling", "increase(DCGM_FI_DEV_THERMAL_VIOLATION[10m]) > 0",
              "warning", f"GPU <gpu> on <{h}> throttled for heat in the last 10 minutes", 0,
              "DCGM_FI_DEV_THERMAL_VIOLATION", "gpu", [0, 0, 5e5, 9e5, 2e6], [7e5] * 5,
              clear=[0, 0, 5e5] + [5e5] * 14),
    ]


def _gpu_alerts(h: str, th: Thresholds, tdp: float) -> list[Alert]:
    return [
        Alert("GpuTemperatureHigh", f"DCGM_FI_DEV_GPU_TEMP > {th.gpu_temp_c:g}", "warning",
              f"GPU <gpu> on <{h}> above {th.gpu_temp_c:g} C for 5 minutes", 5,
              "DCGM_FI_DEV_GPU_TEMP", "gpu", [70] + [th.gpu_temp_c + 3] * 9,
              [70] + [th.gpu_temp_c - 1] * 9,
              clear=[70] + [th.gpu_temp_c + 3] * 9 + [th.gpu_temp_c - 5] * 3),
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
    ]


def _node_and_fabric_alerts(h: str, th: Thresholds, gpn: int, link_bps: float) -> list[Alert]:
    return [
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
        Alert("GpuIdleDuringJob",
              f"DCGM_FI_PROF_SM_ACTIVE < {th.sm_active_min:g} and DCGM_FI_DEV_FB_USED > 1024",
              "warning", f"GPU <gpu> on <{h}> holds memory (a job) but its SMs have been "
              f"under {th.sm_active_min:g} active for 30 minutes", 30,
              "DCGM_FI_PROF_SM_ACTIVE", "gpu", [0.02] * 40, [0.6] * 40,
              [("DCGM_FI_DEV_FB_USED", "gpu", [40000.0] * 40)],
              clear=[0.02] * 40 + [0.7] * 3),
        Alert("DcgmExporterDown", 'up{job=~".*dcgm.*"} == 0', "critical",
              "dcgm-exporter on <instance> is down: GPU health is unknown", 5, "up", "up",
              [1] + [0] * 9, [1] * 10),
    ]


def alerts(ctx: ExportContext, expected_hfu: float | None, host_label: str = "Hostname",
           th: Thresholds = Thresholds()) -> list[Alert]:  # noqa: B008
    gpn = ctx.inventory.gpus_per_node
    link_bps = min(x for x in (ctx.design.fabric.endpoint_gbps, ctx.inventory.storage_nic_gbps)
                   if x) * 1e9 / 8
    h = host_label
    out = (_xid_alerts(h) + _gpu_alerts(h, th, float(ctx.gpu.tdp_w))
           + _node_and_fabric_alerts(h, th, gpn, link_bps))
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
        cases = [("fires", a.fire), ("stays quiet", a.quiet)]
        cases += [("clears", a.clear)] if a.clear else []
        for case, values in cases:
            fires = case == "fires"
            series = [(a.metric, labels, values)]
            if a.kind == "node":   # one GPU fewer than the node has, or all of them
                n = gpn - 1 if fires else gpn
                series = [(a.metric, {**labels, "gpu": str(g), "UUID": f"GPU-{g}"}, values)
                          for g in range(n)]
            series += [(m, _series_labels(k, host_label, host), v + [v[-1]] * (len(values) - len(v)))
                       for m, k, v in a.extra]
            exp_labels = {**_alert_labels(a, labels, host_label), "severity": a.severity}
            exp = [{"exp_labels": exp_labels,
                    "exp_annotations": {"summary": _expand(a.summary, exp_labels)}}]
            tests.append({
                "name": f"{a.name} {case}",
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
    ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC "
     "errors."),
    ("DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal "
     "constraints (in us)."),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth "
     "counters for all lanes."),
    ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink "
     "flow-control CRC errors."),
    ("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink "
     "recovery errors."),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp "
     "assigned."),
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

    if ctx.scenario.model is None:
        return None, "the scenario has no model: no throughput expectation"
    try:
        from clustertwin.deadline import train

        est = train(ctx.scenario, ctx.catalog or load_catalog())
    except UserError as exc:
        return None, f"no training estimate ({exc}); TrainingThroughputBelowTwin left out"
    return float(est.hfu), ""


def prometheus_files(ctx: ExportContext, host_label: str = "Hostname",
                     hfu: float | None = None) -> dict[str, str]:
    from clustertwin.export.prometheus_config import prometheus_yml

    al = alerts(ctx, hfu, host_label)
    return {CONFIG_FILE: prometheus_yml(ctx, RULES_FILE), RULES_FILE: rules_yaml(ctx, al, host_label),
            TEST_FILE: tests_yaml(ctx, al, host_label),
            COUNTERS_FILE: counters_csv()}
