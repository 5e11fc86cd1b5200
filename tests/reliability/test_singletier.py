"""The fast single-tier loop and the block-wise arrivals give the event-by-event reference's
numbers bit for bit, and leave the generator where the reference leaves it."""

from __future__ import annotations

import numpy as np
import pytest
import reliability_support as rs

from clustertwin.reliability.arrivals import ArrivalChunks, Arrivals
from clustertwin.reliability.montecarlo import RunawayError, simulate, simulate_events

FIELDS = ("intervals_h", "wall_h", "work_h", "stall_h", "lost_h", "restart_h", "waiting_h",
          "interruptions", "planned", "counts")


_spec = rs.mc_spec


def _same(a, b) -> None:
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        if x is None or y is None:
            assert x is None and y is None, f
            continue
        assert x.dtype == y.dtype and x.shape == y.shape, f
        np.testing.assert_array_equal(x, y, err_msg=f)
    assert a.timeline == b.timeline
    assert a.events == b.events

def _as_reference(spec, intervals, trials: int, seed: int) -> None:
    """The fast loop's outcome and the generator it leaves are the event-by-event reference's."""
    fast_rng, ref_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    fast = simulate(spec, intervals, trials, fast_rng, count_causes=True, record=True)
    ref = simulate_events(spec, intervals, trials, ref_rng, count_causes=True, record=True)
    _same(fast, ref)
    assert fast_rng.random() == ref_rng.random()



CASES = {
    "spares": {},
    "no spares": dict(spare_nodes=0),
    "long repairs, few spares": dict(spare_nodes=1, repair_h=8.0),
    "many spares": dict(spare_nodes=9, repair_h=12.0, rates_per_h=(0.3, 0.05, 0.2)),
    "write window": dict(persist_h=0.3),
    "no planned": dict(planned_per_h=0.0),
    "wall-clock limit": dict(wall_limit_h=200.0),
    "limit after the work": dict(wall_limit_h=400.0, persist_h=0.1),
    "zero stall": dict(blocking_h=0.0, repair_h=0.0),
}


@pytest.mark.parametrize("kw", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("intervals", [[0.3, 1.0, 2.5], 0.7], ids=["grid", "one"])
@pytest.mark.parametrize("block", [40, ArrivalChunks.ROWS], ids=["blocks of 40", "blocks as run"])
def test_fast_loop_matches_the_reference_bit_for_bit(kw, intervals, block, monkeypatch):
    """Blocks of 40 events (several a run, not a whole number of generator marks) and the
    product's block size."""
    monkeypatch.setattr(ArrivalChunks, "ROWS", block)
    spec = _spec(**kw)
    fast_rng, ref_rng = np.random.default_rng(11), np.random.default_rng(11)
    fast = simulate(spec, intervals, 150, fast_rng, count_causes=True, record=True,
                    max_events=20_000)
    ref = simulate_events(spec, intervals, 150, ref_rng, count_causes=True, record=True,
                          max_events=20_000)
    _same(fast, ref)
    assert fast.events > 40                          # more than one block of 40 arrivals
    assert fast_rng.random() == ref_rng.random()   # the generator is left where it would be


@pytest.mark.parametrize("budget", [1, 7, 400])
@pytest.mark.parametrize("kw", [CASES["spares"], CASES["write window"], CASES["wall-clock limit"]],
                         ids=["spares", "write window", "wall-clock limit"])
def test_runs_of_rows_of_any_length_give_the_same_numbers(kw, budget, monkeypatch):
    """The pairs move a few rows at a time (one row per call for budget 1; 7 rows x pairs: a
    row or two on the grid, cut anywhere inside the blocks of arrivals): still the reference's
    numbers bit for bit."""
    from clustertwin.reliability import singlepairs

    monkeypatch.setattr(singlepairs, "BUDGET", budget)
    monkeypatch.setattr(ArrivalChunks, "ROWS", 40)
    spec = _spec(**kw)
    _as_reference(spec, [0.3, 1.0, 2.5], 40, seed=12)


@pytest.mark.parametrize("first", [1, 5, 16, 33, 10_000])
@pytest.mark.parametrize("kw", [CASES["spares"], CASES["many spares"], CASES["wall-clock limit"]],
                         ids=["spares", "many spares", "wall-clock limit"])
def test_a_first_block_of_any_size_gives_the_same_numbers(kw, first, monkeypatch):
    """The first block of arrivals is sized to the run (singletier.first_block); a first block
    of one event, of fewer events than the spares, off the generator marks, or past ``ROWS``
    (capped) leaves every number and the generator as the reference does."""
    from clustertwin.reliability import singletier

    monkeypatch.setattr(singletier, "first_block", lambda spec, tau: first)
    monkeypatch.setattr(ArrivalChunks, "ROWS", 40)
    spec = _spec(**kw)
    _as_reference(spec, [0.3, 1.0, 2.5], 60, seed=13)


def test_without_rewind_the_numbers_are_the_same():
    """The stage drops each generator after its run and skips the rewind: same outcome, the
    generator only further on."""
    spec = _spec()
    kept_rng, dropped_rng = np.random.default_rng(14), np.random.default_rng(14)
    kept = simulate(spec, [0.3, 1.0], 80, kept_rng, count_causes=True, record=True)
    dropped = simulate(spec, [0.3, 1.0], 80, dropped_rng, count_causes=True, record=True,
                       rewind=False)
    _same(kept, dropped)


def test_the_first_block_covers_a_short_run_and_stays_a_block():
    """A run of ~20 expected arrivals draws about what its slowest trial needs (whole marks),
    a long one a full block."""
    from clustertwin.reliability.singletier import first_block

    tau = np.array([[0.5], [2.0]])
    short = first_block(_spec(work_h=20.0, rates_per_h=(0.5, 0.3, 0.2), planned_per_h=0.0), tau)
    assert short % ArrivalChunks.MARK == 0 and 20 < short < ArrivalChunks.ROWS
    assert first_block(_spec(work_h=5000.0), tau) == ArrivalChunks.ROWS


@pytest.mark.parametrize("k,width", [(1, 7), (2, 150), (3, 40), (1, 256), (1, 5000), (3, 900),
                                     (3, 1), (2, 15), (2, 16)])
def test_running_sums_and_maxima_go_row_by_row(k, width):
    """Narrow rows (NumPy's accumulate) and wide ones (a loop over rows) alike: each row is the
    previous total combined with it, in row order, float for float; and the totals alone
    (``row_totals``: NumPy's add.reduce down the rows where they are wide) the last row."""
    from clustertwin.reliability.scratch import down_rows, row_totals

    x = np.random.default_rng(k * width).standard_exponential((k, 65, width)) * 1e3
    want_sum, want_max = x.copy(), x.copy()
    for r in range(1, 65):
        want_sum[:, r] = want_sum[:, r - 1] + x[:, r]
        want_max[:, r] = np.maximum(want_max[:, r - 1], x[:, r])
    np.testing.assert_array_equal(down_rows(np.add, x.copy()), want_sum)
    np.testing.assert_array_equal(down_rows(np.maximum, x.copy()), want_max)
    np.testing.assert_array_equal(row_totals(x.copy()), want_sum[:, -1])


def test_more_events_than_the_budget_fails_the_same_way():
    fast_rng, ref_rng = np.random.default_rng(3), np.random.default_rng(3)
    with pytest.raises(RunawayError) as fast:
        simulate(_spec(), 0.7, 20, fast_rng, max_events=70)
    with pytest.raises(RunawayError) as ref:
        simulate_events(_spec(), 0.7, 20, ref_rng, max_events=70)
    assert str(fast.value) == str(ref.value)
    assert fast_rng.random() == ref_rng.random()


def test_without_failures_the_reference_runs():
    spec = _spec(rates_per_h=(0.0, 0.0, 0.0), planned_per_h=0.0)
    _same(simulate(spec, [0.5, 1.0], 5, np.random.default_rng(), record=True),
          simulate_events(spec, [0.5, 1.0], 5, np.random.default_rng(), record=True))


@pytest.mark.parametrize("spares,repair_h", [(0, 5.0), (3, 30.0), (70, 400.0)])
def test_blocks_of_arrivals_are_the_events_one_by_one(spares, repair_h):
    """Replacement-ready times included, where the job waits for repairs and where it does not
    (the block shortcut skips the exact look-up only where no wait is possible)."""
    spec = _spec(spare_nodes=spares, repair_h=repair_h, rates_per_h=(0.6, 0.1, 0.3))
    one = Arrivals(spec, 40, np.random.default_rng(8))
    chunks = ArrivalChunks(spec, 40, np.random.default_rng(8))
    t_prev, waits = np.zeros(40), 0
    while chunks.drawn < 300:
        blk = chunks.block()
        for b in range(blk.rows):
            t, cause, planned, avail = one.next(t_prev)
            np.testing.assert_array_equal(blk.t[b], t)
            np.testing.assert_array_equal(blk.cause[b], cause)
            np.testing.assert_array_equal(blk.planned[b], planned)
            np.testing.assert_array_equal(blk.avail[b], avail)
            waits += int(np.count_nonzero(avail > t))
            t_prev = t
    assert waits > 0


@pytest.mark.parametrize("rates,planned", [((1.0, 0.0, 1.0, 2.0), 0.0), ((0.3, 1e-9, 0.2), 0.02),
                                           ((0.2, 0.1, 0.05), 0.02)],
                         ids=["shares on bin edges, one repeated", "two shares in a bin", "plain"])
def test_the_cause_table_gives_the_search_s_causes(rates, planned):
    """The causes read from the table of bins are ``searchsorted``'s, for draws on, just
    beside and between every share and bin edge."""
    from clustertwin.reliability.arrivals import CAUSE_BINS

    spec = _spec(rates_per_h=rates, needs_repair=(True,) * len(rates), planned_per_h=planned)
    chunks = ArrivalChunks(spec, 100, np.random.default_rng(4))
    cum, edges = chunks.cum, np.arange(CAUSE_BINS) / CAUSE_BINS
    near = np.concatenate([cum, np.nextafter(cum, 0.0), np.nextafter(cum, 1.0), edges,
                           np.nextafter(edges, 1.0), np.random.default_rng(5).random(6400)])
    near = near[(near >= 0.0) & (near < 1.0)]
    rng = np.random.default_rng(6)
    for _ in range(4):
        u = rng.choice(near, size=(chunks.ROWS, 100))
        want = np.minimum(np.searchsorted(cum, u, side="right"), chunks.n_causes)
        np.testing.assert_array_equal(chunks._causes(u), want)


TIER_CASES = {
    "node-local": dict(tier=dict(replicas=0)),
    "peer copy": dict(tier=dict(replicas=1)),
    "write windows": dict(tier=dict(local_persist_h=0.1), spec=dict(persist_h=0.4)),
    "no planned": dict(spec=dict(planned_per_h=0.0)),
    "wall-clock limit": dict(spec=dict(wall_limit_h=200.0)),
}


@pytest.mark.parametrize("case", TIER_CASES.values(), ids=TIER_CASES.keys())
def test_two_tier_opening_events_match_the_masked_loop(case, monkeypatch):
    """The two-tier run's unmasked opening (block arrivals, tierbulk) against the masked event
    loop with arrivals drawn one event at a time: same numbers, generator left alike."""
    from clustertwin.reliability import tiers
    from clustertwin.reliability.montecarlo import TrialLoop
    from clustertwin.reliability.tiers import TierSpec, simulate_tiers

    monkeypatch.setattr(ArrivalChunks, "ROWS", 40)                # several blocks a run
    spec = _spec(**case.get("spec", {}))
    tier = TierSpec(**{**dict(local_blocking_h=0.01, local_persist_h=0.02, local_restart_h=0.05),
                       **case.get("tier", {})})
    args = (spec, tier, [0.1, 0.3, 0.5, 1.0], [1, 4, 2, 1], 120)
    kw = dict(local_on=[True, True, True, False], count_causes=True, record=True)
    fast_rng, ref_rng = np.random.default_rng(5), np.random.default_rng(5)
    fast = simulate_tiers(*args, fast_rng, **kw)

    class PerEvent(TrialLoop):
        def __init__(self, *a, blocks=False, **k):  # noqa: ANN001, ANN002, ANN003
            super().__init__(*a, blocks=False, **k)

    monkeypatch.setattr(tiers, "TrialLoop", PerEvent)
    monkeypatch.setattr(tiers, "run_bulk", lambda *a: None)
    monkeypatch.setattr(tiers, "run_flat", lambda *a: None)
    ref = simulate_tiers(*args, ref_rng, **kw)
    _same(fast, ref)
    np.testing.assert_array_equal(fast.local_restores, ref.local_restores)
    assert fast.events > 40
    assert fast_rng.random() == ref_rng.random()
