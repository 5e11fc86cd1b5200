"""The accumulator: bounded memory whatever the log's length, points thinned, restarts kept."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from clustertwin.track.records import Record
from clustertwin.track.stream import POINTS_MAX, Accumulator
from track.helpers import plan_stub as _plan


def _peak_reading(path) -> tuple[int, object]:
    from clustertwin.track.core import read_history
    from clustertwin.track.detect import items, open_log

    fmt, st = open_log(path)
    tracemalloc.start()
    try:
        h = read_history([(str(path), fmt, items(path, fmt, st), st)], _plan(), None)
        return tracemalloc.get_traced_memory()[1], h
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_log(tmp_path):
    """Python and numpy allocations while reading 30,000 and 90,000 lines (10 and 30 MB): the
    peak is the block being parsed, not the log."""
    from clustertwin.track.synthetic import write_big_log

    peaks = []
    for n in (30_000, 90_000):
        p = tmp_path / f"run-{n}.log"
        write_big_log(str(p), n, restart_every=20_000)
        peak, h = _peak_reading(p)
        peaks.append(peak)
        assert len(h.restarts) == n // 20_000
        assert len(h.points) <= POINTS_MAX
    assert peaks[1] < 1.2 * peaks[0] + 2e6, peaks
    assert peaks[1] < 120e6, peaks


def test_points_are_thinned_and_segments_exact():
    acc = Accumulator(tokens_per_step=100.0, seq_len=10)
    for i in range(1, 3 * POINTS_MAX):
        acc.add(Record(step=i, t=1e9 + 10.0 * i, step_s=10.0))
    h = acc.finish()
    assert len(h.points) <= POINTS_MAX
    assert h.segments == ((1e9 + 10.0, 1, 100.0, 1e9 + 10.0 * (3 * POINTS_MAX - 1), 3 * POINTS_MAX - 1,
                           100.0 * (3 * POINTS_MAX - 1)),)
    assert h.step_time() == pytest.approx(10.0, rel=0.01)


def test_gap_and_rollback_make_restarts():
    acc = Accumulator(tokens_per_step=1.0, seq_len=1)
    for i in range(1, 11):
        acc.add(Record(step=i, t=1000.0 + i, step_s=1.0))
    acc.add(Record(step=11, t=1000.0 + 11 + 3600, step_s=1.0))     # an hour of silence: a gap
    acc.add(Record(step=8, t=1000.0 + 11 + 7200, step_s=1.0))      # back to step 8: a rollback
    acc.add(Record(step=9, t=1000.0 + 12 + 7200, step_s=1.0))
    h = acc.finish()
    assert [r.why for r in h.restarts] == ["gap", "step went back"]
    assert len(h.segments) == 3 and h.tokens_done == 9.0


def test_loss_spikes_and_untimed_records():
    acc = Accumulator(tokens_per_step=1.0, seq_len=1)
    loss = np.full(200, 2.0) + np.linspace(0, 0.01, 200)
    loss[150] = 9.0
    for i in range(200):
        acc.add(Record(step=i + 1, t=1e6 + i, step_s=1.0, loss=float(loss[i])))
    acc.add(Record(step=201, t=None))
    h = acc.finish()
    assert h.n_spikes == 1 and h.spikes[0][1] == 151
    assert h.untimed == 1


def test_coarse_log_rows_that_vary_are_not_restarts():
    """Hourly rows without a step time, 10-20% apart in progress: no restarts; a day's silence is one."""
    acc = Accumulator(tokens_per_step=1.0, seq_len=1)
    step, t = 0, 0.0
    for i in range(48):
        step += 600 if i % 3 else 520
        t += 3600.0
        acc.add(Record(step=step, t=t, tokens=float(step)))
    acc.add(Record(step=step + 600, t=t + 86400.0, tokens=float(step + 600)))
    h = acc.finish()
    assert [r.why for r in h.restarts] == ["gap"]
