"""plan_buildout end to end: result shape, views, quantities, determinism, merge bias."""

import csv
import io
import json

import pydantic
import pytest

from clustertwin.buildout import BuildoutPlan, plan_buildout
from clustertwin.buildout.quantities import derive_quantities
from clustertwin.cli.common import to_json

PROFILES = ["new-build", "existing-facility", "fast-track"]


@pytest.fixture(scope="module")
def plans():
    from buildout_fakes import PinnedCatalog, scenario

    cat = PinnedCatalog()
    return {p: plan_buildout(scenario(16384, p), cat) for p in PROFILES}


def test_contract_keys_and_json(plans):
    c = plans["new-build"].to_contract()
    for key in (
        "go_live_days_p50",
        "go_live_days_p90",
        "critical_path",
        "go_live_days_p80",
        "go_live_date_p50",
        "go_live_date_p90",
        "steps",
        "what_ifs",
    ):
        assert key in c
    assert all(isinstance(n, int) for n in c["critical_path"])
    back = json.loads(to_json(c))
    assert back["go_live_days_p50"] == pytest.approx(c["go_live_days_p50"])
    assert len(back["steps"]) == 198  # the seed's 195 and a greenfield site's 196-198
    s = back["steps"][0]
    for key in ("earliest_start_days", "latest_start_days", "slack_days", "criticality"):
        assert key in s


def test_result_is_frozen(plans):
    p = plans["new-build"]
    assert isinstance(p, BuildoutPlan)
    with pytest.raises(pydantic.ValidationError):
        p.go_live_days_p50 = 1.0


@pytest.mark.parametrize("profile", PROFILES)
def test_merge_bias_and_order(plans, profile):
    p = plans[profile]
    assert p.go_live_days_p50 >= p.deterministic_days
    assert p.go_live_days_p10 <= p.go_live_days_p50 <= p.go_live_days_p80 <= p.go_live_days_p90
    assert p.go_live_date_p50 <= p.go_live_date_p90


@pytest.mark.parametrize("profile", PROFILES)
def test_criticality_bounds_and_critical_path_highest(plans, profile):
    p = plans[profile]
    crit = p.criticality()
    assert all(0.0 <= v <= 1.0 for v in crit.values())
    on = [crit[n] for n in p.critical_path]
    off = [v for n, v in crit.items() if n not in p.critical_path]
    assert max(on) == max(crit.values()) == 1.0
    assert sum(on) / len(on) > sum(off) / len(off)
    assert crit[195] == 1.0


def test_csv_one_row_per_step(plans):
    rows = list(csv.DictReader(io.StringIO(plans["existing-facility"].to_csv())))
    assert [int(r["step"]) for r in rows] == list(range(1, 196))
    crit = [int(r["step"]) for r in rows if r["critical"] == "1"]
    assert set(plans["existing-facility"].critical_path) <= set(crit)
    assert float(rows[0]["likely_days"]) > 0


def test_summary_and_figures(plans):
    from clustertwin.report import views

    rows = views.rows(plans["fast-track"])
    assert all(isinstance(a, str) and isinstance(b, str) for a, b in rows)
    figs = views.view_of(plans["fast-track"]).figures(plans["fast-track"], None)
    assert [name for name, _ in figs] == ["buildout-gantt", "buildout-go-live"]
    assert len(figs[0][1].data) >= 8


def test_same_seed_same_answer_other_seed_differs(catalog, make_scenario):
    a = plan_buildout(make_scenario(2048, seed=7), catalog, samples=2000)
    b = plan_buildout(make_scenario(2048, seed=7), catalog, samples=2000)
    c = plan_buildout(make_scenario(2048, seed=8), catalog, samples=2000)
    assert a == b
    assert a.go_live_days_p50 != c.go_live_days_p50


def test_start_date_and_dates(catalog, make_scenario):
    import datetime as dt

    p = plan_buildout(make_scenario(1024, start=dt.date(2030, 3, 1)), catalog, samples=500)
    assert p.start_date == dt.date(2030, 3, 1)
    assert (p.go_live_date_p50 - p.start_date).days == pytest.approx(p.go_live_days_p50, abs=1)


def test_pert_option(catalog, make_scenario):
    p = plan_buildout(make_scenario(1024), catalog, samples=2000, distribution="pert")
    assert p.distribution == "pert" and p.go_live_days_p50 >= p.deterministic_days


def test_quantities_rules_and_design(catalog, make_scenario):
    q = derive_quantities(make_scenario(1024), catalog)
    assert (q.servers, q.racks, q.nics) == (128, 32, 1024)  # 4 DGX H100 per 41 kW rack
    assert q.leaf == 32 and q.spine == 16 and q.core == 0 and q.uplinks == 1024
    assert q.it_mw == pytest.approx((128 * 10.2 + 48 * 1.7) / 1000)
    # the design's counts win over the rules: a real design of the same scenario
    from buildout_fakes import real_catalog

    from clustertwin.design import design as make_design

    s = make_scenario(1024)
    d = make_design(s, real_catalog())
    got = derive_quantities(s, catalog, d)
    assert (got.servers, got.racks, got.leaf, got.spine, got.core, got.source) == (
        d.nodes, d.racks, d.fabric.leaf, d.fabric.spine, d.fabric.core, "design")
    assert got.node_links + got.uplinks == d.fabric.cables
    assert got.storage_racks == d.rack_counts.storage and got.cooling == "air"
    assert got.it_mw == pytest.approx(d.power.it_kw / 1000.0)
    assert got.racks == q.racks + d.rack_counts.network + d.rack_counts.management + d.rack_counts.storage


def test_gpus_from_the_design_when_only_a_deadline(catalog, make_scenario):
    """A deadline's GPU count is solved at the plan level: the build-out reads it from the
    design result it is given and never re-derives it (issue 25)."""
    from buildout_fakes import real_catalog

    from clustertwin.design import design as make_design
    from clustertwin.errors import ScenarioError

    s = make_scenario(1024)
    d = make_design(make_scenario(4096), real_catalog())
    s = s.model_copy(update={"cluster": s.cluster.model_copy(update={"gpus": None})})
    assert derive_quantities(s, catalog, d).gpus == d.gpus == 4096
    with pytest.raises(ScenarioError) as e:
        derive_quantities(s, catalog)
    assert e.value.problems[0].path == "cluster.gpus"


def test_small_and_large_builds_differ(catalog, make_scenario):
    small = plan_buildout(make_scenario(1000), catalog, samples=2000)
    large = plan_buildout(make_scenario(100000), catalog, samples=2000)
    assert large.go_live_days_p50 > small.go_live_days_p50 + 20
    assert large.step(46).likely_days > small.step(46).likely_days


def test_air_cooled_skips_liquid_steps(plans):
    p = plans["new-build"]
    for n in range(108, 114):
        assert p.step(n).likely_days == 0 and not p.step(n).applicable
