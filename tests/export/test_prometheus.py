"""Prometheus rules checked by the real promtool: ``check rules`` and ``test rules`` pass,
every alert has a unit test that fires and one that stays quiet, and a changed threshold
makes the generated unit tests fail (so they test something)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from clustertwin.export import prometheus as P
from clustertwin.export.stage import make_context

from .helpers import catalog, example

needs_promtool = pytest.mark.skipif(shutil.which("promtool") is None,
                                    reason="promtool not installed (apt-get install prometheus)")


def _files(name: str, host_label: str = "Hostname", hfu: float | None = 0.4):
    scen, d, _, _ = example(name)
    ctx = make_context(scen, catalog(), d)
    return ctx, P.prometheus_files(ctx, host_label=host_label, hfu=hfu)


def _promtool(tmp_path, files, *args):
    for k, v in files.items():
        (tmp_path / k).write_text(v, encoding="utf-8")
    return subprocess.run(["promtool", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)


def test_every_alert_has_a_firing_and_a_quiet_test():
    _, files = _files("default")
    rules = yaml.safe_load(files[P.RULES_FILE])
    names = [r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r]
    assert len(names) == len(set(names)) >= 15
    tests = yaml.safe_load(files[P.TEST_FILE])["tests"]
    fired = {t["alert_rule_test"][0]["alertname"] for t in tests
             if t["alert_rule_test"][0]["exp_alerts"]}
    quiet = {t["alert_rule_test"][0]["alertname"] for t in tests
             if not t["alert_rule_test"][0]["exp_alerts"]}
    assert fired == quiet == set(names)
    expr = {r["alert"]: r["expr"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    assert expr["GpusMissing"].endswith("< 8")                       # DGX H100: 8 GPUs
    assert expr["InfinibandPortRateDegraded"].endswith("< 5e+10")    # 400 Gb/s NDR
    assert "0.32" in expr["TrainingThroughputBelowTwin"]             # 0.8 x HFU 0.4


@needs_promtool
@pytest.mark.parametrize(("name", "host_label"), [("default", "Hostname"),
                                                  ("llama3-70b-gb200-nvl72", "hostname")])
def test_promtool_checks_and_unit_tests_pass(name, host_label, tmp_path):
    ctx, files = _files(name, host_label)
    check = _promtool(tmp_path, files, "check", "rules", P.RULES_FILE)
    assert check.returncode == 0, check.stdout + check.stderr
    run = _promtool(tmp_path, files, "test", "rules", P.TEST_FILE)
    assert run.returncode == 0, run.stdout + run.stderr
    gpn = ctx.inventory.gpus_per_node
    assert f"node:gpus_reporting:count < {gpn}" in files[P.RULES_FILE]
    assert f"by ({host_label})" in files[P.RULES_FILE]


@needs_promtool
def test_a_wrong_rule_fails_the_generated_unit_tests(tmp_path):
    _, files = _files("default")
    files[P.RULES_FILE] = files[P.RULES_FILE].replace("DCGM_FI_DEV_GPU_TEMP > 85",
                                                      "DCGM_FI_DEV_GPU_TEMP > 95")
    run = _promtool(tmp_path, files, "test", "rules", P.TEST_FILE)
    assert run.returncode != 0 and "GpuTemperatureHigh" in run.stdout + run.stderr
    bad = dict(files)
    bad[P.RULES_FILE] = bad[P.RULES_FILE].replace("count by (", "count by ((", 1)
    check = _promtool(tmp_path, bad, "check", "rules", P.RULES_FILE)
    assert check.returncode != 0


def test_alerts_that_must_end_have_a_clearing_test():
    _, files = _files("default")
    tests = yaml.safe_load(files[P.TEST_FILE])["tests"]
    cleared = {t["alert_rule_test"][0]["alertname"] for t in tests if t["name"].endswith("clears")}
    assert {"GpuXidError", "GpuXidCritical", "GpuFellOffBus", "GpuEccDoubleBit",
            "GpuThermalThrottling", "GpuTemperatureHigh", "GpuIdleDuringJob"} <= cleared
    rules = files[P.RULES_FILE]
    for metric in ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_PROF_SM_ACTIVE",
                   "DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_XID_ERRORS == 79",
                   "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "node_infiniband_symbol"):
        assert metric in rules


def test_prometheus_yml_scrapes_every_exporter_by_host_and_port(tmp_path):
    ctx, files = _files("default")
    doc = yaml.safe_load(files[P.CONFIG_FILE])
    jobs = {j["job_name"]: [t for g in j["static_configs"] for t in g["targets"]]
            for j in doc["scrape_configs"]}
    nodes = sorted(n.name for n in ctx.inventory.nodes)
    assert sorted(t.rsplit(":", 1)[0] for t in jobs["dcgm-exporter"]) == nodes
    assert {t.rsplit(":", 1)[1] for t in jobs["dcgm-exporter"]} == {"9400"}
    assert set(nodes) <= {t.rsplit(":", 1)[0] for t in jobs["node-exporter"]}
    assert jobs["slurm-exporter"] and doc["rule_files"] == [P.RULES_FILE]
    if shutil.which("promtool") is None:
        pytest.skip("promtool not installed (apt-get install prometheus): config not checked")
    run = _promtool(tmp_path, files, "check", "config", P.CONFIG_FILE)
    assert run.returncode == 0, run.stdout + run.stderr
    bad = dict(files)
    bad[P.CONFIG_FILE] = bad[P.CONFIG_FILE].replace('scrape_interval: "15s"',
                                                    'scrape_interval: "15x"')
    assert bad[P.CONFIG_FILE] != files[P.CONFIG_FILE]
    assert _promtool(tmp_path, bad, "check", "config", P.CONFIG_FILE).returncode != 0


def test_counters_file_lists_every_dcgm_metric_the_rules_use():
    _, files = _files("default")
    used = set(__import__("re").findall(r"DCGM_FI_\w+", files[P.RULES_FILE]))
    listed = {ln.split(",")[0] for ln in files[P.COUNTERS_FILE].splitlines()
              if ln and not ln.startswith("#")}
    assert used <= listed
