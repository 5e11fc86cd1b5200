"""The ``reliability`` command, on a typer app of its own."""

from __future__ import annotations

import json

import reliability_support as rs
import typer
import yaml
from typer.testing import CliRunner

from clustertwin.cli.reliability import register


def _app():
    app = typer.Typer()
    register(app)

    @app.command("noop")
    def noop() -> None:  # a second command keeps typer from collapsing to a single one
        pass

    return app


def _write(tmp_path, reliability):
    doc = {"name": "cli-test", "model": dict(rs.LLAMA3_405B),
           "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_tokens": 16777216},
           "cluster": {"gpu": "rt-gpu", "node": "rt-node", "gpus": 2048, "spare_nodes": 8,
                       "fabric": {"technology": "rt-fabric"}},
           "reliability": reliability, "economics": {"costs": "rt-costs"}}
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def test_json_output(tmp_path):
    p = _write(tmp_path, {"trials": 30})
    r = CliRunner().invoke(_app(), ["reliability", str(p), "--json", "--catalog", str(rs.DATA)])
    assert r.exit_code == 0, r.output
    block = json.loads(r.stdout)
    assert block["ettr_mean"] > 0 and "by_cause" in block


def test_table_output(tmp_path):
    p = _write(tmp_path, {"trials": 30})
    r = CliRunner().invoke(_app(), ["reliability", str(p), "--catalog", str(rs.DATA)])
    assert r.exit_code == 0, r.output
    assert "ETTR" in r.stdout


def test_bad_input_exit_2(tmp_path):
    p = _write(tmp_path, {"checkpoint_interval_min": 0.01, "checkpoint_blocking_s": 30})
    r = CliRunner().invoke(_app(), ["reliability", str(p), "--catalog", str(rs.DATA)])
    assert r.exit_code == 2
    assert "reliability.checkpoint_interval_min" in r.output
    p = _write(tmp_path, {"failure_profile": "no-such"})
    r = CliRunner().invoke(_app(), ["reliability", str(p), "--catalog", str(rs.DATA)])
    assert r.exit_code == 2 and "failure profile" in r.output
