"""One answer per quantity (issue 11): every examples/*.yaml file and the scaling ladder
(8, 64, 1,024, 16,384, 100,000 GPUs with models that fit them) run through the functions behind
``plan``, ``validate``, ``design``, ``reliability`` and ``buildout``; all of them must agree on
racks, power and checkpoint size."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from clustertwin.catalog import load_catalog
from clustertwin.scenario import DEFAULT_SCENARIO, load_scenario, scenario_from_dict

EXAMPLES = sorted(p for p in (Path(__file__).parents[2] / "examples").glob("*.yaml")
                  if "cluster" in (yaml.safe_load(p.read_text()) or {}))  # not sweep/compare files
LADDER = [(8, "llama3-8b"), (64, "llama3-8b"), (1024, "llama3-70b"), (16384, "llama3-405b"),
          (100_000, "llama3-405b")]


@pytest.fixture(scope="module")
def cat():
    return load_catalog([])


def _fast(sc):
    """Fewer Monte Carlo trials: the quantities compared here do not depend on them."""
    return sc.model_copy(update={"reliability": sc.reliability.model_copy(update={"trials": 50})})


def _ladder(cat, gpus: int, model: str):
    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    doc["model"] = {"preset": model}
    doc["cluster"]["gpus"] = gpus
    doc["training"]["tokens"] = 1e12 if gpus < 1000 else 15e12
    doc["training"]["global_batch_tokens"] = 2**20 * (1 if gpus < 1000 else 16)
    for key in ("buildout", "economics"):
        doc.pop(key, None)
    doc["reliability"] = {"trials": 50}
    return scenario_from_dict(copy.deepcopy(doc), f"<ladder {gpus}>", cat)


def _check_one(sc, cat):
    from clustertwin.buildout import plan_buildout
    from clustertwin.design import design
    from clustertwin.perf import estimate
    from clustertwin.perf.checkpoint import job_checkpoint_gb
    from clustertwin.plan import make_plan, plan_through
    from clustertwin.reliability import analyze

    plan = make_plan(sc, cat)
    out = plan.to_dict()
    assert plan.design is not None and plan.buildout is not None, out["warnings"]
    # `design` and `reliability` commands: what they run (plan_through), and the stage
    # functions on a fresh estimate for a plain count (a deadline's solve is the slow one)
    d = plan_through(sc, cat, "design").design
    est = estimate(sc, cat) if sc.cluster.gpus is not None else plan.training
    assert d.racks == design(sc, cat, est).racks
    assert d.racks == out["design"]["racks"]
    assert d.power.it_kw == pytest.approx(out["design"]["power"]["it_kw"])
    assert d.gpus >= out["training"]["gpus"]            # the design holds every installed GPU
    # `buildout` command: plan_buildout on the design the command looks up (design_for)
    b = plan_buildout(sc, cat, plan_through(sc, cat).design, samples=50)
    q = b.quantities
    assert q["racks"] == out["design"]["racks"] == out["buildout"]["quantities"]["racks"]
    assert q["it_mw"] * 1000 == pytest.approx(out["design"]["power"]["it_kw"])
    assert q["servers"] == out["design"]["nodes"]
    # checkpoint: one rule for design storage and reliability
    ck_gb = job_checkpoint_gb(sc, est)
    assert out["design"]["storage"]["checkpoint_tb"] * 1000 == pytest.approx(ck_gb)
    if plan.reliability is not None and "checkpoint_size_gb" in out["reliability"]:
        assert out["reliability"]["checkpoint_size_gb"] == pytest.approx(ck_gb)
        r = analyze(sc, cat, est, d)
        assert r.spare_nodes == d.spare_nodes == out["design"]["spare_nodes"]
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_agree_across_commands(path, cat):
    sc = _fast(load_scenario(path, cat))        # what `validate` runs
    _check_one(sc, cat)


@pytest.mark.parametrize("gpus,model", LADDER, ids=[f"{g}-{m}" for g, m in LADDER])
def test_scaling_ladder_agrees_across_commands(gpus, model, cat):
    out = _check_one(_ladder(cat, gpus, model), cat)
    assert out["design"]["gpus"] >= gpus
    if gpus == 8:      # one DGX: no compute-fabric switch, an existing facility
        assert out["design"]["fabric"]["switches"] == 0
        assert out["design"]["facility"] == "existing-facility"
        assert out["buildout"]["profile"] == "small-order"
    if gpus == 100_000:   # past one NDR 3-tier tree: rail-separated planes, explained
        f = out["design"]["fabric"]
        assert f["rail_groups"] > 1 and f["tiers"] <= 3
        assert any("rail-separated" in n for n in out["design"]["notes"])


def test_design_only_plan_agrees_and_prices_no_run(cat):
    """No model/training: plan designs, prices and schedules the cluster and gives node-level
    reliability; the commands read the same design."""
    from clustertwin.buildout import plan_buildout
    from clustertwin.plan import make_plan, plan_through

    doc = {"name": "shared", "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100",
                                         "gpus": 4096}}
    sc = scenario_from_dict(doc, "<design-only>", cat)
    out = make_plan(sc, cat).to_dict()
    assert "training" not in out
    assert out["economics"]["run_cost_owned_usd"] is None and out["economics"]["capex_usd"] > 0
    assert out["reliability"]["mode"] == "cluster" and out["reliability"]["failures_per_day"] > 0
    assert out["design"]["storage"]["checkpoint_tb"] == 0
    d = plan_through(sc, cat, "design").design
    b = plan_buildout(sc, cat, plan_through(sc, cat).design, samples=50)
    assert d.racks == out["design"]["racks"] == b.quantities["racks"]


def test_cli_commands_agree_on_one_file(tmp_path, cat):
    """Through the CLI runner: validate accepts the file, and design, buildout and plan print
    the same racks and IT power (buildout in MW) for it."""
    import json

    from typer.testing import CliRunner

    from clustertwin.cli import app

    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    doc["model"] = {"preset": "llama3-70b"}
    doc["cluster"]["gpus"] = 1024
    doc["reliability"] = {"trials": 50}
    path = tmp_path / "ladder-1024.yaml"
    path.write_text(yaml.safe_dump(doc))
    runner = CliRunner()
    assert runner.invoke(app, ["validate", str(path)]).exit_code == 0

    def js(*args: str) -> dict:
        r = runner.invoke(app, [*args, str(path), "--json"])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)

    plan, design, buildout = js("plan"), js("design"), js("buildout")
    assert plan["design"]["racks"] == design["racks"] == buildout["quantities"]["racks"]
    assert design["power"]["it_kw"] == pytest.approx(buildout["quantities"]["it_mw"] * 1000)
    assert plan["design"]["power"]["it_kw"] == pytest.approx(design["power"]["it_kw"])
    rel = js("reliability")
    assert rel["checkpoint_size_gb"] == pytest.approx(design["storage"]["checkpoint_tb"] * 1000)
