"""The cycle collector is paused while a run replays (issue 25, speed) and is left as it was:
enabled after a run (also one that raises, also runs in several threads at once), still
disabled when the caller had disabled it."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

from clustertwin.errors import UsageError
from clustertwin.scheduling import engine, simulate, uniform
from clustertwin.scheduling.jobs import with_time_limits
from clustertwin.scheduling.traces import generate


def _workload(n=300, seed=3):
    spec = uniform(8, 8)
    w = generate("philly", n, spec.gpus, np.random.default_rng(seed), load=1.1)
    return with_time_limits(w, np.random.default_rng(0)), spec


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_collector_is_off_during_a_run_and_back_after(collector_on, monkeypatch) -> None:
    seen = []
    go = engine._Run.go

    def spy(self):
        seen.append(gc.isenabled())
        return go(self)

    monkeypatch.setattr(engine._Run, "go", spy)
    w, spec = _workload()
    simulate(w, spec, "multifactor+backfill")
    assert seen == [False]
    assert gc.isenabled()


def test_collector_comes_back_after_an_error(collector_on, monkeypatch) -> None:
    def boom(self):
        raise UsageError([])

    monkeypatch.setattr(engine._Run, "go", boom)
    w, spec = _workload(50)
    with pytest.raises(UsageError):
        simulate(w, spec, "fifo")
    assert gc.isenabled()


def test_a_caller_that_disabled_the_collector_keeps_it_disabled() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        w, spec = _workload(50)
        simulate(w, spec, "fifo")
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_runs_in_threads_leave_the_collector_enabled(collector_on) -> None:
    w, spec = _workload(200)
    errors = []

    def run(policy):
        try:
            simulate(w, spec, policy)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(p,)) for p in
               ("fifo", "fifo+backfill", "multifactor+backfill", "sjf+backfill") * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert gc.isenabled()
    assert engine._gc_paused[0] == 0
