"""``validate`` makes the checks ``plan`` stops on without running the Monte Carlos (issue 25:
cold start): the reliability stage's inputs and its refusal of a hopeless job are checked at the
interval its search centres on, the build-out's inputs with two samples; the job is re-estimated
as ``plan`` does when hot spares take installed slots, so both name the same job."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from clustertwin.cli import app
from clustertwin.scenario import DEFAULT_SCENARIO


def _scenario(tmp_path: Path, **reliability) -> Path:
    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    doc["reliability"].update(reliability)
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def _errors(args: list[str]) -> tuple[int, list[str]]:
    res = CliRunner().invoke(app, args)
    return res.exit_code, [ln for ln in res.output.splitlines() if ln.startswith("error:")]


@pytest.mark.parametrize("restart_min", [600, 1440])
def test_a_hopeless_job_is_refused_by_validate_as_by_plan(tmp_path: Path, restart_min: int) -> None:
    path = _scenario(tmp_path, failures_per_1000_node_days=1000, restart_min=restart_min)
    rc_v, v = _errors(["validate", str(path)])
    rc_p, p = _errors(["plan", str(path), "--json"])
    assert (rc_v, rc_p) == (2, 2)
    assert v == p and len(v) == 1 and "almost never finish" in v[0]


def test_reliability_keys_are_checked(tmp_path: Path) -> None:
    rc, lines = _errors(["validate", str(_scenario(tmp_path, trials=0, seed=-1))])
    assert rc == 2
    assert any("reliability.trials" in ln for ln in lines)
    assert any("reliability.seed" in ln for ln in lines)


def test_validate_runs_no_monte_carlo(monkeypatch) -> None:
    """The simulations are plan's; validate of the default scenario never calls the
    reliability stage's search and Monte Carlo (``analyze``)."""
    import clustertwin.reliability as rel

    called: list[str] = []
    monkeypatch.setattr(rel, "analyze", lambda *a, **k: called.append("analyze"))
    res = CliRunner().invoke(app, ["validate", str(DEFAULT_SCENARIO)])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("ok:")
    assert called == []
