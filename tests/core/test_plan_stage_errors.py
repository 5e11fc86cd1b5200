"""A stage that cannot compute the input is the input's error (one line, exit 2); a stage that
is not available is skipped and the exit status (3) and the JSON say so (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from clustertwin.cli import app
from clustertwin.scenario import DEFAULT_SCENARIO


@pytest.fixture
def small(tmp_path: Path) -> Path:
    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    doc["cluster"]["gpus"] = 1024
    doc["reliability"]["trials"] = 50
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def _raise(exc: BaseException):  # noqa: ANN202
    def stage(*a, **k):  # noqa: ANN002, ANN003, ANN202
        raise exc
    return stage


@pytest.mark.parametrize("module,attr", [("clustertwin.economics", "economics"),
                                         ("clustertwin.deadline", "train")])  # the training stage plan runs
def test_stage_overflow_is_exit_2(monkeypatch, small: Path, module: str, attr: str) -> None:
    import importlib

    monkeypatch.setattr(importlib.import_module(module), attr, _raise(OverflowError("math range error")))
    res = CliRunner().invoke(app, ["plan", str(small), "--json"])
    assert res.exit_code == 2, res.output
    err = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and "cannot compute" in err[0]
    # the section the user wrote, never the internal exception's text (issue 31)
    assert "OverflowError" not in err[0] and "math range error" not in err[0]
    assert ": economics:" in err[0] or ": model/training:" in err[0]
    assert "Traceback" not in res.output


def test_unavailable_stage_is_skipped_with_exit_3(monkeypatch, small: Path) -> None:
    import clustertwin.buildout as b

    monkeypatch.setattr(b, "plan_buildout", _raise(NotImplementedError("not built yet")))
    res = CliRunner().invoke(app, ["plan", str(small), "--json"])
    assert res.exit_code == 3, res.output
    doc = json.loads(res.stdout[res.stdout.index("{"):res.stdout.rindex("}") + 1])
    assert doc["skipped_stages"] == ["buildout"]
    assert any("buildout: stage skipped" in w for w in doc["warnings"])
    assert "buildout" not in doc


def test_validate_reports_compute_failure(monkeypatch, small: Path) -> None:
    import clustertwin.economics as e

    monkeypatch.setattr(e, "economics", _raise(ValueError("negative capex")))
    res = CliRunner().invoke(app, ["validate", str(small)])
    assert res.exit_code == 2, res.output
    assert "cannot compute" in res.output
