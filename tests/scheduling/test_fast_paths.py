"""The scheduler's fast paths (issue 25) change speed, never results: the vector scan behind a
blocked EASY head gives the run of the per-entry loop, and a multifactor key computed for one
job is bit for bit the key of the vector computation. Checked on synthetic loads deep enough
to queue and on the shipped traces."""

from __future__ import annotations

import bisect

import numpy as np
import pytest
from sched_helpers import multifactor_states

from clustertwin.scheduling import SimConfig, simulate, uniform
from clustertwin.scheduling.dispatch import Dispatch
from clustertwin.scheduling.jobs import with_time_limits
from clustertwin.scheduling.traces import generate, load_trace

POLICIES = ["fifo+backfill", "sjf+backfill", "multifactor+backfill",
            "multifactor+backfill+preempt", "priority+backfill"]
FIELDS = ("status", "first_start_s", "end_s", "run_s", "preemptions", "interruptions",
          "lost_gpu_s", "alloc_gpus", "leaf_groups", "scalable_units", "team_gpu_s")


def _churn_step(st, placer, spec, rng, running, down, take_p, sizes) -> None:
    """One random event on ``st``: place and take a job of one of ``sizes`` GPU units (chance
    ``take_p``), give back a running one, fail an idle node, or repair a failed one."""
    r = rng.uniform()
    if r < take_p:
        a = placer.place(st, int(rng.choice(sizes)))
        if a is not None:
            st.take(a)
            running.append(a)
    elif r < 0.9 and running:
        st.give(running.pop(int(rng.integers(len(running)))))
    elif r < 0.95:
        node = int(rng.integers(spec.nodes))
        if not any(x[0] == node for a in running for x in a):
            st.fail(node)
            down.add(node)
    elif down:
        st.repair(down.pop())


def _same_runs(w, spec, policy, cfg, monkeypatch) -> None:
    fast = simulate(w, spec, policy, cfg)
    monkeypatch.setattr(Dispatch, "fast_fill", False)
    slow = simulate(w, spec, policy, cfg)
    monkeypatch.setattr(Dispatch, "fast_fill", True)
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    assert (fast.events, fast.end_time_s, fast.reserved_head_checks) == \
        (slow.events, slow.end_time_s, slow.reserved_head_checks)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("placement,depth", [("topology", 100), ("first-fit", None)])
def test_fast_fill_is_the_per_entry_loop(policy, placement, depth, monkeypatch) -> None:
    spec = uniform(24, 8, nvlink_domain_gpus=8)
    w = generate("philly", 700, spec.gpus, np.random.default_rng(3), load=1.1)
    w = with_time_limits(w, np.random.default_rng(0))
    cfg = SimConfig(placement=placement, scan_depth=depth)
    run = simulate(w, spec, policy, cfg)
    assert np.nanmean(run.first_start_s - w.submit_s) > 0  # jobs did queue: the scan ran
    _same_runs(w, spec, policy, cfg, monkeypatch)


@pytest.mark.parametrize("name,nodes", [("gavel", 64), ("tiresias", 2), ("pollux:2", 4)])
def test_fast_fill_on_the_shipped_traces(name, nodes, traces, monkeypatch) -> None:
    w = load_trace(name)
    if np.isnan(w.requested_s).any():
        w = with_time_limits(w, np.random.default_rng(0))
    _same_runs(w, uniform(nodes, 8), "multifactor+backfill", SimConfig(), monkeypatch)


@pytest.mark.parametrize("teams", [1, 2, 3, 4, 5, 7, 8, 9, 12])
def test_multifactor_key_of_one_job_is_the_vector_key(teams) -> None:
    """Also the team factors from the usage list: Python sums and divisions below 8 teams,
    NumPy's from 8 on; both must be NumPy's doubles exactly."""
    for order, ctx, w, now in multifactor_states("multifactor", 400, 5, teams, 6):
        jobs = np.arange(len(w))
        vector = order.keys(ctx, jobs, now)
        one = np.array([order.key_one(ctx, int(j), now) for j in jobs])
        assert vector.tobytes() == one.tobytes()


def test_idle_node_count_makes_the_whole_node_shortcut_exact(tmp_path) -> None:
    """Placement answers "no" for a whole largest node or a multi-node job straight from the
    running count of idle GPUs. That is exact only while the count is the GPUs of the up nodes
    with every GPU free; checked through random starts, ends, failures and repairs on a mixed
    cluster, with the place() answer compared to the candidate search it skips."""
    from clustertwin.scheduling.cluster import from_node_list
    from clustertwin.scheduling.placement import get_placement
    from clustertwin.scheduling.state import WHOLE, ClusterState

    csv = tmp_path / "nodes.csv"
    csv.write_text("name,gpus\n" + "".join(f"n{i},{(8, 4, 2, 6)[i % 4]}\n" for i in range(24)))
    spec = from_node_list(csv)
    st = ClusterState(spec)
    placer = get_placement("first-fit")
    rng = np.random.default_rng(11)
    running, down, checked = [], set(), 0
    for _ in range(600):
        _churn_step(st, placer, spec, rng, running, down, 0.5, [s * WHOLE for s in (1, 2, 4, 6, 8, 12, 20)])
        idle = (st.full == st.node_gpus) & st.up
        assert st.idle_node_gpus == int(st.node_gpus[idle].sum())
        assert (st.full_l, st.up_l) == (st.full.tolist(), st.up.tolist())  # the list mirrors
        mask = rng.uniform(size=spec.nodes) < 0.7
        for k in (st.max_node_gpus, st.max_node_gpus + 4, 30):
            for m in (None, mask):
                within = np.ones(spec.nodes, dtype=bool) if m is None else m
                whole = (st.full == st.node_gpus) & within
                fits = bool((st.full[within] >= k).any()) if k <= st.max_node_gpus \
                    else int(st.node_gpus[whole].sum()) >= k
                assert (placer.place(st, k * WHOLE, m) is not None) == fits
                checked += 1
    assert checked == 600 * 6


@pytest.mark.parametrize("policy", ["fifo+backfill", "multifactor+backfill"])
@pytest.mark.parametrize("depth", [4, 12])
def test_fresh_entry_pass_is_the_full_pass_through_failures(policy, depth, monkeypatch) -> None:
    """A pass after one that started nothing tries only the entries queued since (while the
    free GPUs are unchanged); node failures and repairs change them in between, and a head
    that starts before the next head is blocked shortens that pass's window. Same run as the
    per-entry loop, and the shortcut did run."""
    from clustertwin.scheduling.dispatch import Dispatch as D

    spec = uniform(24, 8, nvlink_domain_gpus=8)
    w = generate("philly", 900, spec.gpus, np.random.default_rng(11), load=1.2)
    w = with_time_limits(w, np.random.default_rng(1))
    cfg = SimConfig(placement="topology", failure_rate_per_node_day=0.5, repair_s=4 * 3600.0,
                    scan_depth=depth)
    calls = []
    original = D._fill_fresh
    monkeypatch.setattr(D, "_fill_fresh", lambda self: calls.append(original(self)) or calls[-1])
    _same_runs(w, spec, policy, cfg, monkeypatch)
    assert any(calls)


@pytest.mark.parametrize("placement", ["first-fit", "best-fit", "topology"])
def test_listed_node_is_the_array_scans_node(placement, tmp_path) -> None:
    """Placement of k whole GPUs on one node reads the state's per-count node bit sets instead
    of scanning every node: the same node as the array scan's ``pick_node`` (first-fit's lowest
    index, best-fit's first minimum), with no mask, a narrow mask (backfill's held nodes) and a
    wide one (reservations), through starts, ends, failures and repairs on a mixed cluster
    (and the copies backfill makes); the sets always match the per-node counts."""
    from clustertwin.scheduling.cluster import from_node_list
    from clustertwin.scheduling.placement import get_placement
    from clustertwin.scheduling.state import WHOLE, ClusterState, copy_state

    csv = tmp_path / "nodes.csv"
    csv.write_text("name,gpus\n" + "".join(f"n{i},{(8, 4, 2, 6)[i % 4]}\n" for i in range(80)))
    spec = from_node_list(csv)
    st = ClusterState(spec)
    placer = get_placement(placement)
    rng = np.random.default_rng(5)
    running, down, answered = [], set(), 0
    for step in range(700):
        _churn_step(st, placer, spec, rng, running, down, 0.55, [s * WHOLE for s in (1, 2, 4, 6, 8)])
        if step % 50 == 0:
            st = copy_state(st)  # the hypothetical copies backfill and preemption make
        assert [sum(1 << n for n in range(spec.nodes) if st.full_l[n] == f) for f in range(9)] == st.by_full
        narrow = np.ones(spec.nodes, dtype=bool)
        narrow[rng.choice(spec.nodes, 3, replace=False)] = False
        wide = rng.uniform(size=spec.nodes) < 0.2
        for k in range(1, 9):
            for m in (None, narrow, wide):
                ok = st.full >= k
                if m is not None:
                    ok = ok & m
                cand = ok.nonzero()[0]
                want = int(placer.pick_node(st, cand, k)) if cand.size else -1
                got = placer._listed_node(st, k, m)
                if got is not None:
                    answered += 1
                    assert got == want, (step, k)
    assert answered == 700 * 8 * 3


def test_queue_position_is_the_tuple_order() -> None:
    """The queue keeps jobs and keys in two lists; an entry's place is where the tuple
    (key, submit time, job) sorts, ties on the key broken by submit time, then job. Checked
    against a sorted list of tuples with many equal keys and submit times, entries added and
    removed in random order."""
    from clustertwin.scheduling.runstate import RunState

    class Queue:  # the run's queue fields and methods alone
        _queue_pos = RunState._queue_pos
        _queue_add = RunState._queue_add

    rng = np.random.default_rng(8)
    n = 600
    submit = rng.integers(0, 40, n).astype(float).tolist()
    keys = (rng.integers(0, 12, n) * 0.5).tolist()
    keys[::7] = [-0.0] * len(keys[::7])  # -0.0 and 0.0 compare equal in both forms
    rs = Queue()
    rs.queue, rs.qkey, rs.submit = [], [], submit
    tuples: list[tuple[float, float, int]] = []
    for j in rng.permutation(n).tolist():
        rs._queue_add(keys[j], j)
        bisect.insort(tuples, (keys[j], submit[j], j))
        if rng.uniform() < 0.2:
            k = int(rng.integers(len(tuples)))
            assert rs._queue_pos(tuples[k][0], tuples[k][2]) == k
            del tuples[k], rs.queue[k], rs.qkey[k]
    assert rs.queue == [t[2] for t in tuples]
    assert rs.qkey == [t[0] for t in tuples]


def test_ends_in_order_reads_the_heap_sorted_without_stale_entries() -> None:
    """Running attempts' ends live in a heap with stale entries (attempts that ended, or jobs
    requeued and started again); the shadow computation reads the live ones earliest first,
    ties by job, as the sorted list it replaced did."""
    import heapq
    from types import SimpleNamespace

    from clustertwin.scheduling.backfill import Backfill
    from clustertwin.scheduling.simtypes import QUEUED, RUNNING

    rng = np.random.default_rng(4)
    n = 300
    epoch = [0] * n
    status = [QUEUED] * n
    ends: list[tuple[float, int, int]] = []
    for _ in range(2000):
        j = int(rng.integers(n))
        if status[j] == RUNNING and rng.uniform() < 0.5:
            status[j] = QUEUED  # ended or requeued: its entry goes stale
            epoch[j] += int(rng.integers(0, 2))
        else:
            epoch[j] += 1
            status[j] = RUNNING
            heapq.heappush(ends, (float(rng.integers(0, 50)), j, epoch[j]))
    run = SimpleNamespace(run_ends=ends, epoch=epoch, status=status)
    live = sorted((t, j) for t, j, ep in ends if epoch[j] == ep and status[j] == RUNNING)
    assert list(Backfill._ends_in_order(run)) == live
    assert len(live) > 50


def test_whole_gpu_counts_follow_the_gpus() -> None:
    """Take and give move a node's count of fully free GPUs by the GPU count of a whole-GPU
    entry (and store 0 / WHOLE) instead of recounting: the counts and bit sets stay those of
    the GPUs through random whole and shared-GPU jobs, failures and repairs."""
    from clustertwin.scheduling.placement import get_placement
    from clustertwin.scheduling.state import WHOLE, ClusterState

    spec = uniform(12, 8, nvlink_domain_gpus=8)
    st = ClusterState(spec)
    placer = get_placement("best-fit")
    rng = np.random.default_rng(6)
    running: list = []
    down: set[int] = set()
    for _ in range(1500):
        _churn_step(st, placer, spec, rng, running, down, 0.5, [250, 500, 1000, 2000, 4000, 8000, 16000])
        counted = (st.gfree == WHOLE).sum(axis=1).tolist()
        assert st.full_l == counted == st.full.tolist()
        assert st.by_full == [sum(1 << x for x in range(spec.nodes) if counted[x] == f)
                              for f in range(9)]
