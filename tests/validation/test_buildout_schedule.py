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


def plan(gpus, profile, node="dgx-h100", what_if=None):
    return plan_buildout(scenario(gpus, profile, node), CAT, what_if=what_if, samples=SAMPLES)


@pytest.mark.parametrize("node", ["dgx-h100", "hgx-h100-liquid-4u"])
def test_fast_track_100k_within_1_5x_of_colossus_122_days(node):
    """xAI Colossus, 100,000 H100 in 122 days (datacenter-anchors 3.3): P50 in 122/1.5..122*1.5."""
    p = plan(100_000, "fast-track", node)
    assert 122 / 1.5 <= p.go_live_days_p50 <= 122 * 1.5


@pytest.mark.parametrize("gpus", [1024, 16384, 100_000])
def test_new_build_lands_in_12_to_24_months(gpus):
    """Seed 000: power and cooling 12-18 months for new facilities; whole build 12-24 months."""
    p = plan(gpus, "new-build")
    assert 365 <= p.go_live_days_p50 and p.go_live_days_p90 <= 730


@pytest.mark.parametrize("profile", ["new-build", "existing-facility"])
def test_gpu_or_facility_power_on_critical_path(profile):
    """Seed 000 'Key dependencies': GPUs or power and cooling drive the timeline."""
    cp = set(plan(16384, profile).critical_path)
    assert cp & (GPU_STEPS | POWER_STEPS)


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
