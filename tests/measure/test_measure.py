"""clustertwin measure (issue 20): the benchmark runs on a CPU with a tiny model, writes what
plan --measured reads; the GPU path's files (measured.csv for calibration, the gemm ratio for
plan --measured) from a GPU-shaped result. Skips with the reason when PyTorch is absent."""

from __future__ import annotations

import importlib.util
import json

import pytest
from typer.testing import CliRunner

from clustertwin.cli import app

runner = CliRunner()
SCEN = """
name: gpt2-measure
model: {layers: 12, hidden: 768, ffn_hidden: 3072, heads: 12, kv_heads: 12, vocab: 50257, mlp: gelu}
training: {tokens: 1.0e9, seq_len: 1024, global_batch_tokens: 65536, gpus: 1}
cluster: {gpu: h100-sxm-80gb, node: dgx-h100, gpus: 1}
reliability: {trials: 20}
"""
HAVE_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch not installed (pip install torch==2.13.0, the [gpu] extra)")


@pytest.fixture
def scen(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(SCEN)
    return p


@needs_torch
def test_cpu_run_writes_what_plan_measured_reads(scen, tmp_path):
    out = tmp_path / "m"
    r = runner.invoke(app, ["measure", str(scen), "--tiny", "--steps", "2", "--device", "cpu",
                            "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["environment"]["device"] == "cpu" and doc["measured_tokens_per_s"] > 0
    assert doc["predicted"]["tokens_per_s"] > 0 and doc["predicted"]["stack"] == "pytorch"
    assert doc["comparable"] is False and doc["measured"]["gemm_ratio"] is None
    assert (out / "measured.json").is_file() and not (out / "measured.csv").exists()
    p = runner.invoke(app, ["plan", str(scen), "--measured", str(out / "measured.json"), "--json"])
    assert p.exit_code == 0, p.output
    rec = json.loads(p.stdout)["recalibration"]
    assert rec["step_time_change"] == pytest.approx(0.0, abs=1e-9)


def _gpu_doc(catalog, scen_path, share):
    """What measure writes after a GPU run, from a result shaped like a GPU benchmark's."""
    from clustertwin.measure import run
    from clustertwin.scenario import load_scenario

    sc = load_scenario(scen_path, catalog=catalog)
    shape = run.bench_shape(sc, 80, False, 4, False, False)
    est = run.predict(sc, catalog, "h100-sxm-80gb", shape)
    tokens_per_s = share * est.tokens_per_s
    env = {"tokens_per_s": tokens_per_s, "step_time_s": 4 * 1024 / tokens_per_s, "steps": 10,
           "device": "cuda", "device_name": "NVIDIA H100 80GB HBM3", "torch_version": "2.x",
           "cuda_version": "12.x", "precision": "bf16", "params": 1, "peak_memory_gib": 1.0}
    assert run.measured_gpu(catalog, sc, env) == "h100-sxm-80gb"
    return run.result_doc(sc, shape, env, "h100-sxm-80gb", est), est


def test_gpu_result_feeds_calibration_and_plan(scen, tmp_path, catalog):
    from clustertwin.cli.common import to_json
    from clustertwin.measure import run

    doc, est = _gpu_doc(catalog, scen, 0.7)  # the GPU ran at 70% of the predicted throughput
    measured = doc["measured_tokens_per_s"]
    assert doc["error"] == pytest.approx(1 / 0.7 - 1) and doc["measured"]["gemm_ratio"] == pytest.approx(0.7)
    (tmp_path / "measured.csv").write_text(run.calibration_csv(doc, "bf16"))
    c = runner.invoke(app, ["calibration", "--csv", str(tmp_path / "measured.csv"), "--json"])
    assert c.exit_code == 0, c.output
    (row,) = json.loads(c.stdout)["rows"]
    assert row["stack"] == "pytorch" and row["published"] == pytest.approx(4 * 1024 / measured, rel=1e-4)
    assert row["predicted"] == pytest.approx(est.step_time_s, rel=1e-6)
    (tmp_path / "measured.json").write_text(to_json(doc))
    p = runner.invoke(app, ["plan", str(scen), "--measured", str(tmp_path / "measured.json"), "--json"])
    assert p.exit_code == 0, p.output
    assert json.loads(p.stdout)["recalibration"]["step_time_change"] > 0.05  # measured slower


def test_scaled_down_shape_fits_the_gpu(scen, catalog):
    from clustertwin.measure import run
    from clustertwin.scenario import load_scenario

    sc = load_scenario(scen, catalog=catalog)
    big = sc.model_copy(update={"model": sc.model.model_copy(update={"layers": 4096})})
    s = run.bench_shape(big, 80, False, 1, False, False)
    assert s.layers < 4096 and 16 * run._params(s.to_dict()) <= run.STATE_SHARE * 80 * 2**30


def test_without_torch_one_line(scen, monkeypatch):
    from clustertwin.cli import measure as cli

    monkeypatch.setattr(cli, "_torch_missing", lambda: True)
    r = runner.invoke(app, ["measure", str(scen), "--tiny"])
    assert r.exit_code == 2 and "PyTorch is not installed" in r.output
    assert len([x for x in r.output.splitlines() if x.startswith("error:")]) == 1


def test_a_model_too_wide_for_one_gpu_is_one_line(scen, catalog):
    from clustertwin.errors import UsageError
    from clustertwin.measure import run
    from clustertwin.scenario import load_scenario

    sc = load_scenario(scen, catalog=catalog)
    wide = sc.model_copy(update={"model": sc.model.model_copy(update={"hidden": 65536, "ffn_hidden": 262144, "heads": 512, "kv_heads": 512})})
    with pytest.raises(UsageError) as ei:
        run.bench_shape(wide, 80, False, 1, False, False)
    (line,) = ei.value.lines()
    assert "--tiny" in line
