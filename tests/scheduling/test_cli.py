"""The ``schedule`` command through a local typer app."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from clustertwin.cli.schedule import register

app = typer.Typer()
register(app)


@app.callback()
def _main() -> None:
    """test app"""


def run(*args):
    return CliRunner().invoke(app, ["schedule", *args])


def test_json_side_by_side():
    r = run("--cluster", "uniform:8x8", "--trace", "synthetic:philly:400", "--policy", "fifo",
            "--policy", "sjf+backfill", "--json", "--load", "1.2")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out["policies"]) == {"fifo", "sjf+backfill"}
    m = out["policies"]["fifo"]
    assert m["jobs"] == 400 and 0 < m["gpu_util_allocated"] <= 1


def test_out_folder_files(tmp_path):
    r = run("--cluster", "uniform:4x8", "--trace", "synthetic:openb:300", "--policy", "fifo",
            "--out", str(tmp_path / "o"), "--failure-rate", "50", "--reserve", "8@1+2")
    assert r.exit_code == 0, r.output
    files = {p.name for p in (tmp_path / "o").iterdir()}
    assert {"schedule.html", "summary.json"} <= files
    assert "jobs.parquet" in files or "jobs.csv" in files
    html = (tmp_path / "o" / "schedule.html").read_text()
    assert html.count("plotly.js v") <= 2 and "cdn.plot.ly" not in html.split("</table>")[0]


def test_refuses_to_clobber(tmp_path):
    (tmp_path / "summary.json").write_text("{}")
    r = run("--cluster", "pool:8", "--trace", "synthetic:philly:20", "--out", str(tmp_path))
    assert r.exit_code == 2


@pytest.mark.parametrize("args", [
    ["--policy", "lottery"],
    ["--placement", "random"],
    ["--reserve", "lots"],
    ["--trace", "nope.csv"],
])
def test_bad_arguments_exit_2(args):
    base = {"--cluster": "uniform:2x8", "--trace": "synthetic:philly:10"}
    for k in list(base):
        if k in args:
            base.pop(k)
    flat = [x for kv in base.items() for x in kv]
    r = run(*flat, *args)
    assert r.exit_code == 2, r.output


def test_strict_bad_trace(tmp_path):
    p = tmp_path / "pods.csv"
    p.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                 "creation_time,deletion_time,scheduled_time\n"
                 "a,1,1,1,1000,,LS,Running,0,100,0\nb,1,1,1,1000,,LS,Pending,0,,\n"
                 "c,1,1,64,1000,,LS,Running,0,100,0\n")
    ok = run("--cluster", "uniform:2x8", "--trace", str(p), "--json")
    assert ok.exit_code == 0
    warnings = json.loads(ok.stdout)["warnings"]
    assert any("never scheduled" in w for w in warnings)
    assert any("larger than the cluster" in w for w in warnings)
    bad = run("--cluster", "uniform:2x8", "--trace", str(p), "--strict")
    assert bad.exit_code == 2


def test_scenario_cluster_uses_its_failure_profile():
    from pathlib import Path

    scen = Path(__file__).resolve().parents[2] / "examples" / "gpt3-175b-1024-a100.yaml"
    r = run("--cluster", str(scen), "--trace", "synthetic:philly:300", "--policy", "fifo", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["settings"]["failure_rate_per_node_day"] == pytest.approx(6.50 / 1000)
    off = json.loads(run("--cluster", str(scen), "--trace", "synthetic:philly:300", "--policy", "fifo",
                         "--json", "--failure-rate", "0").stdout)
    assert off["settings"]["failure_rate_per_node_day"] == 0


def test_jobs_csv_defuses_formula_names(tmp_path, monkeypatch):
    """issue 19: without pyarrow, per-job results go to jobs.csv; a trace's job name that
    starts like a spreadsheet formula is written with a leading quote."""
    import csv
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_s,gpus,duration_s\n=HYPERLINK(\"x\"),0,8,60\nplain,0,8,60\n")
    r = run("--cluster", "uniform:2x8", "--trace", str(trace), "--policy", "fifo",
            "--out", str(tmp_path / "o"))
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((tmp_path / "o" / "jobs.csv").open()))
    assert sorted(x["name"] for x in rows) == ["'=HYPERLINK(\"x\")", "plain"]
