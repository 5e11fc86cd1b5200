"""Per-request limits of the planning processes: the memory cap and the wall-clock limit stop
one worker (the slot starts a new one) without touching the others; the bounded queue answers
503 with Retry-After only when full; cache hits and duplicates of a plan in flight need no slot."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from clustertwin.io import read_document
from clustertwin.scenario import DEFAULT_SCENARIO
from clustertwin.serve.guard import HttpError
from tests.procs import ppid, state


def _doc(seed: int | None = None, **cluster: object) -> dict:
    doc = json.loads(json.dumps(read_document(DEFAULT_SCENARIO), default=str))
    if seed is not None:
        doc["reliability"]["seed"] = seed
    doc["cluster"].update(cluster)
    return doc


@pytest.fixture(scope="module")
def engine():
    from clustertwin.serve.engine import Engine

    return Engine()


def _runner(engine, **kw):
    from clustertwin.serve.runner import Runner

    return Runner(engine, **kw)


def _vm_peak_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmPeak:"):
                return int(line.split()[1]) / 1024
    return 0.0


def test_a_request_past_the_memory_cap_is_422_and_the_worker_is_replaced(engine):
    """A million-GPU site's floor plan under a 640 MiB cap: the plan itself is small (cables are
    counted in closed form, issue 36), but drawing the floor places the whole site (every device
    named and racked, every link of the multi-hall site routed for the inter-hall trunks), well
    past the cap: the request is told which limit, the worker is replaced, the next plan is
    answered. (A spare count past the installed nodes, the old trigger, is now refused by
    validate before any worker runs.)"""
    runner = _runner(engine, workers=1, memory_mb=640)
    try:
        first_pid = runner.slots[0].worker.proc.pid
        big = _doc(gpus=1_000_000)
        answer = asyncio.run(runner.plan(big))          # the plan fits under the cap
        assert answer.doc["design"]["gpus"] > 990_000
        assert runner.slots[0].worker.proc.pid == first_pid
        with pytest.raises(HttpError) as exc:
            asyncio.run(runner.file(big, "floor-plan.svg"))
        assert exc.value.status == 422
        assert "640 MiB memory limit" in str(exc.value) and "MemoryError" not in str(exc.value)
        assert runner.slots[0].worker.proc.pid != first_pid and runner.slots[0].restarts == 1
        answer = asyncio.run(runner.plan(_doc(seed=41)))
        assert answer.doc["training"]["days"] > 0
        assert _vm_peak_mb(runner.slots[0].worker.proc.pid) <= 640
    finally:
        runner.close()


def test_a_plan_past_its_time_is_stopped_and_answered_503_naming_the_limit(engine):
    runner = _runner(engine, workers=1, timeout_s=0.05)
    try:
        runner.slots[0].warm_answer()  # started: only the plan itself is timed
        pid = runner.slots[0].worker.proc.pid
        t0 = time.perf_counter()
        with pytest.raises(HttpError) as exc:
            asyncio.run(runner.plan(_doc(seed=42)))
        assert exc.value.status == 503 and exc.value.headers.get("Retry-After", "").isdigit()
        assert "0.05 s limit" in str(exc.value) and time.perf_counter() - t0 < 10
        assert runner.slots[0].restarts == 1 and runner.slots[0].worker.proc.pid != pid
    finally:
        runner.close()


def test_the_queue_is_bounded_and_says_when_to_retry(engine):
    """One worker, one place in the queue: of four different plans at once two are answered
    and two get 503 with Retry-After; a cached plan is answered meanwhile without a slot;
    three requests for one scenario are planned once."""
    runner = _runner(engine, workers=1, queue_max=1, timeout_s=120)

    async def go():
        cached = await runner.plan(_doc(seed=50))
        misses = engine.misses
        same = [runner.plan(_doc(seed=51)) for _ in range(3)]
        await asyncio.sleep(0)
        burst = [runner.plan(_doc(seed=s)) for s in (52, 53, 54)]
        tasks = [asyncio.ensure_future(c) for c in (*same, *burst)]
        await asyncio.sleep(0.05)
        t0 = time.perf_counter()
        hit = await runner.plan(_doc(seed=50))  # while the worker is busy
        hit_s = time.perf_counter() - t0
        done = await asyncio.gather(*tasks, return_exceptions=True)
        return cached, hit, hit_s, done, engine.misses - misses

    try:
        cached, hit, hit_s, done, planned = asyncio.run(go())
    finally:
        runner.close()
    assert hit is cached and hit_s < 1.0
    same, burst = done[:3], done[3:]
    assert all(not isinstance(a, Exception) for a in same) and same[0] is same[1] is same[2]
    refused = [e for e in burst if isinstance(e, HttpError)]
    assert len(refused) == 2 and all(e.status == 503 and int(e.headers["Retry-After"]) >= 1 for e in refused)
    assert planned == 2  # seed 51 once, and the burst's one admitted plan


def test_a_sweep_past_its_time_is_stopped_and_says_which_limit():
    """The page's sweep runs in its own capped process; past its wall-clock limit it is killed
    and the job says so (the server's threads and other sweeps are untouched)."""
    from clustertwin.serve.engine import doc_from_yaml
    from clustertwin.serve.sweeps import SweepBoard
    from clustertwin.sweep.study import build

    board = SweepBoard((), memory_mb=1024, timeout_s=0.3)
    sw = build(doc_from_yaml(DEFAULT_SCENARIO.read_text()), {"reliability.seed": [1, 2, 3]})
    job = board.start(sw, "local")
    deadline = time.monotonic() + 30
    while not job.finished:
        assert time.monotonic() < deadline, "the sweep was not stopped"
        time.sleep(0.05)
    board.close()
    assert "0.3 s limit" in job.error and job.rows is None and not board._procs


def test_a_stopped_sweep_leaves_no_pool_worker_behind():
    """Stopping a sweep kills its process group: the pool the sweep process started goes with
    it (killed alone, the sweep process left its workers blocked on their pipes for good)."""
    import os

    from clustertwin.serve.engine import doc_from_yaml
    from clustertwin.serve.sweeps import SweepBoard
    from clustertwin.sweep.study import build

    board = SweepBoard((), memory_mb=1024, timeout_s=120)
    sw = build(doc_from_yaml(DEFAULT_SCENARIO.read_text()), {"reliability.seed": list(range(1, 41))})
    job = board.start(sw, "local")
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while not workers:  # the pool's workers: the sweep process's children
        assert time.monotonic() < deadline and not job.finished, "the sweep's pool never started"
        time.sleep(0.05)
        sweeps = {p.pid for p in list(board._procs)}
        workers = [int(p) for p in os.listdir("/proc") if p.isdigit() and ppid(int(p)) in sweeps]
    board.cancel(job)
    board.close()
    left = workers
    while left and time.monotonic() < deadline:   # killed orphans may stay zombies: not running
        left = [pid for pid in workers if state(pid) not in ("Z", "X", "gone")]
        time.sleep(0.05)
    assert job.error == "cancelled" and not left, f"left running: {left}"


def test_workers_end_when_the_server_is_killed(tmp_path):
    """kill -9 of `clustertwin serve` leaves no worker behind (a forked sibling may hold the
    server's end of a worker's pipe, so the workers watch their parent instead)."""
    import os
    import signal
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = [sys.executable, "-m", "clustertwin.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--workers", "2", "--db", str(tmp_path / "s.sqlite3")]
    server = subprocess.Popen(exe, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()  # the "clustertwin serve: http://..." line, after start-up
        assert "clustertwin serve" in line, line
        deadline = time.monotonic() + 30
        kids: list[int] = []
        while len(kids) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            kids = [int(p) for p in os.listdir("/proc") if p.isdigit() and ppid(int(p)) == server.pid]
        assert len(kids) >= 2, kids
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(10)
    deadline = time.monotonic() + 15
    while any(os.path.exists(f"/proc/{k}") and state(k) != "Z" for k in kids):
        assert time.monotonic() < deadline, f"workers {kids} outlived the server"
        time.sleep(0.2)
