"""Hostile and foreign traces (issue 15): NaN/inf/negative/overflowing values are rejected with
counts (errors under --strict), the documented jobs CSV and a Slurm sacct export replay with
every row accounted for, --load/--scale apply to every trace or are refused with a reason."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from clustertwin.cli import app
from clustertwin.errors import ScenarioError, UsageError
from clustertwin.scheduling.traces import load_trace
from clustertwin.scheduling.traces.common import read_trace_text
from clustertwin.scheduling.traces.sacct import gpus_of, time_limit_s

DATA = Path(__file__).parent / "data"


def run(*args: str):  # noqa: ANN201
    return CliRunner().invoke(app, ["schedule", *args])


def _jobs_csv(tmp_path: Path, rows: list[str], header: str = "job_id,submit_s,gpus,duration_s") -> Path:
    p = tmp_path / "jobs.csv"
    p.write_text("\n".join([header, *rows]) + "\n")
    return p


BAD_VALUES = {
    "nan-submit": ("a,nan,1,60", "NaN or infinite"),
    "inf-duration": ("a,0,1,inf", "NaN or infinite"),
    "negative-submit": ("a,-5,1,60", "negative"),
    "zero-duration": ("a,0,1,0", "not positive"),
    "overflow-gpus": ("a,0,1e400,60", "NaN or infinite"),
    "huge-gpus": ("a,0,99999999999,60", "too large"),
    "fractional-multi-gpu": ("a,0,1.5,60", "not a whole number"),
    "text": ("a,soon,1,60", "not a number"),
    "short-row": ("a,0,1", "fields"),
}


@pytest.mark.parametrize("row,reason", BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_bad_values_rejected_with_counts(tmp_path: Path, row: str, reason: str) -> None:
    p = _jobs_csv(tmp_path, ["ok1,0,1,60", row, "ok2,10,2,30"])
    w = load_trace(str(p))
    assert len(w) == 2
    rep = w.report
    assert rep.rows_read == 3 and rep.rows_rejected == 1
    assert reason in next(iter(rep.rejected))
    assert np.isfinite(w.submit_s).all() and np.isfinite(w.duration_s).all()
    with pytest.raises(ScenarioError, match=reason):
        load_trace(str(p), strict=True)


def test_nan_submit_does_not_hang_the_replay(tmp_path: Path) -> None:
    """Was an endless loop (NaN on the event heap), also with --strict."""
    p = _jobs_csv(tmp_path, ["a,nan,1,60", "b,0,1,60"])
    res = run("--cluster", "pool:8", "--trace", str(p), "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["trace"]["rows_rejected"] == 1
    assert run("--cluster", "pool:8", "--trace", str(p), "--strict").exit_code == 2


@pytest.mark.parametrize("trace", ["openb", "gavel", "pollux"])
def test_shipped_loaders_reject_nan_rows(tmp_path: Path, traces: Path, trace: str) -> None:
    """Each shipped format with one row's number replaced by nan: the row is rejected, counted."""
    if trace == "openb":
        src = traces / "alibaba-gpu-v2023-openb" / "openb_pod_list_default.csv.gz"
        lines = read_trace_text(src).splitlines()[:6]
        cells = lines[2].split(",")
        cells[lines[0].split(",").index("creation_time")] = "nan"
        lines[2] = ",".join(cells)
        p = tmp_path / "pods.csv"
    elif trace == "gavel":
        src = sorted((traces / "philly-derived-gavel" / "seed=0").glob("*.trace.gz"))[0]
        lines = read_trace_text(src).splitlines()[:5]
        cells = lines[1].split("\t")
        cells[5] = "inf"
        lines[1] = "\t".join(cells)
        p = tmp_path / "vc.trace"
    else:
        src = traces / "pollux-workloads" / "workloads-realistic" / "workload-1.csv.gz"
        lines = read_trace_text(src).splitlines()[:6]
        cells = lines[2].split(",")
        cells[lines[0].split(",").index("time")] = "-inf"
        lines[2] = ",".join(cells)
        p = tmp_path / "workload.csv"
    p.write_text("\n".join(lines) + "\n")
    w = load_trace(str(p))
    assert w.report.rows_rejected == 1
    assert np.isfinite(w.submit_s).all()


def test_sacct_every_row_accounted_for() -> None:
    """Fixture written from Slurm's sacct man page (--parsable2, AllocTRES, Timelimit forms)."""
    w = load_trace(str(DATA / "slurm.sacct"))
    rep = w.report
    lines = [ln for ln in (DATA / "slurm.sacct").read_text().splitlines()[1:] if ln.strip()]
    assert rep.rows_read == len(lines) == 17
    assert rep.jobs + rep.rows_rejected + sum(rep.skipped.values()) == rep.rows_read
    assert rep.jobs == 8 and sum(rep.skipped.values()) == 4
    assert set(rep.rejected) == {"never started (CANCELLED)", "never started (PENDING)",
                                 "still running or no End time (RUNNING)",
                                 "no GPUs allocated (CPU-only job)", "8 fields, the header has 11"}
    by = dict(zip(w.names, range(len(w)), strict=True))
    assert w.gpus_milli[by["1002"]] == 32000          # typed gres/gpu:h100=32
    assert w.duration_s[by["1002"]] == 86400
    assert w.requested_s[by["1011"]] == 216000        # 2-12 = days-hours
    assert np.isnan(w.requested_s[by["1004_1"]])      # UNLIMITED: modelled later
    assert w.submit_s[by["1002"]] == 600              # from the earliest Submit
    assert set(w.teams) == {"llm", "vision"}


@pytest.mark.parametrize("text,secs", [("90", 5400), ("05:00", 300), ("04:00:00", 14400),
                                       ("1-00:00:00", 86400), ("2-12", 216000), ("1-2:30", 95400)])
def test_slurm_time_limits(text: str, secs: float) -> None:
    assert time_limit_s(text) == secs


def test_tres_gpus() -> None:
    assert gpus_of("billing=64,cpu=64,gres/gpu=8,gres/gpu:h100=8,mem=512G,node=1") == 8
    assert gpus_of("cpu=8,gres/gpu:a100=2,gres/gpu:v100=1") == 3
    assert gpus_of("cpu=8,mem=1G") == 0


def test_sacct_replays_from_the_cli() -> None:
    res = run("--cluster", "pool:64", "--trace", str(DATA / "slurm.sacct"), "--json",
              "--policy", "fifo", "--policy", "priority+preempt")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["trace"]["jobs"] == 8
    assert any("preemption had no opportunity" in w for w in doc["warnings"])


def test_tiresias_sample_accepted(traces: Path) -> None:
    w = load_trace("tiresias")
    assert len(w) == 60 and w.report.rows_rejected == 0


def test_load_compresses_real_traces(tmp_path: Path) -> None:
    from clustertwin.scheduling.traces.timescale import compress_to_load, offered_load

    p = _jobs_csv(tmp_path, [f"j{i},{i * 1000},4,500" for i in range(20)])
    w = load_trace(str(p))
    # work inside the arrival window: the last job arrives at its end and adds nothing
    assert offered_load(w, 8) == pytest.approx(19 * 4 * 500 / (8 * 19000))
    w9, note = compress_to_load(w, 8, 0.9, "t")
    assert offered_load(w9, 8) == pytest.approx(0.9, rel=1e-4)
    assert "as recorded" in note


def test_load_beyond_reach_refused(tmp_path: Path) -> None:
    p = _jobs_csv(tmp_path, ["a,0,1,10", "b,1000,1,10"])
    res = run("--cluster", "pool:64", "--trace", str(p), "--load", "5")
    assert res.exit_code == 2 and "cannot offer" in res.output


def test_load_refused_without_a_window(tmp_path: Path) -> None:
    p = _jobs_csv(tmp_path, ["a,0,1,60", "b,0,1,60"])
    res = run("--cluster", "pool:8", "--trace", str(p), "--load", "0.9")
    assert res.exit_code == 2 and "cannot set the load" in res.output


@pytest.mark.parametrize("args,msg", [
    (["--load", "nan"], "--load"), (["--load", "0"], "--load"), (["--failure-rate", "inf"], "--failure-rate"),
    (["--repair-hours", "nan"], "--repair-hours"), (["--scale", "1.5"], "--scale"),
    (["--scale", "inf"], "--scale"), (["--share", "nosuch=1"], "unknown team"),
    (["--team-limit", "llm=nan"], "finite"), (["--policy", "multifactor:age=nan"], "finite"),
    (["--time-limit-factor", "inf"], "--time-limit-factor"),
    (["--policy", "fifo+backfill+backfill"], "given twice"),
], ids=lambda v: v if isinstance(v, str) else "_".join(v))
def test_options_validated(args: list[str], msg: str) -> None:
    res = run("--cluster", "pool:64", "--trace", str(DATA / "slurm.sacct"), *args)
    assert res.exit_code == 2, res.output
    assert msg in res.output and "Traceback" not in res.output


def test_scale_multiplies_job_sizes() -> None:
    res = run("--cluster", "pool:512", "--trace", str(DATA / "slurm.sacct"), "--scale", "4", "--json")
    assert res.exit_code == 0, res.output
    assert any("--scale 4" in w for w in json.loads(res.stdout)["warnings"])


def test_hostile_trace_files(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "t.csv"
    os.mkfifo(fifo)
    with pytest.raises(ScenarioError, match="not a regular file"):
        load_trace(str(fifo))
    nul = tmp_path / "n.csv"
    nul.write_bytes(b"job_id,submit_s,gpus,duration_s\na,0\x00,1,60\n")
    try:
        w = load_trace(str(nul))
        assert w.report.rows_rejected == 1
    except ScenarioError:
        pass
    with pytest.raises(UsageError):
        load_trace("synthetic:philly:99999999999999")


@pytest.mark.parametrize("cluster", ["pool:99999999999999999", "pool:inf", "uniform:1000000x1000000",
                                     "uniform:8x0", "pool:-1"])
def test_cluster_argument_bounded(cluster: str) -> None:
    res = run("--cluster", cluster, "--trace", str(DATA / "slurm.sacct"))
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output


def test_node_list_hostile(tmp_path: Path) -> None:
    p = tmp_path / "nodes.csv"
    p.write_text("name,gpus\nn1,8\nn2,inf\nn3,1e400\n")
    res = run("--cluster", str(p), "--trace", str(DATA / "slurm.sacct"))
    assert res.exit_code == 2 and "not a GPU count" in res.output, res.output


def test_schedule_html_escapes_trace_names(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    p = _jobs_csv(tmp_path, [f"{evil},0,1,60,{evil}", f"b,10,2,30,{evil}x"],
                  header="job_id,submit_s,gpus,duration_s,team")
    out = tmp_path / "out"
    res = run("--cluster", "pool:8", "--trace", str(p), "--out", str(out), "--share", f"{evil}=1")
    assert res.exit_code == 0, res.output
    page = (out / "schedule.html").read_text()
    assert "<script>alert" not in page


@pytest.mark.parametrize("rows,needle", [
    ([], "the trace has no rows"),
    (["a,0,1,-5", "b,x,1,10"], "all 2 rows rejected"),
])
def test_a_trace_with_no_job_left_is_an_error(tmp_path: Path, rows: list[str], needle: str) -> None:
    """Nothing to replay is the input's error (exit 2, one line per reason), not an empty
    comparison with exit 0."""
    res = run("--cluster", "pool:8", "--trace", str(_jobs_csv(tmp_path, rows)), "--json")
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert lines and all(needle in ln and "jobs.csv" in ln for ln in lines)
    assert len(lines) == (2 if rows else 1) and "Traceback" not in res.output
