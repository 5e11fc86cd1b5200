"""``clustertwin track`` through a local typer app: the contract keys, the files, the refusals."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from clustertwin.cli.track import register
from clustertwin.track.records import iso
from clustertwin.track.synthetic import generate
from track.helpers import DATA, SCENARIO

app = typer.Typer()
register(app)


@app.callback()
def _main() -> None:
    """test app"""


def run(*args):
    return CliRunner().invoke(app, ["track", *args])


@pytest.fixture
def run_files(tmp_path, pv, gpt3_plan, monkeypatch):
    """A synthetic run's log and sacct files, and the plan made once (not again per command)."""
    import clustertwin.plan

    monkeypatch.setattr(clustertwin.plan, "make_plan", lambda *a, **k: gpt3_plan)  # noqa: ARG005
    r = generate(pv, 11)
    (tmp_path / "train.log").write_text(r.log)
    (tmp_path / "job.sacct").write_text(r.sacct)
    half = next(t for t, tok in r.checkpoints if tok >= 0.5 * pv.tokens)
    return tmp_path, r, half


def test_json_and_out_folder(run_files):
    from clustertwin.acceptance.recalibrate import read_measured

    tmp, r, half = run_files
    out = tmp / "o"
    res = run(str(SCENARIO), "--log", str(tmp / "train.log"), "--sacct", str(tmp / "job.sacct"),
              "--as-of", iso(half), "--json", "--out", str(out))
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    # contract section 6
    assert set(doc["progress"]) >= {"tokens_done", "fraction"}
    assert set(doc["observed"]) >= {"tokens_per_s", "step_s", "mfu", "interruptions", "lost_days", "ettr"}
    assert set(doc["forecast"]) >= {"trained_by_p50", "trained_by_p90", "remaining_days_p50", "remaining_days_p90"}
    assert set(doc["lines"]) >= {"read", "skipped"} and isinstance(doc["drift"], list)
    assert doc["progress"]["fraction"] == pytest.approx(0.5, abs=0.01)
    assert doc["as_of"] == iso(half)
    assert doc["forecast"]["remaining_days_p50"] <= doc["forecast"]["remaining_days_p90"]
    assert {p.name for p in out.iterdir()} >= {"track.json", "track.html", "measured.json"}
    page = (out / "track.html").read_text()
    assert 'data-key="forecast.trained_by_p90"' in page and "Tokens trained: actual, plan and forecast" in page
    assert "<script src=" not in page  # offline: plotly.js embedded
    m = read_measured(out / "measured.json")  # what plan --measured reads
    assert 0.8 < m["gemm_ratio"] < 1.25
    measured = json.loads((out / "measured.json").read_text())
    assert measured["repredicted_step_time_s"] == pytest.approx(measured["observed_step_time_s"], rel=0.02)


def test_terminal_rows(run_files):
    tmp, _, half = run_files
    res = run(str(SCENARIO), "--log", str(tmp / "train.log"), "--as-of", iso(half))
    assert res.exit_code == 0, res.output
    assert "trained by" in res.stdout and "checkpoint interval" in res.stdout


@pytest.mark.parametrize("args, message", [
    ([], "at least one training log"),
    (["--log", str(DATA / "README.md")], "a training log"),
    (["--log", "/no/such/file.log"], "a readable log file"),
    (["--log", str(DATA / "megatron.log"), "--as-of", "next tuesday"], "ISO 8601"),
])
def test_bad_input_exits_2_with_one_line_each(args, message):
    res = run(str(SCENARIO), *args)
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and message in lines[0]


def test_hostile_job_names_reach_page_and_terminal_as_text(run_files):
    """A JobID carrying markup shows as written: escaped in track.html (plotly hover text
    included) and in the terminal (no rich markup)."""
    tmp, r, half = run_files
    evil = '<a href="javascript:alert(1)">x</a>[bold]'
    sacct = r.sacct.replace("|pretrain|", "|p|").splitlines()
    sacct[1] = sacct[1].replace(sacct[1].split("|")[0], evil, 1)
    (tmp / "evil.sacct").write_text("\n".join(sacct) + "\n")
    out = tmp / "e"
    res = run(str(SCENARIO), "--log", str(tmp / "train.log"), "--sacct", str(tmp / "evil.sacct"),
              "--as-of", iso(half), "--out", str(out))
    assert res.exit_code == 0, res.output
    page = (out / "track.html").read_text()
    assert 'href="javascript' not in page and "javascript:alert" in page.replace("&quot;", '"')
