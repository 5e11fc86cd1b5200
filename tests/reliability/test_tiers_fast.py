"""The two-tier run's fast phases (unmasked opening :mod:`.tierbulk`, running-pairs tail
:mod:`.tierflat`) give the masked event loop's numbers bit for bit, over many specs."""

from __future__ import annotations

import numpy as np
import pytest
import reliability_support as rs

from clustertwin.reliability import tiers
from clustertwin.reliability.montecarlo import RunawayError, TrialLoop
from clustertwin.reliability.tierbulk import Schedule, mod_counts
from clustertwin.reliability.tiers import TierSpec, simulate_tiers

FIELDS = ("intervals_h", "wall_h", "work_h", "stall_h", "lost_h", "restart_h", "waiting_h",
          "interruptions", "planned", "counts", "local_restores")


_spec = rs.mc_spec


def _digest(out) -> list:
    rows = []
    for f in FIELDS:
        x = getattr(out, f)
        rows.append(None if x is None else (x.dtype.str, x.shape, x.tobytes()))
    return [rows, out.timeline, out.events]


def _reference(monkeypatch, *args, **kw):
    """The masked loop alone, arrivals drawn one event at a time."""

    class PerEvent(TrialLoop):
        def __init__(self, *a, blocks=False, **k):  # noqa: ANN001, ANN002, ANN003
            super().__init__(*a, blocks=False, **k)

    with monkeypatch.context() as m:
        m.setattr(tiers, "TrialLoop", PerEvent)
        m.setattr(tiers, "run_bulk", lambda *a: None)
        m.setattr(tiers, "run_flat", lambda *a: None)
        return simulate_tiers(*args, **kw)


LOCAL = [0.05, 0.1, 0.3, 0.5, 1.0, 0.2]
EVERY = [1, 8, 4, 2, 1, 3]
ON = [True, True, True, True, False, True]
CASES = {
    "node-local": (dict(), dict(replicas=0)),
    "peer copy": (dict(), dict(replicas=1)),
    "write windows": (dict(persist_h=0.4), dict(local_persist_h=0.04)),
    "no planned": (dict(planned_per_h=0.0), dict()),
    "no spares, long repairs": (dict(spare_nodes=0, repair_h=9.0), dict()),
    "many spares": (dict(spare_nodes=9, repair_h=12.0, rates_per_h=(0.3, 0.05, 0.2)), dict()),
    "wall-clock limit": (dict(wall_limit_h=190.0), dict()),
    "limit after the work": (dict(wall_limit_h=600.0), dict(replicas=1)),
    "zero stalls": (dict(blocking_h=0.0, repair_h=0.0), dict(local_blocking_h=0.0)),
    "slow local restart": (dict(restart_h=0.05), dict(local_restart_h=0.3)),
    "infinite repair": (dict(repair_h=np.inf, spare_nodes=200), dict()),
    "short work": (dict(work_h=12.0), dict()),
}


@pytest.mark.parametrize("trials", [1, 37, 160])
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_fast_phases_match_the_masked_loop(case, trials, monkeypatch):
    spec_kw, tier_kw = case
    spec = _spec(**spec_kw)
    tier = TierSpec(**{**dict(local_blocking_h=0.01, local_persist_h=0.02,
                              local_restart_h=0.05), **tier_kw})
    args = (spec, tier, LOCAL, EVERY, trials)
    kw = dict(local_on=ON, count_causes=True, record=True)
    fast_rng, ref_rng = np.random.default_rng(trials), np.random.default_rng(trials)
    fast = simulate_tiers(*args, fast_rng, **kw)
    ref = _reference(monkeypatch, *args, ref_rng, **kw)
    assert _digest(fast) == _digest(ref)
    assert fast.events > (10 if spec.work_h < 20 else 64)
    assert fast_rng.random() == ref_rng.random()


@pytest.mark.parametrize("every", [[1, 3, 2.5], [2, 2, 2]], ids=["fractional", "whole"])
def test_one_schedule_and_odd_counts_match(every, monkeypatch):
    args = (_spec(), TierSpec(0.01, 0.02, 0.05, 1), [0.4, 0.2, 0.3], every, 50)
    fast_rng, ref_rng = np.random.default_rng(2), np.random.default_rng(2)
    fast = simulate_tiers(*args, fast_rng, count_causes=True)
    ref = _reference(monkeypatch, *args, ref_rng, count_causes=True)
    assert _digest(fast) == _digest(ref)
    assert fast_rng.random() == ref_rng.random()


@pytest.mark.parametrize("budget", [30, 150])
def test_running_out_of_events_fails_the_same_way(budget, monkeypatch):
    args = (_spec(), TierSpec(0.01, 0.02, 0.05), LOCAL, EVERY, 40)
    fast_rng, ref_rng = np.random.default_rng(4), np.random.default_rng(4)
    with pytest.raises(RunawayError) as fast:
        simulate_tiers(*args, fast_rng, max_events=budget)
    with pytest.raises(RunawayError) as ref:
        _reference(monkeypatch, *args, ref_rng, max_events=budget)
    assert str(fast.value) == str(ref.value)
    assert fast_rng.random() == ref_rng.random()


def test_checkpoint_count_remainders_are_numpys():
    rng = np.random.default_rng(0)
    kk = np.array([1.0, 2.0, 3.0, 7.0, 64.0, 1024.0])[:, None]
    x = np.concatenate([np.floor(rng.normal(0, 1e3, 500)), np.floor(rng.normal(0, 1e14, 500)),
                        [0.0, -0.0, 2.0**49, -(2.0**49), 2.0**50 - 1]])
    x = np.broadcast_to(x, (kk.shape[0], x.size)).copy()
    got, want = mod_counts(x, kk, True), np.mod(x, kk)
    assert got.tobytes() == want.tobytes()            # signs of zeros included
    x[0, 0] = 2.0**53 - 1                             # too large: falls back to np.mod
    assert mod_counts(x, kk, True).tobytes() == np.mod(x, kk).tobytes()
    x[0, 0] = np.nan
    assert mod_counts(x, kk, True).tobytes() == np.mod(x, kk).tobytes()
    frac = x[:, :10] + 0.25
    assert mod_counts(frac, kk, False).tobytes() == np.mod(frac, kk).tobytes()


def test_whole_counts_guard():
    from clustertwin.reliability.tierbulk import whole_counts

    def sch(kk):
        return Schedule(*([None] * 1), kk=np.array(kk, dtype=float)[:, None],
                        **{k: None for k in ("on", "d_f", "d_s", "p_f", "p_s", "r_l", "r_s",
                                             "keeps", "work", "p_loc", "p_sup")})
    assert whole_counts(sch([1, 2, 64]))
    assert not whole_counts(sch([1, 2.5]))
    assert not whole_counts(sch([np.inf]))
