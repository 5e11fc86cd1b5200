"""The ``buildout`` command on a throwaway typer app (the lead wires it into the main CLI)."""

import csv
import io
import json

import pytest
import typer
from typer.testing import CliRunner

from clustertwin.cli.buildout import register


@pytest.fixture
def app(monkeypatch, catalog, make_scenario):
    import clustertwin.cli.common as cc
    import clustertwin.plan

    monkeypatch.setattr(cc, "load_inputs", lambda path, dirs=None: (make_scenario(2048), catalog))
    # a plan without a design stage: the build-out's own quantity rules (the design the
    # command passes on is tested in tests/core/test_consistency.py)
    monkeypatch.setattr(clustertwin.plan, "plan_through",
                        lambda scenario, catalog, last="design": clustertwin.plan.Plan(scenario))
    a = typer.Typer()
    register(a)

    @a.command("noop")  # a second command keeps typer in multi-command mode, as in the real app
    def _noop() -> None:
        pass

    return a


runner = CliRunner()


def test_json(app):
    r = runner.invoke(
        app,
        [
            "buildout",
            "s.yaml",
            "--json",
            "--samples",
            "2000",
            "--what-if",
            "gpu_lead_time_days=+90",
        ],
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert {"go_live_days_p50", "go_live_days_p90", "critical_path"} <= set(data)
    assert data["what_ifs"][0]["label"] == "gpu_lead_time_days=+90"


def test_table_and_out(app, tmp_path):
    r = runner.invoke(app, ["buildout", "s.yaml", "--out", str(tmp_path / "o"), "--samples", "500"])
    assert r.exit_code == 0, r.output
    assert "go-live P50" in r.stdout
    rows = list(csv.DictReader(io.StringIO((tmp_path / "o" / "buildout.csv").read_text())))
    assert len(rows) == 198  # the seed's 195 and a greenfield site's acquisition, permits and shell
    assert "critical_path" in json.loads((tmp_path / "o" / "buildout.json").read_text())


def test_out_refuses_foreign_files(app, tmp_path):
    (tmp_path / "buildout.csv").write_text("mine")
    r = runner.invoke(app, ["buildout", "s.yaml", "--out", str(tmp_path), "--samples", "100"])
    assert r.exit_code == 2 and "--force" in r.output
    r = runner.invoke(
        app, ["buildout", "s.yaml", "--out", str(tmp_path), "--force", "--samples", "100"]
    )
    assert r.exit_code == 0


def test_bad_what_ifs_exit_2_one_line_each(app):
    r = runner.invoke(
        app,
        [
            "buildout",
            "s.yaml",
            "-w",
            "step.999.likely=5",
            "-w",
            "step.1.after=+195",
            "-w",
            "step.3.days=-1/2/3",
        ],
    )
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 2  # parse errors are reported together before any graph is built
    assert any("step.999.likely" in ln for ln in lines) and any("step.3.days" in ln for ln in lines)
    r = runner.invoke(app, ["buildout", "s.yaml", "-w", "step.1.after=+195"])
    assert r.exit_code == 2 and "cycle" in r.output and "Traceback" not in r.output


def test_help_documents_what_if_keys(app):
    r = runner.invoke(app, ["buildout", "--help"])
    assert r.exit_code == 0
    for word in ("gpu_lead_time_days", "step.42.days", "profile=fast-track"):
        assert word in r.output
