"""The traces packaged with clustertwin (issue 30): what `traces list` says matches what the
loaders read, every folder carries its licence and attribution, only redistributable terms ship,
and named traces resolve to the package or to CLUSTERTWIN_TRACES, never to a folder found by
walking up the directory tree."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clustertwin.cli import app
from clustertwin.errors import UserError
from clustertwin.scheduling.traces import load_trace
from clustertwin.scheduling.traces.listing import packaged_traces
from clustertwin.scheduling.traces.locate import PACKAGED

#: licences whose terms allow redistribution in the package (README of each source)
REDISTRIBUTABLE = {"CC BY 4.0", "MIT", "Apache-2.0", "MIT / CC BY 4.0"}
POLLUX_1 = PACKAGED / "pollux-workloads" / "workloads-realistic" / "workload-1.csv.gz"


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


def test_traces_list_json_is_the_contract(traces) -> None:
    res = _cli("traces", "list", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [d["name"] for d in doc][:4] == ["openb", "gavel", "pollux", "tiresias"]
    for d in doc:
        assert {"name", "jobs", "source", "license"} <= set(d)
        assert d["jobs"] > 0 and d["source"] and d["license"] in REDISTRIBUTABLE


@pytest.mark.parametrize("name", ["openb", "gavel", "pollux", "tiresias"])
def test_listed_jobs_are_the_rows_the_loader_reads(traces, name) -> None:
    """The list counts data rows itself; the loader reads them its own way."""
    listed = {t.name: t.jobs for t in packaged_traces()}
    assert load_trace(name).report.rows_read == listed[name]


def test_every_folder_has_licence_and_attribution() -> None:
    folders = {t.folder for t in packaged_traces()}
    on_disk = {p.name for p in PACKAGED.iterdir() if p.is_dir()}
    assert folders == on_disk  # nothing ships unlisted
    for f in folders:
        names = {p.name for p in (PACKAGED / f).iterdir()}
        assert "ATTRIBUTION.md" in names, f
        assert names & {"LICENSE.txt", "LICENSE.md"}, f


def test_non_redistributable_traces_stay_out() -> None:
    """Sia's workloads (no licence) and Lucid's Venus files (S-Lab, non-commercial only)."""
    files = {p.name for p in PACKAGED.rglob("*")}
    assert not (PACKAGED / "sia-workloads").exists()
    assert not any(n.startswith(("Venus_cluster_throughput", "Venus_vc_config")) for n in files)


def _sia_folder(root: Path) -> Path:
    """A CLUSTERTWIN_TRACES folder holding one Sia-format workload (Pollux's columns)."""
    d = root / "sia-workloads" / "philly"
    d.mkdir(parents=True)
    (d / "workload-1.csv").write_bytes(gzip.decompress(POLLUX_1.read_bytes()))
    return root


def test_other_traces_come_from_clustertwin_traces(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CLUSTERTWIN_TRACES", str(_sia_folder(tmp_path / "mine")))
    assert len(load_trace("sia-philly")) == 160
    assert load_trace("openb").report.rows_read == 8152  # the package still answers the rest


def test_no_walk_up_to_a_shared_folder(tmp_path, monkeypatch) -> None:
    """A shared/traces folder above the working directory is not looked for."""
    monkeypatch.delenv("CLUSTERTWIN_TRACES", raising=False)
    _sia_folder(tmp_path / "shared" / "traces")
    (tmp_path / "repo" / "sub").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo" / "sub")
    with pytest.raises(UserError) as exc:
        load_trace("sia-philly")
    assert "CLUSTERTWIN_TRACES" in exc.value.lines()[0]


def test_clustertwin_traces_not_a_folder_is_one_line(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CLUSTERTWIN_TRACES", str(tmp_path / "nope"))
    res = _cli("schedule", "--cluster", "pool:8", "--trace", "openb")
    assert res.exit_code == 2
    assert len(res.stderr.strip().splitlines()) == 1 and "CLUSTERTWIN_TRACES" in res.stderr


def test_user_gzip_trace_reads_and_a_broken_one_is_refused(tmp_path) -> None:
    good = tmp_path / "w.csv.gz"
    shutil.copy(POLLUX_1, good)
    assert len(load_trace(str(good))) == 160
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(POLLUX_1.read_bytes()[:200])
    res = _cli("schedule", "--cluster", "pool:8", "--trace", str(bad))
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.output
    assert "bad.csv.gz" in res.stderr
