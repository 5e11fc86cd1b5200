"""Build-out schedule against the seeds' and published figures.

Sources: seed 000 "Training Cluster" (GPU lead 6-12 months, power and cooling 12-18 months for
a new facility, GPU procurement / facility power on the critical path), seed 004 and
datacenter-anchors 3.3 (xAI Colossus: 100,000 H100 built in 122 days).
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "buildout"))

from buildout_fakes import PinnedCatalog, scenario  # noqa: E402

from clustertwin.buildout import plan_buildout  # noqa: E402

CAT = PinnedCatalog()
SAMPLES = 4000
POWER_STEPS = set(range(74, 94))  # utility, substation, switchgear ... energization
GPU_STEPS = {1, 3}


def plan(gpus, profile, node="dgx-h100", what_if=None, site="greenfield"):
    return plan_buildout(scenario(gpus, profile, node, site=site), CAT, what_if=what_if, samples=SAMPLES)


@pytest.mark.parametrize("node", ["dgx-h100", "hgx-h100-liquid-4u"])
def test_fast_track_100k_within_1_5x_of_colossus_122_days(node):
    """xAI Colossus, 100,000 H100 in 122 days (datacenter-anchors 3.3): P50 in 122/1.5..122*1.5."""
    p = plan(100_000, "fast-track", node)
    assert 122 / 1.5 <= p.go_live_days_p50 <= 122 * 1.5


@pytest.mark.parametrize("gpus", [1024, 16384, 100_000])
def test_new_build_lands_in_12_to_24_months(gpus):
    """Seed 000: power and cooling 12-18 months for new facilities; whole build 12-24 months,
    on a site ready to build (its 195 steps have no site acquisition or permits): in an
    existing shell, and from permits in hand on powered land (the shell is built alongside the
    power and cooling plant)."""
    p = plan(gpus, "new-build", site="existing-building")
    assert 365 <= p.go_live_days_p50 and p.go_live_days_p90 <= 730
    land = plan(gpus, "new-build", site="powered-land")
    built = land.go_live_days_p50 - land.step(197).earliest_finish_days
    assert 365 <= built <= 730


@pytest.mark.parametrize("gpus", [1024, 16384, 100_000])
def test_greenfield_lands_in_bommaritos_three_to_five_years_less_the_queue(gpus):
    """M. Bommarito, development timelines (2025): a greenfield site takes 3-5 years including
    18-36 months of interconnection, which runs alongside acquisition, permits and
    construction; without the utility's queue (the decision's, by region) the build-out
    itself lands between acquisition + permitting + construction at their low ends (21 months)
    and their high ends (36 months)."""
    p = plan(gpus, "new-build")
    assert 21 * 30.44 <= p.go_live_days_p50 and p.go_live_days_p90 <= 36 * 30.44


@pytest.mark.parametrize("profile", ["new-build", "existing-facility"])
def test_gpu_or_facility_power_on_critical_path(profile):
    """Seed 000 'Key dependencies': GPUs or power and cooling drive the timeline of a site ready
    to build; on a greenfield site the site, its permits and the shell come first."""
    cp = set(plan(16384, profile, site="existing-building").critical_path)
    assert cp & (GPU_STEPS | POWER_STEPS)
    if profile == "new-build":
        assert plan(16384, profile).critical_path[:3] == (196, 197, 198)


def test_gpu_slip_moves_p50_about_3_months_when_gpus_critical():
    """Existing facility: GPUs are critical, a 90-day slip moves P50 by 80-95 days."""
    p = plan(16384, "existing-facility", what_if=["gpu_lead_time_days=+90"])
    assert p.step(1).criticality > 0.9
    assert 80 <= p.what_ifs[0].shift_p50_days <= 95


def test_gpu_slip_moves_p50_less_when_gpus_not_critical():
    """New build: facility power is critical, so the same slip moves P50 by well under 90 days."""
    p = plan(16384, "new-build", what_if=["gpu_lead_time_days=+90"])
    assert p.step(1).criticality < 0.5
    assert 0 <= p.what_ifs[0].shift_p50_days < 45


@pytest.mark.parametrize("profile", ["new-build", "existing-facility", "fast-track"])
def test_1k_and_100k_builds_differ(profile):
    """Quantity-driven steps (racking, cabling, burn-in, validation) grow with the cluster."""
    assert plan(100_000, profile).go_live_days_p50 > plan(1000, profile).go_live_days_p50 + 5


def test_profiles_order():
    """fast-track < existing-facility < new-build at the same size."""
    p = {
        k: plan(16384, k).go_live_days_p50 for k in ("fast-track", "existing-facility", "new-build")
    }
    assert p["fast-track"] < p["existing-facility"] < p["new-build"]
