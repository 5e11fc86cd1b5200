"""Llama 3 405B interruptions (arXiv 2407.21783, section 3.3.4 and Table 5) against the
reliability stage. Counts, not the printed percentages, are the reference (see
shared/research/reliability-anchors.md section 1.3)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
import reliability_support as rs  # noqa: E402

from clustertwin.design.failure_rates import job_rates  # noqa: E402
from clustertwin.reliability import analyze  # noqa: E402
from clustertwin.reliability import interval as iv  # noqa: E402
from clustertwin.reliability.montecarlo import RunSpec, simulate  # noqa: E402

TABLE5_CATEGORIES = {"gpu": 268, "dependency": 56, "network": 35, "unplanned-maintenance": 32,
                     "host": 21, "unknown": 7}


@pytest.fixture(scope="module")
def cat():
    return rs.catalog()


@pytest.fixture(scope="module")
def rates(cat):
    return job_rates(cat.get("failure_profile", "llama3-h100"), 16384, 8)


@pytest.fixture(scope="module")
def window(rates):
    """2,000 simulated 54-day wall-clock windows of the 16,384-GPU job."""
    spec = RunSpec(work_h=1e9, blocking_h=10 / 3600, persist_h=0.0, restart_h=10 / 60,
                   rates_per_h=rates.rates_per_h, needs_repair=rates.needs_repair,
                   planned_per_h=rates.planned_per_h, repair_h=8.0, spare_nodes=256,
                   wall_limit_h=54 * 24)
    return simulate(spec, 7.9 / 60, 2000, np.random.default_rng(7), count_causes=True)


def test_l3_count_mean_within_1pct(window):
    """L3-COUNT: 419 unexpected interruptions in 54 days; mean over 2,000 trials within 1%."""
    mean = window.interruptions.mean()
    assert abs(mean - 419) / 419 < 0.01


def test_l3_count_single_run_band(window):
    """L3-COUNT: a single run falls in the Poisson 95% band [379, 459] about 95% of the time."""
    inside = np.mean((window.interruptions >= 379) & (window.interruptions <= 459))
    assert 0.93 <= inside <= 0.97


def test_l3_planned(window):
    """47 planned interruptions in the 54 days (mean over trials within 3%)."""
    assert abs(window.planned.mean() - 47) / 47 < 0.03


def test_l3_mtti(rates):
    """L3-MTTI: 3.09 h unexpected-only and 2.78 h with the 47 planned, +-1%."""
    assert rates.mtbf_h == pytest.approx(3.093, rel=0.01)
    assert 1 / (rates.unexpected_per_h + rates.planned_per_h) == pytest.approx(2.781, rel=0.01)


@pytest.mark.parametrize("category,count", sorted(TABLE5_CATEGORIES.items()))
def test_l3_mix_by_category(cat, window, rates, category, count):
    """L3-MIX: Table 5 category totals; tolerance 4 sigma of the mean of 2,000 trials."""
    profile = cat.get("failure_profile", "llama3-h100")
    cols = [i for i, c in enumerate(rates.causes) if profile.causes[c].category == category]
    mean = window.counts[:, cols].sum(axis=1).mean()
    assert abs(mean - count) <= 4 * np.sqrt(count / 2000) + 0.01 * count


def test_l3_mix_faulty_gpu_share(window, rates):
    """L3-MIX: Faulty GPU is 148/419 = 35.3% of unexpected interruptions (not the printed 30.1%)."""
    share = window.counts[:, rates.causes.index("faulty-gpu")].sum() / window.counts.sum()
    assert share == pytest.approx(148 / 419, abs=0.005)


def test_l3_ettr_young_unexpected_only(rates):
    """L3-ETT: 10 s blocking, 10 min restart, Young interval 7.87 min, unexpected failures only:
    ETTR 0.908 (Daly exact; Kokolis approx 0.906); tolerance 1.5 pt (paper: > 90%)."""
    tau = iv.young(10 / 60, rates.mtbf_h * 60)
    spec = RunSpec(work_h=54 * 24, blocking_h=10 / 3600, persist_h=0.0, restart_h=10 / 60,
                   rates_per_h=rates.rates_per_h, needs_repair=rates.needs_repair,
                   repair_h=8.0, spare_nodes=256)
    out = simulate(spec, tau / 60, 200, np.random.default_rng(1))
    assert out.ettr.mean() == pytest.approx(0.908, abs=0.015)


GRID = [(6.3, 5, 0.941), (10, 5, 0.933), (10, 20, 0.860), (60, 5, 0.876), (60, 10, 0.853),
        (148.8, 10, 0.801), (300, 10, 0.744), (300, 20, 0.705)]


@pytest.mark.parametrize("w_s,u0_min,expect", GRID,
                         ids=[f"L3-ETT-grid w={w}s u0={u}min ETTR {e} +-1.5pt" for w, u, e in GRID])
def test_l3_ettr_grid(rates, w_s, u0_min, expect):
    """L3-ETT-grid (anchors section 9, Daly complete model at the Young interval)."""
    tau = iv.young(w_s / 60, rates.mtbf_h * 60)
    spec = RunSpec(work_h=54 * 24, blocking_h=w_s / 3600, persist_h=0.0, restart_h=u0_min / 60,
                   rates_per_h=(rates.unexpected_per_h,), needs_repair=(False,))
    out = simulate(spec, tau / 60, 100, np.random.default_rng(2))
    assert out.ettr.mean() == pytest.approx(expect, abs=0.015)


@pytest.fixture(scope="module")
def stage(cat):
    """The whole stage: llama3-h100 with its planned interruptions, 10 s blocking checkpoints,
    10 min restart, interval auto (the simulated optimum), 256 spare nodes (the Llama 3 job
    used 16K of a 24K-GPU cluster, so spares were plentiful)."""
    sc = rs.scenario(cat, gpus=16384, spare_nodes=256,
                     reliability={"checkpoint_blocking_s": 10, "restart_min": 10, "trials": 300})
    return analyze(sc, cat, rs.estimate(gpus=16384, days=54))


def test_l3_ettr_stage_at_optimum(stage):
    """Llama 3: ETTR above 90% (paper); anchors L3-ETT 0.908 without and L3-ETT-all 0.900 with
    planned interruptions; the stage (planned saves lose no work) must land in 0.90 +- 1.5 pt."""
    assert stage.ettr_mean == pytest.approx(0.905, abs=0.015)
    assert stage.ettr_mean > 0.895


def test_l3_stage_intervals(stage):
    """Young 7.87 min and Daly HO 7.75 min at M = 185.6 min, delta = 10 s (anchors 3.4);
    the simulated optimum lies within 15% of Daly (the ETTR curve is flat there)."""
    assert stage.young_interval_min == pytest.approx(7.865, abs=0.01)
    assert stage.daly_interval_min == pytest.approx(7.755, abs=0.01)
    assert stage.optimal_interval_min == pytest.approx(7.755, rel=0.15)
