"""The cloud route's re-plan computed ahead in a forked child (issue 36, cold start): the plan is
the same with or without it, the child's value is the one used when its GPU count is the one
the decision asks for, and the child never outlives the plan."""

from __future__ import annotations

import pytest

from clustertwin.children import Ahead, can_fork_ahead
from clustertwin.decision.options import cloud_cap_gpus
from clustertwin.plan import make_plan, plan_ahead, replan_at, replan_expected
from clustertwin.scenario import scenario_from_dict
from tests.procs import still_running

needs_fork = pytest.mark.skipif(not can_fork_ahead(), reason="a child is started only on Linux with two usable CPUs")


@pytest.fixture(scope="module")
def default(catalog):
    from clustertwin.scenario import DEFAULT_SCENARIO, load_scenario

    return load_scenario(DEFAULT_SCENARIO)


@pytest.fixture(scope="module")
def alone(default, catalog):
    """The default plan computed with no child."""
    return make_plan(default, catalog).to_dict()


def test_the_expected_replan_is_the_cloud_cap(default, catalog):
    cap = cloud_cap_gpus(catalog, default.decision, catalog.node(default.cluster.node).gpus)
    assert default.cluster.gpus > cap
    assert replan_expected(default, catalog) == cap


@pytest.mark.parametrize("change", [
    {"decision": {"options": ["build", "lease"]}},        # no cloud route
    {"cluster": {"gpus": 512}},                            # fits one cloud account
    {"decision": {"cloud": {"max_gpus": 100_000}}},        # an account that holds the run
])
def test_no_replan_expected(doc, catalog, change):
    for section, values in change.items():
        for k, v in values.items():
            if isinstance(v, dict):
                doc.setdefault(section, {}).setdefault(k, {}).update(v)
            else:
                doc.setdefault(section, {})[k] = v
    assert replan_expected(scenario_from_dict(doc), catalog) is None


def test_no_replan_expected_for_a_deadline(doc, catalog):
    doc["cluster"].pop("gpus")
    doc["cluster"]["deadline_days"] = 90
    assert replan_expected(scenario_from_dict(doc), catalog) is None


@needs_fork
def test_the_plan_is_the_same_with_the_child(default, catalog, alone):
    with plan_ahead(default, catalog) as ahead:
        assert ahead is not None
        pid = ahead._pid
        plan = make_plan(default, catalog, ahead=ahead)
    assert plan.to_dict() == alone
    assert still_running([pid], 5.0) == []


@needs_fork
def test_the_childs_value_is_the_one_used(default, catalog, alone):
    """A planted value for the GPU count asked for shows in the cloud route (so the child's
    answer, not a second computation, is what a plan with a child reads)..."""
    gpus = replan_expected(default, catalog)
    real = replan_at(default, catalog, None, gpus)
    planted = (real[0] * 2.0, real[1] * 2.0, real[2], real[3])
    ahead = Ahead.start(gpus, lambda: planted)
    try:
        plan = make_plan(default, catalog, ahead=ahead)
    finally:
        ahead.close()
    before = next(o for o in alone["decision"]["options"] if o["mode"] == "cloud")
    after = plan.decision.option("cloud")
    assert after.wall_clock_days_p50 == pytest.approx(2.0 * before["wall_clock_days_p50"], rel=0.02)


@needs_fork
def test_a_value_for_another_count_is_not_used(default, catalog, alone):
    """...and one for another GPU count is ignored: the plan computes its own."""
    ahead = Ahead.start(999, lambda: (1.0, 1.0, 0.5, 999.0))
    try:
        plan = make_plan(default, catalog, ahead=ahead)
    finally:
        ahead.close()
    assert plan.to_dict() == alone


@needs_fork
def test_the_child_ends_with_a_failed_plan(default, catalog):
    with pytest.raises(RuntimeError), plan_ahead(default, catalog) as ahead:
        pid = ahead._pid
        raise RuntimeError("a stage failed")
    assert still_running([pid], 5.0) == []
