"""The cloud route's re-plan and the spares re-estimate computed ahead in a forked child (issue
36, cold start): the plan is the same with or without it, the child's value is the one used
when it was computed for the arguments the plan asks (the GPU count, the spares' note), and the
child never outlives the plan."""

from __future__ import annotations

import pytest

from clustertwin.children import Ahead, can_fork_ahead
from clustertwin.decision.options import cloud_cap_gpus
from clustertwin.plan import (
    RESPARE,
    StageFunctions,
    make_plan,
    plan_ahead,
    replan_at,
    replan_expected,
    respare_ahead,
    respare_note,
)
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
    ahead = Ahead.start([(gpus, lambda: planted)])
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
    ahead = Ahead.start([(999, lambda: (1.0, 1.0, 0.5, 999.0))])
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


def test_the_room_the_spares_leave_is_the_designs_limit(default, catalog):
    """job_gpus_room (before the estimate) is the draft design's job_gpus_limit (after it)."""
    from clustertwin.design.core import design, job_gpus_room

    fns = StageFunctions.of_pipeline()
    training = fns.training(default, catalog)
    draft = design(default, catalog, training, cabling=False)
    room = job_gpus_room(default, catalog, default.cluster.gpus)
    assert draft.job_gpus_limit == room < training.gpus


def test_the_respare_ahead_is_the_one_the_plan_computes(default, catalog):
    """The child's re-estimate is computed for the arguments the plan then asks, and is the
    estimate the plan would compute for them."""
    from clustertwin.design.core import design

    fns = StageFunctions.of_pipeline()
    (installed, notes), value = respare_ahead(default, catalog, fns.respare)
    training = fns.training(default, catalog)
    limit = design(default, catalog, training, cabling=False).job_gpus_limit
    assert (installed, notes) == (limit, (respare_note(training.installed_gpus, limit),))
    assert value == fns.respare(default, catalog, installed=limit, notes=list(notes))


def test_no_respare_ahead_where_the_spares_leave_every_gpu(doc, catalog):
    doc["cluster"]["spare_placement"] = "outside"
    s = scenario_from_dict(doc)
    assert respare_ahead(s, catalog, StageFunctions.of_pipeline().respare) is None


@needs_fork
def test_a_planted_respare_is_used_for_its_own_arguments_only(default, catalog, alone):
    """A re-estimate planted for the arguments the plan asks shows in the plan's training
    block; one planted for other arguments is ignored and the plan is its own."""
    fns = StageFunctions.of_pipeline()
    key, real = respare_ahead(default, catalog, fns.respare)
    planted = real.model_copy(update={"mfu": real.mfu / 2})
    ahead = Ahead.start([(RESPARE, lambda: (key, planted))])
    try:
        plan = make_plan(default, catalog, ahead=ahead)
    finally:
        ahead.close()
    assert plan.training.mfu == pytest.approx(real.mfu / 2)
    other = ((key[0] - 8, key[1]), planted)
    ahead = Ahead.start([(RESPARE, lambda: other)])
    try:
        plan = make_plan(default, catalog, ahead=ahead)
    finally:
        ahead.close()
    assert plan.to_dict() == alone


def test_the_first_calls_leave_a_plan_nothing_to_import():
    """:func:`clustertwin.plan.first_calls` does what a default plan's stages do on their
    first call (so the forked child inherits it): after it, the plan imports no module."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from clustertwin.catalog import load_catalog\n"
        "from clustertwin.scenario import load_scenario\n"
        "from clustertwin.plan import StageFunctions, first_calls, make_plan, replan_expected\n"
        "cat = load_catalog(); s = load_scenario(None, cat)\n"
        "StageFunctions.of_pipeline(); replan_expected(s, cat); first_calls()\n"
        "before = set(sys.modules)\n"
        "make_plan(s, cat)\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
