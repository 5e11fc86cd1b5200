"""The editor form's pure parts: field values shown and read back, problems placed at fields."""

from __future__ import annotations

import pytest

from clustertwin.errors import Problem
from clustertwin.serve.form import apply_fields, field_problems, fields, shown


@pytest.mark.parametrize("value", [15.6e12, 0.08, 3.0, 1e-7, 123456.789, 2.5])
def test_a_float_field_reads_back_as_the_same_number(value):
    doc = apply_fields({}, {"economics.electricity_usd_per_kwh": shown(value)})
    assert doc["economics"]["electricity_usd_per_kwh"] == value


def test_tokens_are_shown_short():
    assert shown(15.6e12) == "1.56e+13"


def test_empty_fields_leave_the_yaml_value():
    doc = apply_fields({"cluster": {"gpus": 16384, "gpu": "h100-sxm-80gb"}}, {"cluster.gpus": " ", "cluster.gpu": "b200"})
    assert doc["cluster"] == {"gpus": 16384, "gpu": "b200"}


def test_problems_land_at_the_field_that_owns_their_key():
    at, rest = field_problems([Problem("yaml", "cluster.gpus", "must be > 0"),
                               Problem("yaml", "cluster.fabric.technology", "unknown id"),
                               Problem("yaml", "reliability.trials", "too many"),
                               Problem("yaml", "", "not a mapping")])
    assert at == {"cluster.gpus": ["must be > 0"], "cluster.fabric.technology": ["unknown id"]}
    assert rest == ["reliability.trials: too many", "not a mapping"]


def test_every_field_is_a_scenario_key():
    from clustertwin.sweep.grid import schema_keys

    keys = [f.key for f in fields()]
    assert "cluster.gpus" in keys and set(keys) <= schema_keys()


def test_headline_has_the_figures_the_plan_has_and_a_band_when_given():
    from clustertwin.serve.answer import headline

    doc = {"training": {"days": 66.35, "days_low": 60.0, "days_high": 72.5, "gpus": 16384},
           "economics": {"capex_usd": 9.875e8}}
    got = {h["key"]: h for h in headline(doc)}
    assert list(got) == ["training.days", "training.gpus", "economics.capex_usd"]
    assert got["training.days"]["text"] == "66.3 days" and got["training.days"]["band"] == "band 60.0\u201372.5"
    assert got["training.gpus"]["text"] == "16,384" and got["economics.capex_usd"]["text"] == "$987.5M"
    assert got["training.gpus"]["band"] == ""


def test_labels_come_from_the_naming_table_when_it_names_the_key(monkeypatch):
    import sys
    import types

    import clustertwin.report as report
    from clustertwin.serve.answer import label_for

    table = types.ModuleType("clustertwin.report.labels")
    table.KEYS = {"training.days": ("Training days without failures", "days")}
    table.label = lambda key: table.KEYS[key][0] if key in table.KEYS else key.replace("_", " ")
    monkeypatch.setitem(sys.modules, "clustertwin.report.labels", table)
    monkeypatch.setattr(report, "labels", table, raising=False)
    assert label_for("training.days", "ours") == "Training days without failures"
    assert label_for("training.wall_clock_days", "whole-run days") == "whole-run days"  # not in the table
    assert label_for("design.racks", "") == "design.racks"
