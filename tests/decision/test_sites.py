"""Issue 38: ``decision.site`` adds or removes the build-out's site steps (196 site acquisition,
197 permitting, 198 the shell) and the utility's queue, and the build route follows.

greenfield: every site step and the region's utility queue; powered-land: land with power
contracted (no acquisition, no queue) but a shell to build; existing-building: a shell to fit
out (no site step, no queue). Durations are M. Bommarito's greenfield development timelines
(2025, decision-anchors part 2): acquisition 3-6 months, permitting 6-12, construction 12-18."""

from __future__ import annotations

import copy
import csv
import datetime as dt
import io
import json

import pytest

from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict

START = dt.date(2027, 1, 5)
SITES = ("greenfield", "powered-land", "existing-building")
SITE_STEPS = {"greenfield": {196, 197, 198}, "powered-land": {197, 198}, "existing-building": set()}


@pytest.fixture(scope="module")
def plans(default_doc, catalog):
    out = {}
    for site in SITES:
        d = copy.deepcopy(default_doc)
        d["training"]["tokens"] = 15.6e12
        d["buildout"] = {**d.get("buildout", {}), "start_date": START.isoformat()}
        d["decision"] = {"site": site, "options": ["build"]}
        out[site] = make_plan(scenario_from_dict(d, f"{site}.yaml", catalog), catalog)
    return out


def test_build_route_dates_strictly_ordered_by_site(plans):
    build = {s: p.decision.option("build") for s, p in plans.items()}
    for field in ("ready_date", "start_date", "trained_by_p50", "trained_by_p90"):
        g, p, e = (getattr(build[s], field) for s in SITES)
        assert g > p > e, (field, g, p, e)
    go = {s: plans[s].buildout.go_live_days_p50 for s in SITES}
    assert go["greenfield"] > go["powered-land"] > go["existing-building"]


@pytest.mark.parametrize("site", SITES)
def test_removed_site_steps_are_absent_from_json_and_csv(plans, site):
    b = plans[site].buildout
    data = json.loads(json.dumps(b.to_contract()))
    numbers = {s["number"] for s in data["steps"]}
    rows = {int(r["step"]) for r in csv.DictReader(io.StringIO(b.to_csv()))}
    assert numbers == rows == set(range(1, 196)) | SITE_STEPS[site]
    assert data["site"] == site
    for s in data["steps"]:  # nothing waits for a step the site does not have
        assert not (set(s["after"]) & ({196, 197, 198} - SITE_STEPS[site])), s["number"]


def test_site_steps_carry_the_sourced_durations(plans):
    """Likely days at the midpoints of Bommarito's greenfield bands (months of 30.44 days);
    the shell is construction less the fit-out this book schedules after it (8-12 months)."""
    b = plans["greenfield"].buildout
    month = 30.44
    assert b.step(196).likely_days == pytest.approx(4.5 * month, abs=1)
    assert b.step(197).likely_days == pytest.approx(9 * month, abs=1)
    assert (b.step(198).optimistic_days, b.step(198).pessimistic_days) == pytest.approx((8 * month, 12 * month), abs=1)
    # the shell is on the way to go-live: the hall fit-out waits for it
    assert 198 in b.step(99).after and b.step(99).earliest_start_days >= b.step(198).earliest_finish_days


def test_existing_facility_profile_stands_in_an_existing_building(default_doc, catalog):
    """A profile for an existing facility has a shell whatever decision.site says."""
    from clustertwin.buildout import plan_buildout

    d = copy.deepcopy(default_doc)
    d["buildout"] = {**d.get("buildout", {}), "profile": "existing-facility"}
    d["decision"] = {"site": "greenfield"}
    b = plan_buildout(scenario_from_dict(d, "x.yaml", catalog), catalog, samples=200)
    assert b.site == "existing-building" and not ({196, 197, 198} & {s.number for s in b.steps})


def test_what_if_on_a_step_the_site_lacks_is_one_line(default_doc, catalog):
    from clustertwin.buildout import plan_buildout
    from clustertwin.errors import UsageError

    d = copy.deepcopy(default_doc)
    d["decision"] = {"site": "existing-building"}
    with pytest.raises(UsageError) as exc:
        plan_buildout(scenario_from_dict(d, "x.yaml", catalog), catalog, what_if="step.198.days=+30", samples=200)
    (line,) = exc.value.lines()
    assert "step.198" in line and "decision.site" in line
