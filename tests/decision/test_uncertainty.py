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


def test_routes_drawn_together_as_each_alone():
    """simulate prices every route in one pass (a row per route); each route's draws are its
    own: simulated alone with the same seed, a route meets the target (and the deadline) in
    exactly the same draws. Three routes with different spreads, dates and a utility queue."""
    k = len(mc.COST_INPUTS)
    rng = np.random.default_rng(3)
    routes = []
    for i, grid in enumerate([(0.0, 0.0), (300.0, 500.0), (0.0, 0.0)]):
        score = 100.0 + 10.0 * i
        low, high = score - rng.uniform(0, 20, k), score + rng.uniform(0, 30, k)
        mults = np.column_stack([rng.uniform(0.6, 1.0, k), rng.uniform(1.0, 1.6, k)])
        routes.append(mc.RouteSpread(f"r{i}", score, low, high, (50.0 + 40 * i, 90.0 + 60 * i),
                                     (200.0, 260.0), mults, grid))
    meets, best = mc.simulate(routes, 420.0, "cost", 3000, 11, deadline=240.0)
    assert meets.shape == best.shape == (3000, 3)
    for j, r in enumerate(routes):
        alone, _ = mc.simulate([r], 420.0, "cost", 3000, 11, deadline=240.0)
        assert np.array_equal(alone[:, 0], meets[:, j]), r.mode
        assert 0.05 < alone.mean() < 0.95, r.mode  # the target and deadline cut inside the spread
    assert (best.sum(axis=1) <= 1).all() and not (best & ~meets).any()
    assert np.array_equal(best.any(axis=1), meets.any(axis=1))


def test_scaled_inputs_are_a_faithful_copy(plan405, catalog):
    """Inputs.scaled (the tornado's moves) gives what dataclasses.replace gives, and leaves the
    original as it was."""
    import dataclasses

    from clustertwin.decision.inputs import gather

    p = plan405
    inp = gather(p.scenario, catalog, p.training, p.design, p.reliability, p.economics, p.buildout)
    before = dataclasses.asdict(inp)
    moved = inp.scaled(1.25, "wall_p50", "it_capex")
    assert moved == dataclasses.replace(inp, wall_p50=inp.wall_p50 * 1.25, it_capex=inp.it_capex * 1.25)
    assert type(moved) is type(inp) and hash(moved) != hash(inp)
    assert dataclasses.asdict(inp) == before


def test_exit_cash_priced_once_when_read():
    """A route's exit-basis cash is priced on first read (the tornado's usage-basis cases never
    read it) and only once however often flows and residual are read."""
    from clustertwin.decision.options import Option

    calls = []

    def priced():
        calls.append(1)
        return np.array([5.0, -2.0]), 3.0

    o = Option("colo", 8, (1.0, 2.0), (1.0, 2.0), (10.0, 12.0), priced, usage_usd=7.0)
    assert not calls and o.usage_usd == 7.0
    assert o.flows.tolist() == [5.0, -2.0] and o.residual_usd == 3.0 and o.flows.sum() == 3.0
    assert len(calls) == 1


def test_each_route_scored_on_its_own_inputs_draws():
    """Two routes, no target: a flat one at 100 and, second, one moving on a single input
    (80 at its P10, 130 at its P90). The second is best in exactly the draws where that input
    is drawn below its median (the draws read back from the same seed)."""
    k = len(mc.COST_INPUTS)
    flat = mc.RouteSpread("flat", 100.0, np.full(k, 100.0), np.full(k, 100.0), (10.0, 10.0),
                          (50.0, 50.0), np.ones((k, 2)))
    for j in range(k):
        low, high = np.full(k, 100.0), np.full(k, 100.0)
        low[j], high[j] = 80.0, 130.0
        moving = mc.RouteSpread("moving", 100.0, low, high, (10.0, 10.0), (50.0, 50.0), np.ones((k, 2)))
        _, best = mc.simulate([flat, moving], None, "cost", 4000, 5)
        z = np.random.default_rng(5).standard_normal((4000, len(mc.INPUTS)))
        assert np.array_equal(best[:, 1], z[:, 1 + j] < 0), mc.COST_INPUTS[j]
