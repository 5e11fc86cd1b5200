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


def test_counters_file_lists_every_dcgm_metric_the_rules_use():
    _, files = _files("default")
    used = set(__import__("re").findall(r"DCGM_FI_\w+", files[P.RULES_FILE]))
    listed = {ln.split(",")[0] for ln in files[P.COUNTERS_FILE].splitlines()
              if ln and not ln.startswith("#")}
    assert used <= listed
