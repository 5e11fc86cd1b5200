"""Build-out what-ifs as scenario keys (issue 21): ``buildout.lead_times.<name>`` and
``buildout.crews`` change the baseline schedule, so sweeps can vary lead times."""

from __future__ import annotations

import copy

import pytest

from clustertwin.buildout import plan_buildout
from clustertwin.buildout.whatif import ALIASES
from clustertwin.errors import ScenarioError
from clustertwin.scenario import scenario_from_dict
from clustertwin.scenario.economics import LeadTimes
from clustertwin.sweep.grid import check_key


def _plan(default_doc, catalog, site="existing-building", **buildout):
    """The build-out in an existing shell (no site steps ahead of the plant: decision.site)."""
    d = copy.deepcopy(default_doc)
    d["buildout"] = {**d.get("buildout", {}), **buildout}
    d["decision"] = {**d.get("decision", {}), "site": site}
    s = scenario_from_dict(d, "lt.yaml", catalog)
    return plan_buildout(s, catalog, samples=500)


def test_every_named_lead_time_is_a_scenario_key():
    assert set(LeadTimes.model_fields) == set(ALIASES)
    for name in ALIASES:
        check_key(f"buildout.lead_times.{name}", "sweep")  # raises when unknown
    check_key("buildout.crews", "sweep")


def test_switchgear_lead_time_moves_go_live(default_doc, catalog):
    base = _plan(default_doc, catalog)
    assert 76 in base.critical_path  # switchgear sets the new-build date
    later = _plan(default_doc, catalog, lead_times={"switchgear_days": "+100"})
    assert later.go_live_days_p50 == pytest.approx(base.go_live_days_p50 + 100, abs=15)
    assert later.step(76).likely_days == pytest.approx(base.step(76).likely_days + 100)
    assert any("switchgear_days=+100" in n for n in later.notes)


def test_set_likely_and_what_if_on_top(default_doc, catalog):
    p = _plan(default_doc, catalog, lead_times={"switchgear_days": 200})
    assert p.step(76).likely_days == pytest.approx(200)
    d = copy.deepcopy(default_doc)
    d["buildout"] = {**d.get("buildout", {}), "lead_times": {"switchgear_days": 200}}
    d["decision"] = {"site": "existing-building"}
    s = scenario_from_dict(d, "lt.yaml", catalog)
    w = plan_buildout(s, catalog, what_if="switchgear_days=+50", samples=500).what_ifs[0]
    assert w.go_live_days_p50 >= p.go_live_days_p50  # the what-if starts from the scenario's 200 days


@pytest.mark.parametrize("value", ["soon", "1/2", True, -5])
def test_bad_lead_time_is_one_line(default_doc, catalog, value):
    d = copy.deepcopy(default_doc)
    d["buildout"] = {"lead_times": {"gpu_lead_time_days": value}}
    with pytest.raises(ScenarioError) as exc:
        scenario_from_dict(d, "bad.yaml", catalog)
    lines = exc.value.lines()
    assert len(lines) == 1 and "buildout.lead_times.gpu_lead_time_days" in lines[0]
