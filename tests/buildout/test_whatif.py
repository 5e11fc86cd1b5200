"""What-if parsing, application and bad input (named, exit 2 via UsageError)."""

import pytest

from clustertwin.buildout import plan_buildout
from clustertwin.buildout.whatif import parse_what_ifs
from clustertwin.errors import UsageError

KNOWN = set(range(1, 196))


@pytest.mark.parametrize(
    ("text", "key", "fragment"),
    [
        ("step.999.likely=5", "step.999.likely", "unknown step 999"),
        ("step.12.after=+400", "step.12.after", "unknown step 400"),
        ("step.5.days=-1/2/3", "step.5.days", "negative"),
        ("gpu_lead_time_days=soon", "gpu_lead_time_days", "expected"),
        ("profile=greenfield", "profile", "unknown profile"),
        ("gpu_leadtime_days=+90", "gpu_leadtime_days", "unknown what-if key"),
        ("step.7.colour=red", "step.7.colour", "step.N.days"),
        ("crews=0", "crews", "positive"),
        ("gpus=-3", "gpus", "whole number"),
        ("novalue", "novalue", "KEY=VALUE"),
    ],
)
def test_bad_what_if_names_the_key(text, key, fragment):
    with pytest.raises(UsageError) as exc:
        parse_what_ifs([text], KNOWN)
    [problem] = exc.value.problems
    assert problem.path == key and fragment in problem.message
    assert problem.source == "--what-if"


def test_every_problem_reported_one_per_line():
    with pytest.raises(UsageError) as exc:
        parse_what_ifs(["step.999.likely=5 step.0.days=3", "profile=nope"], KNOWN)
    assert len(exc.value.lines()) == 3


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("step.1.after=+195", "cycle"),
        ("step.3.after=+26", "cycle"),
        ("step.42.likely=-100", "negative"),
        ("step.42.optimistic=+10", "optimistic <= likely"),
    ],
)
def test_cycles_and_negative_durations_at_plan_time(catalog, make_scenario, text, fragment):
    with pytest.raises(UsageError, match=fragment):
        plan_buildout(make_scenario(1024), catalog, what_if=[text], samples=100)


def test_forms_of_values(catalog, make_scenario):
    wis = [
        "gpu_lead_time_days=+90",
        "gpu_lead_time_days=x2",
        "gpu_lead_time_days=300",
        "step.1.days=100/200/300",
        "step.1.likely=400",
        "profile=fast-track crews=x2",
        "gpus=100000",
        {"substation_days": "+60"},
    ]
    flat = [w for w in wis if isinstance(w, str)]
    p = plan_buildout(
        make_scenario(1024, profile="existing-facility"), catalog, what_if=flat, samples=2000
    )
    by = {w.label: w for w in p.what_ifs}
    assert by["gpu_lead_time_days=+90"].shift_p50_days == pytest.approx(90, abs=3)
    assert by["gpu_lead_time_days=x2"].shift_p50_days > 200
    assert by["gpu_lead_time_days=300"].shift_p50_days == pytest.approx(30, abs=5)
    assert by["step.1.days=100/200/300"].shift_p50_days < -50
    assert by["step.1.likely=400"].shift_p50_days > 50
    assert by["profile=fast-track crews=x2"].shift_p50_days < -150
    assert by["gpus=100000"].shift_p50_days > 20
    m = plan_buildout(make_scenario(1024), catalog, what_if=wis[-1], samples=2000)
    assert m.what_ifs[0].label == "substation_days=+60"


def test_what_if_does_not_change_the_baseline(catalog, make_scenario):
    a = plan_buildout(make_scenario(1024), catalog, samples=2000)
    b = plan_buildout(
        make_scenario(1024), catalog, what_if=["gpu_lead_time_days=+90"], samples=2000
    )
    assert a.go_live_days_p50 == b.go_live_days_p50
    assert a.steps == b.steps
