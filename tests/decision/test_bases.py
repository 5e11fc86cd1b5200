"""Issue 38: every route on one cost basis, routes planned for what they run on, one source per
figure, the buyer's own cluster.

Sourced ranges used here (catalog routes.yaml / decision-anchors part 2, "How analysts compare
routes"): an owned H100 in colocation at full use costs $1.6-2.3 per GPU-hour fully loaded
(capital recovery + power + colocation + staff), for a GPU bought at its ~$50k all-in list price.
"""

from __future__ import annotations

import datetime as dt

import pytest

from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict, with_updates
from tests.decision.helpers import decision_doc as _doc

HOURS = 24.0


def _plan(default_doc, catalog, name="s.yaml", **decision):
    return make_plan(scenario_from_dict(_doc(default_doc, **decision), name, catalog), catalog)


@pytest.fixture(scope="module")
def plan(plan405):
    return plan405


def test_lease_usage_is_gpus_rate_hours(plan, catalog):
    """Usage basis: the lease pays its GPUs x its 1-year contract rate x the run's wall-clock hours
    (+-5%), not its 12-month minimum; the exit basis pays the minimum."""
    o = plan.decision.option("lease")
    rate = catalog.get("route", "lease").value("usd_per_gpu_hour_hopper")
    assert o.cost_usage_usd == pytest.approx(o.gpus * rate * o.wall_clock_days_p50 * HOURS, rel=0.05)
    assert o.cost_exit_usd >= o.gpus * rate * 730.0 * 12 * 0.999
    assert o.commitment_months == 12


def test_both_bases_on_every_option_and_cost_is_the_chosen_one(plan, default_doc, catalog):
    d = plan.to_dict()["decision"]
    assert d["basis"] == "usage" and d["objective"] == "cost"
    for o in d["options"]:
        assert o["cost_usd"] == o["cost_usage_usd"]
        assert o["usd_per_gpu_hour"] == pytest.approx(
            o["cost_usd"] / (o["gpus"] * o["wall_clock_days_p50"] * HOURS), rel=1e-9)
    ex = _plan(default_doc, catalog, basis="exit").to_dict()["decision"]
    for o in ex["options"]:
        assert o["cost_usd"] == o["cost_exit_usd"]


def test_exit_at_least_usage_for_owned_routes(plan):
    for mode in ("build", "colo"):
        o = plan.decision.option(mode)
        assert o.cost_exit_usd >= o.cost_usage_usd, mode


@pytest.mark.parametrize("mode", ["build", "colo"])
def test_owned_usd_per_gpu_hour_in_sourced_range_at_list_price(default_doc, catalog, mode):
    """Bought while the H100 list price holds (mid-2024), the owned routes' usage cost per
    GPU-hour lies in the sourced $1.6-2.3 fully loaded range (decision-anchors part 2). Bought in
    2027 the same hardware is priced down its price-by-age curve and costs less."""
    d = _doc(default_doc, options=["build", "colo"])
    d["buildout"]["start_date"] = "2024-06-01"
    d["decision"].pop("target_date")
    o = make_plan(scenario_from_dict(d, "list.yaml", catalog), catalog).decision.option(mode)
    assert 1.6 <= o.usd_per_gpu_hour <= 2.3


def test_objective_date_picks_earliest(default_doc, catalog):
    d = _plan(default_doc, catalog, objective="date").decision
    met = [o for o in d.options if o.meets_target]
    assert d.best == min(met, key=lambda o: o.trained_by_p90).mode
    n = _plan(default_doc, catalog, objective="npv").decision
    assert n.best == min((o for o in n.options if o.meets_target), key=lambda o: o.npv_usd).mode


def test_no_target_headline_prices_a_sooner_day(default_doc, catalog):
    """With no target the cheapest route wins, and the headline says what training sooner costs."""
    d = _doc(default_doc)
    d["decision"].pop("target_date")
    dec = make_plan(scenario_from_dict(d, "n.yaml", catalog), catalog).decision
    best = dec.option(dec.best)
    assert dec.best == min(dec.options, key=lambda o: o.cost_usd).mode
    sooner = [o for o in dec.options if o.trained_by_p90 < best.trained_by_p90]
    if sooner:
        assert "days sooner for" in dec.headline()


def test_cloud_equals_a_plan_at_its_own_gpu_count(plan, default_doc, catalog):
    """The cloud route at its 2,048-GPU cap is the plan made directly at 2,048 GPUs (days and
    cost within 3%), not the 16K cluster's run scaled by the GPU ratio."""
    capped = plan.decision.option("cloud")
    direct_doc = _doc(default_doc, options=["cloud"])
    direct_doc["cluster"]["gpus"] = 2048
    direct = make_plan(scenario_from_dict(direct_doc, "c.yaml", catalog), catalog).decision.option("cloud")
    assert capped.gpus == direct.gpus
    assert capped.wall_clock_days_p50 == pytest.approx(direct.wall_clock_days_p50, rel=0.03)
    assert capped.cost_usd == pytest.approx(direct.cost_usd, rel=0.03)
    assert capped.mfu > plan.decision.option("colo").mfu  # a smaller job runs at its own MFU


def test_economics_cloud_price_reaches_the_cloud_route(default_doc, catalog):
    a = _plan(default_doc, catalog, options=["cloud"]).decision.option("cloud")
    d = _doc(default_doc, options=["cloud"])
    d["economics"] = {**d.get("economics", {}), "cloud_usd_per_gpu_hour": 5.9}
    b = make_plan(scenario_from_dict(d, "p.yaml", catalog), catalog).decision.option("cloud")
    assert b.usd_per_gpu_hour == pytest.approx(5.9)
    assert b.cost_usd > a.cost_usd


def test_huge_data_stall_makes_every_route_miss(default_doc, catalog):
    """Wall-clock days include every goodput part: a run stalled on data 80% of the time misses
    an 18-month target on every route."""
    d = _doc(default_doc)
    d["training"]["goodput"] = {"data_stall_fraction": 0.8}
    dec = make_plan(scenario_from_dict(d, "stall.yaml", catalog), catalog).decision
    assert not any(o.meets_target for o in dec.options)


def test_existing_cluster_trains_on_what_it_has(default_doc, catalog):
    """512 H100 the buyer already owns: trained in the run's wall-clock days from the ready date,
    no hardware bought, cheaper than buying (colo) and sooner."""
    d = _doc(default_doc, options=["existing", "colo"], existing={"ready_date": "2027-02-01"})
    d.pop("decision")
    d["decision"] = {"options": ["existing", "colo"], "existing": {"ready_date": "2027-02-01"}}
    d["cluster"]["gpus"] = 512
    d["training"]["tokens"] = 20e9
    d["model"] = {"preset": "llama3-8b"}
    dec = make_plan(scenario_from_dict(d, "own.yaml", catalog), catalog).decision
    own, colo = dec.option("existing"), dec.option("colo")
    assert own.start_date == dt.date(2027, 2, 1)
    assert abs((own.trained_by_p50 - own.start_date).days - own.wall_clock_days_p50) <= 1
    assert own.capex_usd == 0.0 and own.hardware_lead_days_p50 == 0.0
    assert own.trained_by_p90 < colo.trained_by_p90
    assert own.cost_exit_usd < colo.cost_exit_usd
    assert dec.best == "existing"


def test_lease_facility_keeps_the_build_routes_datacenter(plan, default_doc, catalog):
    """economics.facility: lease prices the owned cluster in colocation; the build route still
    builds (and pays for) its datacenter."""
    d = _doc(default_doc, options=["build"])
    d["economics"] = {**d.get("economics", {}), "facility": "lease"}
    leased = make_plan(scenario_from_dict(d, "l.yaml", catalog), catalog).decision.option("build")
    built = plan.decision.option("build")
    assert leased.capex_usd == pytest.approx(built.capex_usd, rel=0.05)


def test_route_keys_validate(default_doc, catalog):
    from clustertwin.errors import UserError

    for bad in ({"basis": "cash"}, {"objective": "speed"}, {"options": ["own"]}):
        with pytest.raises(UserError):
            scenario_from_dict(_doc(default_doc, **bad), "bad.yaml", catalog)


def test_with_updates_roundtrip(plan):
    s = with_updates(plan.scenario, decision={"basis": "exit"})
    assert s.decision.basis == "exit"


def test_readme_table_of_both_bases(catalog):
    """The README's table of the 405B example's routes on both bases is what the plan says."""
    import re
    from pathlib import Path

    from clustertwin.fmt import usd
    from clustertwin.scenario import load_scenario

    root = Path(__file__).resolve().parents[2]
    text = (root / "README.md").read_text(encoding="utf-8")
    d = make_plan(load_scenario(root / "examples" / "decision-405b.yaml", catalog), catalog).decision
    modes = ("build", "colo", "lease", "cloud")
    for label, attr in (("usage basis (default)", "cost_usage_usd"), ("exit basis", "cost_exit_usd")):
        row = re.search(rf"^\| {re.escape(label)} \|(.*)\|$", text, re.M)
        assert row, label
        cells = [c.strip().strip("*") for c in row.group(1).split("|")]
        assert cells == [usd(getattr(d.option(m), attr)) for m in modes], label


def test_every_route_and_the_buildout_share_the_gpu_lead_time(plan, catalog):
    """One GPU order lead time (catalog route hardware, the generation's): the build-out's step 1
    (likely point) and every route that waits for hardware report the same."""
    step = next(s for s in plan.buildout.steps if s.number == 1)
    p50 = catalog.get("route", "hardware").value("lead_days_p50_hopper")
    assert step.likely_days == p50
    for mode in ("build", "colo", "lease"):  # lease: 16K GPUs is past what a provider hands over now
        assert plan.decision.option(mode).hardware_lead_days_p50 == p50, mode


def _inputs(plan, catalog, it_kw):
    import dataclasses

    from clustertwin.decision.inputs import gather

    p = plan
    inp = gather(p.scenario, catalog, p.training, p.design, p.reliability, p.economics, p.buildout)
    pue = inp.facility_kw / inp.it_kw
    scale = it_kw / inp.it_kw
    return dataclasses.replace(inp, it_kw=it_kw, facility_kw=it_kw * pue, it_capex=inp.it_capex * scale,
                               installed_gpus=int(inp.installed_gpus * scale), gpus=int(inp.gpus * scale))


@pytest.mark.parametrize("region", ["northern-virginia", "texas-ercot", "nordic-oslo"])
def test_no_cliffs_across_100_mw_and_the_colo_block(plan, catalog, region):
    """Sweeping the IT load from 2 to 150 MW in 1 MW steps (about 700 H100 a step; the
    build-out's own go-live held), in every catalog region: no route's trained-by date (P90)
    jumps more than 90 days between neighbours, across the 100 MW facility and the region's
    colocation block sizes; colo's cost never falls as the load rises."""
    import dataclasses

    from clustertwin.decision.options import BUILDERS

    s = plan.scenario.decision
    prev: dict[str, float] = {}
    prev_cost = (0.0, 0.0)
    for mw in range(2, 151):
        inp = dataclasses.replace(_inputs(plan, catalog, mw * 1000.0), region=region)
        for mode in ("build", "colo", "lease"):
            o = BUILDERS[mode](inp, catalog, s)
            by = o.start[1] + o.wall[1]
            if mode in prev:
                assert abs(by - prev[mode]) <= 90, (mode, mw, by, prev[mode])
            prev[mode] = by
            if mode == "colo":  # on both bases
                cost = (o.usage_usd, float(o.flows.sum()))
                assert cost[0] >= prev_cost[0] and cost[1] >= prev_cost[1], (mw, cost, prev_cost)
                prev_cost = cost


def test_powered_site_has_no_utility_queue(default_doc, catalog):
    green = _plan(default_doc, catalog, options=["build"]).decision.option("build")
    powered = _plan(default_doc, catalog, "p.yaml", options=["build"], site="powered-land").decision.option("build")
    assert powered.ready_date < green.ready_date


def test_deadline_example_decision_uses_its_deadline(catalog):
    """examples/deadline-llama3-70b.yaml (cluster.deadline_days: 30): a route meets the target
    only if its run fits in 30 wall-clock days; the cloud route, capped at 2,048 GPUs, cannot."""
    from pathlib import Path

    from clustertwin.scenario import load_scenario

    root = Path(__file__).resolve().parents[2]
    p = make_plan(load_scenario(root / "examples" / "deadline-llama3-70b.yaml", catalog), catalog)
    d = p.decision
    ratio = p.training.wall_clock_days / p.reliability.effective_days  # goodput besides failures
    for o in d.options:
        assert o.meets_target == (o.wall_clock_days_p50 <= 30 * ratio + 0.5), o.mode
    assert not d.option("cloud").meets_target
    assert d.best in ("colo", "lease") and d.option(d.best).meets_target
    assert any("deadline_days 30" in n for n in d.notes)


def test_size_to_target_answers_the_headline(default_doc, catalog):
    """With decision.size_to_target the headline names the cheapest route whose own sized
    cluster trains by the target, with its GPU count."""
    p = _plan(default_doc, catalog, "sz.yaml", size_to_target=True, options=["colo", "cloud"])
    rows = [r for r in p.to_dict()["decision"]["sized"] if r["gpus"] and r["meets_target"]]
    assert rows
    best = min(rows, key=lambda r: r["cost_usd"])
    line = p.decision.headline()
    assert line.startswith(f"Trained by {best['trained_by_p90']} (P90) via {best['mode']} on {best['gpus']:,} GPUs")
    assert p.to_dict()["decision"]["headline"] == line
