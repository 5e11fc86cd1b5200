"""The sweep and compare commands end to end (small scenarios)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time

import pytest
import yaml
from typer.testing import CliRunner

from clustertwin.cli import app
from tests.conftest import EXAMPLES
from tests.procs import children, still_running


def run(*args):
    return CliRunner().invoke(app, list(args))


def test_sweep_writes_the_three_files_and_names_the_best(small_file, tmp_path):
    out = tmp_path / "out"
    r = run("sweep", str(small_file), "--set", "cluster.gpus=64,128", "--range", "training.tokens=1e11:2e11:1e11",
            "--require", "reliability.effective_days<=40", "--out", str(out), "--workers", "1")
    assert r.exit_code == 0, r.output
    assert "best:" in r.output and "Pareto set" in r.output
    with (out / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 and list(rows[0])[:2] == ["cluster.gpus", "training.tokens"]
    assert all(r["error"] == "" for r in rows) and float(rows[0]["training.days"]) > 0
    import pyarrow.parquet as pq

    assert pq.read_table(out / "sweep.parquet").num_rows == 4
    page = (out / "sweep.html").read_text()
    assert "Pareto front" in page and "Metrics against GPUs installed" in page  # in words (issue 26)


def test_failing_scenario_is_a_row(small_file, tmp_path):
    doc = yaml.safe_load(small_file.read_text())
    study = {"study": "mixed", "base": doc, "grid": {"training.precision": ["bf16", "fp8"]},
             "cases": [{"name": "H100", "set": {}},
                       {"name": "A100", "set": {"cluster.gpu": "a100-sxm-80gb", "cluster.node": "dgx-a100"}}]}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(study))
    r = run("sweep", str(path), "--out", str(tmp_path / "o"), "--workers", "1")
    assert r.exit_code == 0, r.output
    with (tmp_path / "o" / "sweep.csv").open() as f:
        errors = [row["error"] for row in csv.DictReader(f)]
    assert errors[:3] == ["", "", ""] and "no fp8" in errors[3]


@pytest.mark.parametrize("args, key", [
    (["--set", "cluster.gpuz=8"], "cluster.gpuz"),
    (["--set", "cluster.gpus=64,abc"], "cluster.gpus"),
    (["--set", "cluster.fabric.technology=ib-ndr,ib-nope"], "cluster.fabric.technology"),
    (["--range", "cluster.gpus=8:x:8"], "cluster.gpus"),
    (["--objective", "cheap"], "cheap"),
    (["--require", "days<<3"], "days<<3"),
    (["--require", "wall_days<=3"], "wall_days<=3"),
])
def test_bad_request_is_one_line_exit_2_before_work(small_file, tmp_path, args, key):
    out = tmp_path / "never"
    r = run("sweep", str(small_file), "--set", "economics.pue=1.2,1.3", *args, "--out", str(out))
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and key in lines[0], r.output
    assert not out.exists()  # nothing was run or written


def test_compare_side_by_side(tmp_path):
    out = tmp_path / "cmp"
    r = run("compare", str(EXAMPLES / "llama3-70b-gb200-nvl72.yaml"), str(EXAMPLES / "gpt3-175b-1024-a100.yaml"),
            "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "wall-clock days" in r.output and "llama3-70b-gb200-nvl72" in r.output
    page = (out / "compare.html").read_text()
    assert "Step time, stacked by component" in page and "Capital cost by category" in page


def test_compare_needs_two_valid_files(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: {preset: nope}\n")
    r = run("compare", str(EXAMPLES / "default.yaml"), str(bad))
    assert r.exit_code == 2 and "bad.yaml: cluster" in r.output
    assert run("compare", str(EXAMPLES / "default.yaml")).exit_code == 2


def test_common_seeds_make_equal_options_tie(small_file, tmp_path):
    out = tmp_path / "crn"
    r = run("sweep", str(small_file), "--set", "economics.cloud_usd_per_gpu_hour=2,3", "--seeds", "common",
            "--out", str(out), "--workers", "1")
    assert r.exit_code == 0, r.output
    with (out / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["reliability.effective_days"] == rows[1]["reliability.effective_days"]
    assert float(rows[1]["economics.run_cost_cloud_usd"]) > float(rows[0]["economics.run_cost_cloud_usd"])


@pytest.mark.parametrize("study, rows", [("ladder.yaml", 5), ("h100-vs-nvl72.yaml", 4)])
def test_builtin_studies_run(tmp_path, study, rows):
    out = tmp_path / "s"
    r = run("sweep", str(EXAMPLES / study), "--out", str(out), "--workers", "2")
    assert r.exit_code == 0, r.output
    with (out / "sweep.csv").open() as f:
        table = list(csv.DictReader(f))
    assert len(table) == rows
    planned = [row for row in table if not row["error"]]
    assert len(planned) >= 4  # the 100,000-GPU rung needs issue 11's GPU-count work
    assert all(float(row["reliability.effective_days"]) >= float(row["training.days"]) for row in planned)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="finds the workers in /proc (Linux)")
def test_a_killed_sweep_leaves_no_pool_worker_behind(tmp_path):
    """kill -9 of ``clustertwin sweep`` ends its pool's workers too: they watch their parent
    (a forked sibling holds the sweep's end of their pipe, so without that they waited for
    good, ~130 MB each)."""
    seeds = ",".join(str(s) for s in range(1, 81))
    exe = [sys.executable, "-m", "clustertwin.cli", "sweep", str(EXAMPLES / "default.yaml"),
           "--set", f"reliability.seed={seeds}", "--workers", "2", "--out", str(tmp_path / "out")]
    sweep = subprocess.Popen(exe, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 and sweep.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
            workers = children(sweep.pid)
        assert len(workers) >= 2, f"the sweep's pool never started (exit status {sweep.poll()})"
    finally:
        sweep.kill()
        sweep.wait(10)
    assert not still_running(workers, within_s=10), f"workers {workers} outlived the sweep"
