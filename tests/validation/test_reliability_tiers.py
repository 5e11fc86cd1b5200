"""Two-tier checkpoint schedules against closed forms and published numbers.

Sources: Llama 3 (arXiv 2407.21783, Table 5 cause mix and rate), Gemini (Wang et al., SOSP'23:
in-memory checkpoints with peer copies, "checkpoint frequency up to 8x"), BLOOM (HF blog: 3 h
interval, 1.5 h lost per crash), ByteRobust (arXiv 2509.16293, SOSP'25: 97% ETTR over three
months on 9,600 GPUs with in-memory checkpoints; blocking 99.69% below a 6.77 s Megatron save).
See shared/research/reliability-anchors.md sections 1, 4.2, 4.4, 4.8 and 9. Closed forms:
:func:`clustertwin.reliability.interval.mean_mod_loss` (E[X mod tau] for Poisson failures,
about tau/2) and :func:`~clustertwin.reliability.interval.two_tier_loss` (the exact two-tier
loss with a share q of failures losing the local tier)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
import reliability_support as rs  # noqa: E402

from clustertwin.design.failure_rates import job_rates  # noqa: E402
from clustertwin.reliability import analyze  # noqa: E402
from clustertwin.reliability import interval as iv  # noqa: E402
from clustertwin.reliability.montecarlo import RunSpec  # noqa: E402
from clustertwin.reliability.tiers import TierSpec, simulate_tiers  # noqa: E402


@pytest.fixture(scope="module")
def cat():
    return rs.catalog()


@pytest.fixture(scope="module")
def l3(cat):
    """Llama 3 rates and cause mix at 16,384 GPUs, unexpected interruptions only."""
    return job_rates(cat.get("failure_profile", "llama3-h100"), 16384, 8, include_planned=False)


def _l3_spec(rates, restart_h, work_h=54 * 24.0):
    return RunSpec(work_h=work_h, blocking_h=0.0, persist_h=0.0, restart_h=restart_h,
                   rates_per_h=rates.rates_per_h, needs_repair=rates.needs_repair,
                   repair_h=8.0, spare_nodes=256)


@pytest.fixture(scope="module")
def replicated(l3):
    """Fast tier every 10 min with a peer copy vs file system only, both with the file system
    every 60 min; no stalls, 10 min restart from either tier; same failures (CRN)."""
    spec = _l3_spec(l3, 10 / 60)
    return simulate_tiers(spec, TierSpec(0.0, 0.0, 10 / 60, replicas=1), [10 / 60, 1.0], [6, 1],
                          400, np.random.default_rng(11), local_on=[True, False])


def test_replicated_fast_tier_loses_half_its_interval(l3, replicated):
    """(a) Llama 3 rate (M = 185.6 min), replicated fast tier every 10 min: lost progress per
    interruption = e^(-R/M) E[X mod 10 min] = 4.70 min (failures inside the 10 min restart lose
    nothing), i.e. about half the fast interval; simulated within 2% of the closed form and
    10% of tau/2."""
    m = l3.mtbf_h * 60
    expect = math.exp(-10 / m) * iv.mean_mod_loss(10.0, m)
    per = replicated.lost_h[0].sum() / replicated.interruptions[0].sum() * 60
    assert per == pytest.approx(expect, rel=0.02)
    assert per == pytest.approx(5.0, rel=0.10)
    assert replicated.local_restores[0].sum() > 0.99 * replicated.interruptions[0].sum()


def test_replicated_fast_tier_raises_ettr_over_file_system_only(l3, replicated):
    """(a) ETTR with the fast tier = Daly's complete model at 10 min (0.922) against file system
    only at the same 60 min (0.803): +0.120; each within 0.005 of the closed form."""
    m = l3.mtbf_h * 60
    e = replicated.work_h.sum(axis=1) / replicated.wall_h.sum(axis=1)
    assert e[0] == pytest.approx(iv.ettr_daly(10.0, 0.0, m, 10.0), abs=0.005)
    assert e[1] == pytest.approx(iv.ettr_daly(60.0, 0.0, m, 10.0), abs=0.005)
    assert e[0] - e[1] == pytest.approx(0.120, abs=0.01)


def test_node_local_copies_lose_their_benefit_for_hardware_failures(l3):
    """(b) Node-local copies only (no peer): the 356 of 419 Table 5 interruptions that need a
    repair take the node and its copy, so they restore from the file system. Fast tier 10 min,
    file system 60 min, no stalls or restarts: lost progress per interruption = two_tier_loss
    (q = 356/419) = 25.1 min, against 5.0 min with a peer copy and 28.4 min file system only
    (within 2%); 15% of interruptions restore from the local tier (within 1 point)."""
    q = 356 / 419
    assert l3.repair_share == pytest.approx(q, abs=1e-4)
    m = l3.mtbf_h * 60
    spec = _l3_spec(l3, 0.0, work_h=200 * 24.0)
    out = simulate_tiers(spec, TierSpec(0.0, 0.0, 0.0, replicas=0), [10 / 60, 1.0], [6, 1], 300,
                         np.random.default_rng(12), local_on=[True, False])
    per = out.lost_h.sum(axis=1) / out.interruptions.sum(axis=1) * 60
    assert per[0] == pytest.approx(iv.two_tier_loss(10.0, 6, q, m), rel=0.02)
    assert per[1] == pytest.approx(iv.mean_mod_loss(60.0, m), rel=0.02)
    assert iv.two_tier_loss(10.0, 6, q, m) == pytest.approx(25.06, abs=0.01)
    assert iv.mean_mod_loss(60.0, m) == pytest.approx(28.39, abs=0.01)
    share = out.local_restores[0].sum() / out.interruptions[0].sum()
    assert share == pytest.approx(1 - q, abs=0.01)


@pytest.mark.parametrize("k", [1, 3, 6, 12])
def test_two_tier_loss_closed_form_over_k(l3, k):
    """(b) the closed form over the file-system multiple k (q = 356/419, 10 min fast tier),
    within 2%."""
    q, m = 356 / 419, l3.mtbf_h * 60
    spec = _l3_spec(l3, 0.0, work_h=150 * 24.0)
    out = simulate_tiers(spec, TierSpec(0.0, 0.0, 0.0), 10 / 60, k, 200, np.random.default_rng(k))
    per = out.lost_h.sum() / out.interruptions.sum() * 60
    assert per == pytest.approx(iv.two_tier_loss(10.0, k, q, m), rel=0.02)


def test_gemini_eight_times_the_frequency_on_bloom():
    """Gemini (SOSP'23) raises checkpoint frequency up to 8x with in-memory copies on peer nodes.
    On BLOOM's run (~400 GPUs, 1.5 GPU failures a week, file system every 3 h, 1.5 h lost per
    crash) an in-memory tier every 3 h / 8 = 22.5 min with a peer copy loses 1.5 h / 8 =
    11.25 min per crash, +-5%."""
    spec = RunSpec(work_h=4000.0, blocking_h=0.0, persist_h=0.0, restart_h=0.0,
                   rates_per_h=(1.5 / 168,), needs_repair=(True,), repair_h=8.0, spare_nodes=10)
    out = simulate_tiers(spec, TierSpec(0.0, 0.0, 0.0, replicas=1), [3.0 / 8, 3.0], [8, 1], 400,
                         np.random.default_rng(4), local_on=[True, False])
    per = out.lost_h.sum(axis=1) / out.interruptions.sum(axis=1)
    assert per[1] == pytest.approx(1.5, rel=0.05)
    assert per[0] * 60 == pytest.approx(11.25, rel=0.05)


def test_byterobust_ettr_97(cat):
    """BR-ETTR: 9,600 GPUs for three months with in-memory checkpoints every minute (per
    iteration in ByteRobust) on a peer, blocking 0.021 s (99.69% below Megatron's 6.77 s), Llama 3
    H100 failure rates with planned maintenance, file system every 60 min; assumed 10 min
    restart (MegaScale's detect+diagnose bound). Published ETTR 97%; +-0.02."""
    sc = rs.scenario(cat, gpus=9600, spare_nodes=64, reliability={
        "trials": 100, "local_checkpoint_interval_min": 1, "local_checkpoint_replicas": 1,
        "local_checkpoint_blocking_s": 0.021, "checkpoint_blocking_s": 0.021,
        "checkpoint_interval_min": 60, "restart_min": 10})
    res = analyze(sc, cat, rs.estimate(gpus=9600, days=90, params=70e9))
    assert res.ettr_mean == pytest.approx(0.97, abs=0.02)
    assert res.local_restore_share > 0.95
    assert res.ettr_mean > res.pfs_only_ettr_mean + 0.05


def test_single_tier_cases_unchanged(cat):
    """(c) without the new keys the stage is the single-tier model: the Llama 3 case of
    test_reliability_llama3 (10 s blocking, 10 min restart, optimum interval, 256 spares)
    still gives ETTR 0.905 +- 1.5 pt, with no two-tier fields."""
    sc = rs.scenario(cat, gpus=16384, spare_nodes=256,
                     reliability={"checkpoint_blocking_s": 10, "restart_min": 10, "trials": 100})
    res = analyze(sc, cat, rs.estimate(gpus=16384, days=54))
    assert res.checkpoint_tiers == 1 and res.pfs_only_ettr_mean is None
    assert res.ettr_mean == pytest.approx(0.905, abs=0.015)
