"""The command line: exit codes, one-line errors, output files, JSON contract."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from clustertwin.cli import app
from tests.conftest import EXAMPLES

runner = CliRunner()

CONTRACT = {
    "training": ["gpus", "parallelism", "step_time_s", "tokens_per_s", "model_tflops_per_gpu", "mfu", "hfu",
                 "memory_gib_per_gpu", "days"],
    "economics": ["capex_usd", "opex_usd_per_month", "owned_usd_per_gpu_hour", "run_cost_owned_usd",
                  "run_cost_cloud_usd"],
}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clustertwin.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def plan_json() -> dict:
    r = runner.invoke(app, ["plan", "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_plan_json_has_contract_keys(plan_json):
    assert plan_json["scenario"]["name"] == "llama3-405b-16k-h100"
    assert isinstance(plan_json["warnings"], list)
    for block, keys in CONTRACT.items():
        for k in keys:
            assert k in plan_json[block], f"{block}.{k}"
    p = plan_json["training"]["parallelism"]
    # 16,384 GPUs installed; the hot spares take some of their slots inside the 64 scalable
    # units (cluster.spare_placement: inside, issue 22) and the job runs on the others
    assert plan_json["design"]["gpus"] == 16384 and plan_json["design"]["spare_nodes"] > 0
    assert plan_json["training"]["gpus"] <= 16384 - 8 * plan_json["design"]["spare_nodes"]
    assert isinstance(p, dict)


def test_plan_out_writes_and_refuses_foreign_files(tmp_path):
    out = tmp_path / "o"
    r = runner.invoke(app, ["plan", str(EXAMPLES / "gpt3-175b-1024-a100.yaml"), "--out", str(out)])
    assert r.exit_code == 0, r.output
    page = (out / "plan.html").read_text()
    import re

    assert "Plotly.newPlot" in page and len(page) > 3_000_000  # plotly.js embedded
    assert "Bill of materials" in page and "Capital cost by category" in page  # titles in words (issue 26)
    assert not re.search(r"<script[^>]+src=", page) and not re.search(r"<link[^>]+href=[\"']http", page)
    json.loads((out / "plan.json").read_text())
    # we may overwrite what we wrote ourselves
    assert runner.invoke(app, ["plan", "--out", str(out)]).exit_code == 0
    # but never a file we did not write, without --force
    other = tmp_path / "mine"
    other.mkdir()
    (other / "plan.html").write_text("precious")
    r = runner.invoke(app, ["plan", "--out", str(other)])
    assert r.exit_code == 2 and (other / "plan.html").read_text() == "precious"
    assert runner.invoke(app, ["plan", "--out", str(other), "--force"]).exit_code == 0


def test_validate_ok_and_bad(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text((EXAMPLES / "default.yaml").read_text().replace("gpus: 16384", "gpus: -8\n  colour: red"))
    r = cli("validate", str(EXAMPLES / "default.yaml"), str(bad))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    errs = [x for x in r.stderr.splitlines() if x.startswith("error:")]
    assert any("cluster.gpus" in x for x in errs) and any("cluster.colour" in x for x in errs)
    assert "ok: " in r.stdout


def test_plan_bad_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [unclosed\n")
    r = cli("plan", str(bad))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and str(bad) in r.stderr


def test_catalog_list_and_show():
    r = runner.invoke(app, ["catalog", "list", "gpu"])
    assert r.exit_code == 0 and "h100-sxm-80gb" in r.stdout
    r = runner.invoke(app, ["catalog", "show", "h100-sxm-80gb", "--json"])
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert d["kind"] == "gpu" and d["source"] and d["as_of"]
    r = runner.invoke(app, ["catalog", "show", "h100-sxm"])
    assert r.exit_code == 2 and "did you mean" in r.output
    assert runner.invoke(app, ["catalog", "list", "gpuz"]).exit_code == 2


def test_user_catalog_overrides(tmp_path):
    d = tmp_path / "cat"
    d.mkdir()
    (d / "mine.yaml").write_text("""
gpu:
  - id: h100-sxm-80gb
    name: H100 with a house discount
    source: our purchase order
    as_of: 2026-11
    vendor: NVIDIA
    generation: hopper
    form: sxm
    peak_tflops: {bf16: 989, fp16: 989, fp8: 1979, tf32: 494}
    hbm_gib: 80
    hbm_tb_per_s: 3.35
    nvlink_gb_per_s: 900
    tdp_w: 700
    price_usd: 1
""")
    r = runner.invoke(app, ["catalog", "show", "h100-sxm-80gb", "--json", "--catalog", str(d)])
    assert r.exit_code == 0 and json.loads(r.stdout)["name"] == "H100 with a house discount"
    (d / "broken.yaml").write_text("gpu:\n  - id: x\n    name: y\n")
    r = cli("catalog", "list", "--catalog", str(d))
    assert r.returncode == 2 and "broken.yaml" in r.stderr and "Traceback" not in r.stderr


def test_help_is_fast_enough_to_import():
    r = cli("--help")
    assert r.returncode == 0 and "plan" in r.stdout


def test_catalog_show_keeps_control_and_bidi_characters_off_the_terminal(tmp_path):
    """A user's catalog text with a bidi override, a line separator and an escape sequence is
    shown escaped; printable Unicode stays readable."""
    d = tmp_path / "cat"
    d.mkdir()
    (d / "gpu.yaml").write_text("""gpu:
  - id: h100-sxm-80gb
    name: "H100 \\u202egnp.exe \\u2028 \\x1b[31mred"
    source: our purchase order
    as_of: 2026-11
    vendor: NVIDIA
    generation: hopper
    form: sxm
    peak_tflops: {bf16: 989}
    hbm_gib: 80
    hbm_tb_per_s: 3.35
    nvlink_gb_per_s: 900
    tdp_w: 700
""", encoding="utf-8")
    r = runner.invoke(app, ["catalog", "show", "h100-sxm-80gb", "--catalog", str(d)])
    assert r.exit_code == 0, r.output
    assert not any(c in r.stdout for c in ("\u202e", "\u2028", "\x1b"))
    assert "\\u202E" in r.stdout or "\\u202e" in r.stdout
    gpu = (d / "gpu.yaml").read_text(encoding="utf-8")
    (d / "gpu.yaml").write_text(gpu.replace(gpu.splitlines()[2], '    name: "H100 \u2014 caf\u00e9"'),
                                encoding="utf-8")
    readable = runner.invoke(app, ["catalog", "show", "h100-sxm-80gb", "--catalog", str(d)])
    assert readable.exit_code == 0 and "H100 \u2014 caf\u00e9" in readable.stdout
