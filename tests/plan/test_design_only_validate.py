"""Design-only scenarios (no model/training), ``validate`` = plan's checks, and the stages
called in one place (issue 11)."""

from __future__ import annotations

import inspect

import pytest
import yaml
from typer.testing import CliRunner

from clustertwin.cli import app
from clustertwin.errors import ScenarioError
from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict

SHARED = {"name": "shared", "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": 1024}}


def test_design_only_plan_designs_prices_and_schedules(catalog):
    s = scenario_from_dict(SHARED, "shared.yaml", catalog)
    assert s.design_only and s.model is None
    plan = make_plan(s, catalog)
    d = plan.to_dict()
    assert "training" not in d
    assert d["design"]["gpus"] >= 1024
    assert {"design", "economics", "buildout", "reliability"} <= set(d)
    assert any("design-only" in w for w in plan.warnings)


@pytest.mark.parametrize("drop, missing", [("training", "training"), ("model", "model")])
def test_model_without_training_is_one_line(drop, missing, default_doc, catalog):
    d = {k: v for k, v in default_doc.items() if k != drop}
    with pytest.raises(ScenarioError) as ei:
        scenario_from_dict(d, "half.yaml", catalog)
    assert [x for x in ei.value.lines() if x.startswith(f"half.yaml: {missing}: required with")]


def test_deadline_needs_a_job(catalog):
    d = {**SHARED, "cluster": {**SHARED["cluster"], "gpus": None, "deadline_days": 30}}
    with pytest.raises(ScenarioError, match="cluster.deadline_days: a deadline needs a model"):
        scenario_from_dict(d, "x.yaml", catalog)


def test_fixed_job_size_with_a_deadline_is_one_line(default_doc, catalog):
    d = {**default_doc, "cluster": {**default_doc["cluster"], "gpus": None, "deadline_days": 60},
         "training": {**default_doc["training"], "gpus": 1024}}
    with pytest.raises(ScenarioError) as ei:
        scenario_from_dict(d, "x.yaml", catalog)
    assert [x for x in ei.value.lines() if "training.gpus: a number with cluster.deadline_days" in x]


def _write(tmp_path, name, d):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(d))
    return str(p)


def test_validate_runs_plans_feasibility_checks(tmp_path, default_doc):
    """A file the schema accepts but no parallelism plan fits: validate says so (exit 2, one
    line), the way plan would; a good file and a design-only file pass."""
    bad = {**default_doc, "cluster": {**default_doc["cluster"], "gpus": 16}}
    paths = [_write(tmp_path, "bad.yaml", bad), _write(tmp_path, "shared.yaml", SHARED)]
    r = CliRunner().invoke(app, ["validate", *paths])
    assert r.exit_code == 2
    err = [x for x in r.output.splitlines() if x.startswith("error:")]
    assert len(err) == 1 and "bad.yaml: cluster.gpus: no parallelism plan fits" in err[0]
    assert "ok: " in r.output and "design only" in r.output
    assert "Traceback" not in r.output


def test_validate_reports_every_schema_problem_and_bad_dates_in_one_pass(tmp_path, default_doc):
    d = {**default_doc, "training": {**default_doc["training"], "gpus": 99999, "batch_rounding": "up"},
         "buildout": {"start_date": "2027-02-30"}}
    r = CliRunner().invoke(app, ["validate", _write(tmp_path, "many.yaml", d)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    err = [x for x in r.output.splitlines() if x.startswith("error:")]
    assert any("training.batch_rounding" in x for x in err)
    assert any("buildout.start_date" in x for x in err)


def test_plan_calls_each_stage_by_name():
    from clustertwin import plan

    src = inspect.getsource(plan.make_plan)
    calls = ["run.training(", "designed(run", "run.reliability(", "deadline_rounds(run",
             "run.economics(", "run.buildout(", "run.decision(", "size_to_target("]
    assert all(c in src for c in calls)
    assert sorted(calls, key=src.index) == calls  # in pipeline order
    assert "importlib" not in inspect.getsource(plan)
