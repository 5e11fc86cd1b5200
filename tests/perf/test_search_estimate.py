"""Parallelism search, the estimate stage, bad input and the perf commands."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from clustertwin.errors import InfeasibleError, ScenarioError
from clustertwin.perf import estimate
from clustertwin.perf.stage import job_of, run_search, system_of
from clustertwin.scenario import scenario_from_dict

SMALL = {
    "schema_version": 1,
    "name": "gpt-small",
    "model": {
        "layers": 24,
        "hidden": 2048,
        "ffn_hidden": 8192,
        "heads": 16,
        "kv_heads": 16,
        "vocab": 51200,
        "mlp": "gelu",
    },
    "training": {"tokens": 1e11, "seq_len": 2048, "global_batch_seqs": 512, "precision": "bf16"},
    "cluster": {
        "gpu": "a100-sxm-80gb",
        "node": "dgx-a100",
        "gpus": 64,
        "fabric": {"technology": "ib-hdr"},
    },
}


def scen(catalog, **upd):
    d = copy.deepcopy(SMALL)
    for sec, vals in upd.items():
        d[sec] = {**d[sec], **vals}
    return scenario_from_dict(d, "test.yaml", catalog)


def test_estimate_contract_fields(catalog):
    est = estimate(scen(catalog), catalog)
    c = est.to_contract()
    for k in (
        "gpus",
        "parallelism",
        "step_time_s",
        "tokens_per_s",
        "model_tflops_per_gpu",
        "mfu",
        "hfu",
        "memory_gib_per_gpu",
        "days",
    ):
        assert k in c
    assert set(c["parallelism"]) == {
        "tp",
        "pp",
        "cp",
        "ep",
        "dp",
        "micro_batch",
        "virtual_stages",
        "recompute",
        "sequence_parallel",
        "zero",
    }
    p = c["parallelism"]
    assert p["tp"] * p["pp"] * p["cp"] * p["dp"] == 64
    assert 0 < est.mfu <= est.hfu < 1
    assert est.memory_gib_per_gpu <= 80
    assert est.days == pytest.approx(1e11 / est.tokens_per_s / 86400)
    from clustertwin.report import views

    assert views.rows(est)


def test_pinned_keys_are_honoured(catalog):
    pins = {"tp": 2, "pp": 2, "micro_batch": 2, "recompute": "selective", "zero": 1}
    est = estimate(scen(catalog, training={"parallelism": pins}), catalog)
    for k, v in pins.items():
        assert est.parallelism[k] == v


def test_search_best_is_fastest_feasible(catalog):
    s = scen(catalog)
    _, _, res = run_search(s, catalog, 64)
    ranked = res.ranked()
    tps = res.metrics["tokens_per_s"]
    assert res.metrics["fits"][ranked].all()
    assert tps[ranked[0]] == pytest.approx(tps[res.metrics["fits"]].max())
    assert np.all(np.diff(tps[ranked]) <= 0)
    # tokens per second is the batch over the step time, whatever batch each plan trains
    np.testing.assert_allclose(tps, res.metrics["batch_seqs"] * 2048 / res.metrics["step_time_s"])


def test_impossible_pins_are_named_one_per_line(catalog):
    s = scen(catalog, training={"parallelism": {"tp": 3, "pp": 40, "dp": 7}})
    with pytest.raises(ScenarioError) as ei:
        estimate(s, catalog)
    lines = ei.value.lines()
    assert any("training.parallelism.tp" in x and "heads" in x for x in lines)
    assert any("training.parallelism.pp" in x and "layers" in x for x in lines)
    assert any("training.parallelism:" in x and "840 GPUs but 64 are installed" in x for x in lines)
    assert len(lines) == 3
    # with the job size fixed (training.gpus) dp must divide it
    s = scen(catalog, training={"gpus": 64, "parallelism": {"tp": 2, "dp": 7}})
    with pytest.raises(ScenarioError) as ei:
        estimate(s, catalog)
    assert [x for x in ei.value.lines() if "training.parallelism.dp" in x and "64 GPUs" in x]


def test_model_that_fits_nowhere_names_memory_and_fixes(catalog):
    big = {"layers": 128, "hidden": 25600, "ffn_hidden": 102400, "heads": 160, "kv_heads": 160}
    s = scen(catalog, model=big, cluster={"gpus": 8})
    with pytest.raises(InfeasibleError) as ei:
        estimate(s, catalog)
    msg = str(ei.value)
    assert "GiB per GPU" in msg and "GPUs or more" in msg and "nodes of 8" in msg


def test_deadline_solves_gpu_count(catalog):
    """The deadline solver is plan-level (clustertwin.deadline, issue 25): the perf stage alone
    asks for the installed count instead of solving for it."""
    from clustertwin.deadline import train

    d = copy.deepcopy(SMALL)
    d["cluster"] = {**d["cluster"], "gpus": None, "deadline_days": 10}
    s = scenario_from_dict(d, "deadline.yaml", catalog)
    est = train(s, catalog)
    assert est.days <= 10
    assert est.gpus % 8 == 0
    assert any("deadline" in n for n in est.notes)
    with pytest.raises(ScenarioError) as e:
        estimate(s, catalog)
    assert e.value.problems[0].path == "cluster.gpus"
    assert estimate(s, catalog, installed=est.installed_gpus).gpus == est.gpus


def test_moe_plan_uses_expert_parallelism(catalog):
    moe = {
        "layers": 16,
        "hidden": 4096,
        "ffn_hidden": 14336,
        "heads": 32,
        "kv_heads": 8,
        "vocab": 32000,
        "mlp": "swiglu",
        "moe": {"experts": 8, "active_experts": 2, "expert_ffn_hidden": 14336},
    }
    s = scen(catalog, model=moe, training={"seq_len": 4096, "global_batch_seqs": 1024})
    job, sys, res = run_search(s, catalog, 64)
    assert job.shape.moe and res.ranked().size
    assert set(np.unique(res.plans["ep"])) > {1}
    assert sys.nvlink_domain == 8


def _app():
    from clustertwin.cli.perf import register

    app = typer.Typer()
    register(app)
    return app


def test_estimate_command_json(tmp_path, catalog):
    import yaml

    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(SMALL))
    r = CliRunner().invoke(_app(), ["estimate", str(p), "--top", "3", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert len(out["top"]) == 3
    assert out["top"][0]["step_time_s"] <= out["top"][-1]["step_time_s"]
    assert out["best"]["parallelism"] == out["top"][0]["plan"]
    assert all("out of memory" in x["reason"] for x in out["rejected"])
    r2 = CliRunner().invoke(_app(), ["estimate", str(p), "--top", "2"])
    assert r2.exit_code == 0 and "top 2 plans" in r2.stdout


def test_estimate_command_bad_pins_exit_2(tmp_path):
    import yaml

    d = copy.deepcopy(SMALL)
    d["training"]["parallelism"] = {"tp": 3}
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(d))
    r = CliRunner().invoke(_app(), ["estimate", str(p)])
    assert r.exit_code == 2
    assert "training.parallelism.tp" in r.output


def test_job_and_system_from_scenario(catalog):
    s = scen(catalog)
    job, sys = job_of(s), system_of(s, catalog)
    assert job.batch_seqs == 512 and job.seq == 2048
    assert sys.generation == "ampere" and sys.nic_bw == pytest.approx(25e9)
