"""The decision stage (issue 21): when is the model trained, by which route, for how much.

Done-when scenario: Llama-3-405B on 15.6T tokens, 16,384 H100, start 2027-01-05, target
2028-06-30. Checks the dates (trained_by = start + wall-clock days, +-1 day), the order of the
routes (colo, lease and cloud start before build), the choice (cheapest route meeting the
target) and the arithmetic (cash flows sum to the cost, NPV at rate 0 equals it, resale never
exceeds capex)."""

from __future__ import annotations

import copy
import datetime as dt

import numpy as np
import pytest

from clustertwin.decision import cash
from clustertwin.decision.basis import crf, market_fraction
from clustertwin.decision.options import phased_days
from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict
from tests.decision.helpers import START, TARGET
from tests.decision.helpers import decision_doc as _doc


def test_all_four_routes_dated(plan405):
    doc = plan405.to_dict()["decision"]
    assert [o["mode"] for o in doc["options"]] == ["build", "colo", "lease", "cloud"]
    for o in doc["options"]:
        start = dt.date.fromisoformat(o["start_date"])
        by = dt.date.fromisoformat(o["trained_by_p50"])
        assert abs((by - start).days - o["wall_clock_days_p50"]) <= 1, o["mode"]
        assert o["trained_by_p90"] >= o["trained_by_p50"]
        assert start >= START


def test_rented_and_colocated_start_before_build(plan405):
    d = plan405.decision
    build = d.option("build").start_date
    for mode in ("colo", "lease", "cloud"):
        assert d.option(mode).start_date < build, mode


def test_best_is_cheapest_meeting_target(plan405):
    d = plan405.decision
    met = [o for o in d.options if o.meets_target]
    assert met, "some route meets a target 18 months out"
    assert d.best == min(met, key=lambda o: o.cost_usd).mode
    for o in d.options:
        assert o.meets_target == (o.trained_by_p90 <= TARGET)
    assert plan405.to_dict()["decision"]["best"] == d.best


def test_headline_names_date_mode_and_cost(plan405):
    d = plan405.decision
    best = d.option(d.best)
    assert d.headline().startswith(f"Trained by {best.trained_by_p90.isoformat()} (P90) via {best.mode} for $")


def test_wall_clock_days_with_goodput(plan405):
    """Every route's wall-clock days are the training estimate's with every goodput part (the
    reliability stage's ETTR and the data stalls, restarts, ...), not failures alone."""
    d, rel, tr = plan405.decision, plan405.reliability, plan405.training
    for mode in ("colo", "lease"):
        assert d.option(mode).wall_clock_days_p50 == pytest.approx(tr.wall_clock_days)
    assert d.option("colo").wall_clock_days_p50 > rel.effective_days
    assert d.option("colo").wall_clock_days_p90 >= d.option("colo").wall_clock_days_p50


@pytest.mark.parametrize("mode", ["build", "colo", "lease", "cloud"])
def test_cash_arithmetic(plan405, mode):
    o = plan405.decision.option(mode)
    flows = np.asarray(o.cash_flow_usd_per_month)
    assert flows.sum() == pytest.approx(o.cost_usd, rel=1e-12)
    assert cash.npv(flows, 0.0) == pytest.approx(o.cost_usd, rel=1e-12)
    assert o.residual_usd <= o.capex_usd + 1e-6
    assert o.cash_peak_usd >= max(0.0, o.cost_usd) - 1e-6
    assert o.npv_usd < flows[flows > 0].sum()  # discounting at 8% lowers the outflows' value


def test_unmeetable_target_names_earliest(default_doc, catalog):
    s = scenario_from_dict(_doc(default_doc, target_date="2027-02-01"), "late.yaml", catalog)
    plan = make_plan(s, catalog)
    d = plan.decision
    assert d.best is None and plan.to_dict()["decision"]["best"] is None
    first = min(d.options, key=lambda o: o.trained_by_p90)
    msg = [w for w in plan.warnings if w.startswith("decision:")]
    assert len(msg) == 1 and first.trained_by_p90.isoformat() in msg[0] and first.mode in msg[0]


def test_overrides_move_dates_and_prices(default_doc, catalog):
    base = make_plan(scenario_from_dict(_doc(default_doc, options=["lease"]), "a.yaml", catalog), catalog)
    doc = _doc(default_doc, options=["lease"], lease={"ready_days": 10, "usd_per_gpu_hour": 4.7})
    other = make_plan(scenario_from_dict(doc, "b.yaml", catalog), catalog)
    a, b = base.decision.option("lease"), other.decision.option("lease")
    assert b.start_date == START + dt.timedelta(days=10)
    assert b.cost_usd == pytest.approx(a.cost_usd * 4.7 / 2.35)


def test_full_start_waits_for_the_whole_cluster(default_doc, catalog):
    """On a site with power (no utility queue) the build starts on its first wave."""
    kw = {"options": ["build"], "site": "powered-land"}
    first = make_plan(scenario_from_dict(_doc(default_doc, **kw), "a.yaml", catalog), catalog)
    full = make_plan(scenario_from_dict(_doc(default_doc, **kw, start="full"), "b.yaml", catalog), catalog)
    a, b = first.decision.option("build"), full.decision.option("build")
    waves = first.buildout.waves
    assert len(waves) > 1 and a.start_date == dt.date.fromisoformat(waves[0]["date"])
    assert b.start_date == dt.date.fromisoformat(waves[-1]["date"])
    assert a.start_date < b.start_date and a.trained_by_p50 <= b.trained_by_p50


def test_waves_sum_to_installed_gpus(plan405):
    waves = plan405.buildout.waves
    assert sum(w["gpus"] for w in waves) == plan405.buildout.quantities["gpus"]
    assert [w["date"] for w in waves] == sorted(w["date"] for w in waves)
    assert waves[-1]["date"] == plan405.buildout.go_live_date_p50.isoformat()


def test_phased_days():
    assert phased_days([0.0], [1.0], 50.0) == pytest.approx(50.0)
    # half the GPUs for 10 days do 5 full-cluster days of work; 45 remain at full speed
    assert phased_days([0.0, 10.0], [0.5, 1.0], 50.0) == pytest.approx(55.0)
    # done before the second wave
    assert phased_days([0.0, 100.0], [0.5, 1.0], 20.0) == pytest.approx(40.0)


def test_cash_spread_and_npv():
    flows = cash.spread(np.zeros(1), 10.0, 400.0, 100.0)
    assert flows.sum() == pytest.approx(39_000.0)
    assert cash.npv(flows, 0.0) == pytest.approx(39_000.0)
    assert cash.npv(np.array([0.0] * 11 + [1100.0]), 0.10) == pytest.approx(1000.0)
    assert cash.peak(np.array([5.0, 5.0, -8.0])) == 10.0


def test_holding_curve_override_interpolates(catalog):
    """decision.residual_frac_per_year: a curve by years held, less the disposal haircut."""
    curve = [1.0, 0.6, 0.4]
    d0 = dt.date(2027, 1, 1)
    assert market_fraction(catalog, "hopper", d0, d0, 0.0, curve) == 1.0
    assert market_fraction(catalog, "hopper", d0, dt.date(2027, 7, 2), 0.0, curve) == pytest.approx(0.8, abs=1e-3)
    assert market_fraction(catalog, "hopper", d0, dt.date(2036, 1, 1), 0.1, curve) == pytest.approx(0.36)


def test_resale_by_product_age_not_holding_time(catalog):
    """Hardware sold three months after purchase fetches the price-by-age curve's value at the
    product's age (hopper-new-price: flat to age 2.3, 0.75 at 2.6, 0.66 at 3.5, catalog
    price_curves.yaml), not a fraction of the buyer's holding time: an H100 bought in 2023
    (list price holds) keeps its value for three months, one bought at the Blackwell step-down
    loses it."""
    early = market_fraction(catalog, "hopper", dt.date(2023, 3, 1), dt.date(2023, 6, 1), 0.0)
    step = market_fraction(catalog, "hopper", dt.date(2024, 11, 15), dt.date(2025, 5, 1), 0.0)
    assert early == pytest.approx(1.0)
    assert step < 0.85
    assert market_fraction(catalog, "hopper", dt.date(2023, 3, 1), dt.date(2023, 6, 1), 0.15) == pytest.approx(0.85)


def test_capital_recovery_factor():
    """CRF(8%, 5 y) = 0.2505 (the annuity that repays 1 in five years at 8%); CRF(0, n) = 1/n."""
    assert crf(0.08, 5) == pytest.approx(0.25046, rel=1e-4)
    assert crf(0.0, 4) == pytest.approx(0.25)


def test_route_figures_are_sourced(catalog):
    routes = catalog.all("route")
    assert {r.id for r in routes} >= {"hardware", "build", "colo", "lease", "cloud", "residual"}
    for r in routes:
        assert r.source and r.as_of
        for key, item in r.items.items():
            assert item.source.strip() and item.as_of.strip(), f"{r.id}.{key}"


def test_design_only_plan_has_no_decision(default_doc, catalog):
    d = copy.deepcopy(default_doc)
    del d["model"], d["training"]
    plan = make_plan(scenario_from_dict(d, "design.yaml", catalog), catalog)
    assert plan.decision is None and "decision" not in plan.to_dict()


def test_bad_decision_keys_are_one_line_each(default_doc, catalog):
    from clustertwin.errors import ScenarioError

    d = _doc(default_doc, options=["build", "rent"], confidence="p99")
    with pytest.raises(ScenarioError) as exc:
        scenario_from_dict(d, "bad.yaml", catalog)
    lines = exc.value.lines()
    assert any("decision.options" in ln for ln in lines) and any("decision.confidence" in ln for ln in lines)


def test_gpus_to_meet_target(plan405):
    from clustertwin.decision.options import Option, gpus_to_meet

    o = Option("colo", 1024, (10.0, 20.0), (10.0, 20.0), (100.0, 120.0), lambda: (np.zeros(1), 0.0))
    # P90: 120 days of 1,024 GPUs in the 60 days left after a day-20 start -> 2,048 GPUs
    assert gpus_to_meet(o, 80.0, 8, "p90") == 2048
    assert gpus_to_meet(o, 20.0, 8, "p90") is None  # cannot start in time
    capped = Option("cloud", 1024, (1.0, 1.0), (1.0, 1.0), (10.0, 10.0), lambda: (np.zeros(1), 0.0), max_gpus=1024)
    assert gpus_to_meet(capped, 6.0, 8, "p50") is None  # would need 2,048 on demand
    for opt in plan405.decision.options:
        if opt.meets_target:
            assert opt.gpus_to_meet_target is not None and opt.gpus_to_meet_target <= opt.gpus


def test_size_to_target_solves_each_route(default_doc, catalog):
    """decision.size_to_target: the deadline solver per route. The target is 18 months out: the
    colocated and leased clusters that just make it are far smaller than 16,384 GPUs (at 16,384
    they start after it: a 24 MW colocation block is mostly preleased, so the solver starts from a
    smaller one and repeats from each sized cluster's start); the build cannot start before the
    target."""
    s = scenario_from_dict(_doc(default_doc, size_to_target=True), "sized.yaml", catalog)
    plan = make_plan(s, catalog)
    rows = {r["mode"]: r for r in plan.to_dict()["decision"]["sized"]}
    assert set(rows) == {"build", "colo", "lease", "cloud"}
    # the build goes live days before the target even at a sixteenth of the size: no cluster trains in time
    assert rows["build"]["gpus"] is None and ("after the target" in rows["build"]["error"]
                                              or "cannot be met" in rows["build"]["error"])
    for mode in ("colo", "lease"):
        r = rows[mode]
        assert r["error"] is None and 0 < r["gpus"] < 16384, r
        assert r["meets_target"] and r["trained_by_p90"] <= TARGET.isoformat()
        assert r["gpus"] % 8 == 0
        assert r["rounds"] >= 1

def test_terminal_report_answers_first(plan405):
    from rich.console import Console

    from clustertwin.report.text import render

    console = Console(record=True, width=160)
    render(plan405, console)
    lines = [ln for ln in console.export_text().splitlines() if ln.strip()]
    assert lines[0].startswith("Trained by ") and f" via {plan405.decision.best} for $" in lines[0]
    table = "\n".join(lines[:20])
    for mode in ("build", "colo", "lease", "cloud", f"{plan405.decision.best} *"):  # side by side, best starred
        assert mode in table
