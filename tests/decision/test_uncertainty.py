"""Issue 38: the route Monte Carlo (seeded, vectorised) and what the headline says about it.

The spreads it draws are sourced catalog figures (routes.yaml ``uncertainty``); the tests check
its arithmetic and its contract, not a figure copied from the code."""

from __future__ import annotations

import numpy as np
import pytest

from clustertwin.decision import uncertainty as mc
from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict
from tests.decision.helpers import TARGET
from tests.decision.helpers import decision_doc as _doc


@pytest.fixture(scope="module")
def plan(plan405):
    return plan405


def test_every_option_has_its_chances(plan):
    d = plan.to_dict()["decision"]
    for o in d["options"]:
        assert 0.0 <= o["p_meets_target"] <= 1.0 and 0.0 <= o["p_best"] <= 1.0
    assert sum(o["p_best"] for o in d["options"]) <= 1.0 + 1e-9
    best = next(o for o in d["options"] if o["mode"] == d["best"])
    assert d["knife_edge"] == (best["p_best"] < 0.8)
    runner = [o for o in d["options"] if o["meets_target"] and o["mode"] != d["best"]]
    if runner:  # best on cost: the runner-up meeting the target costs at least as much
        assert d["margin_usd"] == pytest.approx(min(o["cost_usd"] for o in runner) - best["cost_usd"])
        assert d["margin_usd"] >= 0.0
    else:
        assert d["margin_usd"] is None
    assert 1 <= len(d["drivers"]) <= 5
    for r in d["drivers"]:
        assert set(r) == {"input", "low", "high", "cost_low_usd", "cost_high_usd"}
        assert r["input"] in mc.INPUTS and r["low"] <= 1.0 <= r["high"]


def test_seeded_and_reproducible(default_doc, catalog):
    a = make_plan(scenario_from_dict(_doc(default_doc, uncertainty={"seed": 7}), "a.yaml", catalog), catalog)
    b = make_plan(scenario_from_dict(_doc(default_doc, uncertainty={"seed": 7}), "b.yaml", catalog), catalog)
    assert [o.p_best for o in a.decision.options] == [o.p_best for o in b.decision.options]


def test_a_route_that_cannot_meet_the_target_is_never_best(plan):
    """Build goes live after the target at P50 already: it meets it in (almost) no draw."""
    build = plan.decision.option("build")
    assert build.trained_by_p50 > TARGET
    assert build.p_meets_target < 0.05 and build.p_best < 0.05


def test_knife_edge_said_in_the_headline(default_doc, catalog):
    """Two routes a few percent apart: the headline says how likely the winner is and which
    route wins otherwise; a clear winner's headline does not."""
    doc = _doc(default_doc, options=["colo", "lease"], lease={"usd_per_gpu_hour": 1.45})
    doc["decision"].pop("target_date")
    d = make_plan(scenario_from_dict(doc, "k.yaml", catalog), catalog).decision
    best = d.option(d.best)
    assert d.knife_edge and best.p_best < 0.8
    other = "lease" if d.best == "colo" else "colo"
    assert f"{best.p_best:.0%} likely cheapest; {other} otherwise" in d.headline()
    doc = _doc(default_doc, options=["colo", "lease"])
    doc["decision"].pop("target_date")
    clear = make_plan(scenario_from_dict(doc, "c.yaml", catalog), catalog).decision
    assert not clear.knife_edge and "likely" not in clear.headline()


def test_multiplier_hits_its_percentiles():
    z = np.array([-mc.Z90, 0.0, mc.Z90])
    assert mc.multiplier(z, 0.7, 1.4).tolist() == pytest.approx([0.7, 1.0, 1.4])


def test_simulate_draws_match_the_spread():
    """One route whose cost is 100 at P50, 80 at P10 and 130 at P90 of one input: 10% of draws
    below 80, 10% above 130 (within sampling error at 20,000 draws)."""
    k = len(mc.COST_INPUTS)
    low, high = np.full(k, 100.0), np.full(k, 100.0)
    low[2], high[2] = 80.0, 130.0
    mults = np.tile([1.0, 1.0], (k, 1))
    mults[2] = (0.85, 1.15)
    a = mc.RouteSpread("a", 100.0, low, high, (10.0, 10.0), (50.0, 50.0), mults)
    b = mc.RouteSpread("b", 105.0, np.full(k, 105.0), np.full(k, 105.0), (10.0, 10.0), (50.0, 50.0),
                       np.tile([1.0, 1.0], (k, 1)))
    meets, best = mc.simulate([a, b], None, "cost", 20_000, 1)
    assert meets.all()
    # a is best unless its cost draws above 105: z > 1.2816 * 5 / 30 -> P(z > 0.2136) = 0.415
    assert best[:, 1].mean() == pytest.approx(0.4154, abs=0.015)
    # break-even: a's cost reaches 105 a sixth of the way from P50 to P90 of the input
    (row,) = mc.break_even([a, b], "a", "b")
    assert row["input"] == "hardware_price" and row["route"] == "b"
    assert row["multiplier"] == pytest.approx(1.0 + 0.15 * 5 / 30, abs=1e-3)
