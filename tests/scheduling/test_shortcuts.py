"""Shortcuts of issue 36 (multifactor+backfill within 1.5 times fifo's CPU) change speed, never
results: the EASY shadow found from the nodes' free-GPU counts is the shadow of the copied-state
search, a head whose cached shadow is ahead does not fit, a skipped fill would start nothing,
the size classes beside the queue stay those of its entries (and let the fill skip only entries
it would skip), the re-keyed queue is in (key, submit time, job) order, the per-run multifactor
key function gives :meth:`Multifactor.key_one`'s doubles and the fill's mask bits are the
mask's."""

from __future__ import annotations

import numpy as np
import pytest
from sched_helpers import multifactor_states

from clustertwin.scheduling import SimConfig, simulate, uniform
from clustertwin.scheduling.backfill import Backfill
from clustertwin.scheduling.dispatch import Dispatch
from clustertwin.scheduling.engine import _Run
from clustertwin.scheduling.jobs import make_workload, with_time_limits
from clustertwin.scheduling.policies import parse_policy
from clustertwin.scheduling.traces import generate

FIELDS = ("status", "first_start_s", "end_s", "run_s", "preemptions", "interruptions",
          "lost_gpu_s", "alloc_gpus", "leaf_groups", "scalable_units", "team_gpu_s")


def _mixed_cluster(tmp_path):
    from clustertwin.scheduling.cluster import from_node_list

    csv = tmp_path / "nodes.csv"
    csv.write_text("name,gpus\n" + "".join(f"n{i},{(8, 4, 8, 2)[i % 4]}\n" for i in range(24)))
    return from_node_list(csv)


def _workload(spec, jobs, seed, load=1.1):
    w = generate("philly", jobs, spec.gpus, np.random.default_rng(seed), load=load)
    return with_time_limits(w, np.random.default_rng(seed))


@pytest.mark.parametrize("placement", ["first-fit", "best-fit", "topology"])
@pytest.mark.parametrize("cluster", ["uniform", "nvl", "mixed"])
@pytest.mark.parametrize("failures", [0.0, 0.05])
def test_listed_shadow_is_the_copied_state_shadow(placement, cluster, failures, tmp_path,
                                                  monkeypatch) -> None:
    """Every shadow the free-GPU counts answer is compared with the copied-state search at the
    same moment (time and held nodes), for one-node and multi-node heads, on clusters with
    equal and mixed nodes and NVLink domains larger than a node (where topology placement
    keeps the copied-state search), with node failures; and the runs equal those with the
    copied-state search alone."""
    spec = {"uniform": uniform(24, 8), "nvl": uniform(24, 8, nvlink_domain_gpus=32),
            "mixed": _mixed_cluster(tmp_path)}[cluster]
    w = _workload(spec, 900, 4)
    cfg = SimConfig(placement=placement, failure_rate_per_node_day=failures)
    listed = Backfill._shadow_listed
    answered: list[int] = []

    def checked(self, m, mask):
        got = listed(self, m, mask)
        if got is not None:
            t, nodes, extra = self._shadow_hyp(m, mask)
            assert got[0] == t and got[2] == extra
            assert (got[1] is None) == (nodes is None)
            if nodes is not None:
                np.testing.assert_array_equal(got[1], nodes)
            answered.append(m)
        return got

    monkeypatch.setattr(Backfill, "_shadow_listed", checked)
    fast = simulate(w, spec, "fifo+backfill", cfg)
    if cluster != "nvl" or placement != "topology":
        assert answered and max(answered) > spec.max_node_gpus * 1000  # multi-node heads too
    monkeypatch.setattr(Backfill, "_shadow_listed", lambda self, m, mask: None)
    slow = simulate(w, spec, "fifo+backfill", cfg)
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    assert fast.reserved_head_checks == slow.reserved_head_checks


@pytest.mark.parametrize("policy", ["multifactor+backfill+preempt", "fifo+backfill",
                                    "sjf+backfill"])
def test_size_classes_follow_the_queue(policy, monkeypatch) -> None:
    """After every scheduling pass (arrivals, starts, re-keying, requeues from preemption and
    node failures) the size-class bytes are those of the queued jobs, in queue order."""
    spec = uniform(16, 8)
    w = _workload(spec, 600, 9)
    w = make_workload(w.names, w.submit_s, w.gpus_milli, w.duration_s, requested_s=w.requested_s,
                      teams=[w.teams[t] for t in w.team], qos=np.arange(len(w)) % 3,
                      checkpoint_s=np.full(len(w), 1800.0))
    schedule = Dispatch._schedule
    passes: list[int] = []

    def checked(self):
        schedule(self)
        assert bytes(self.qclass) == bytes(self.size_class[j] for j in self.queue)
        passes.append(len(self.queue))

    monkeypatch.setattr(Dispatch, "_schedule", checked)
    out = simulate(w, spec, policy, SimConfig(failure_rate_per_node_day=0.2))
    assert max(passes) > 20 and out.failures > 0
    if "preempt" in policy:
        assert out.preemptions.sum() > 0


@pytest.mark.parametrize("distinct", [6, 300])
def test_fill_by_size_class_is_the_per_entry_loop(distinct, monkeypatch) -> None:
    """A workload of few distinct demands (one size class each) and one of more than 255
    (the classes from the 255th up share one byte, so the scan also finds some entries the
    fill then skips): the EASY fill's runs equal those of the per-entry loop."""
    rng = np.random.default_rng(distinct)
    n = 1500
    if distinct > 255:  # shares of a GPU in steps of 1/1000 and whole GPUs
        milli = np.where(rng.uniform(size=n) < 0.6, rng.integers(1, 1000, n),
                         rng.choice([1000, 2000, 4000, 8000], n))
    else:
        milli = rng.choice([1000, 2000, 4000, 8000, 16000, 32000], n, p=[.5, .1, .15, .15, .06, .04])
    assert len(np.unique(milli)) >= distinct
    dur = rng.lognormal(7, 1.5, n)
    w = make_workload([f"j{i}" for i in range(n)], np.sort(rng.uniform(0, 2e5, n)), milli, dur,
                      requested_s=dur * rng.uniform(1, 3, n))
    spec = uniform(12, 8)
    for policy in ("fifo+backfill", "multifactor+backfill"):
        fast = simulate(w, spec, policy, SimConfig(placement="best-fit"))
        monkeypatch.setattr(Dispatch, "fast_fill", False)
        slow = simulate(w, spec, policy, SimConfig(placement="best-fit"))
        monkeypatch.setattr(Dispatch, "fast_fill", True)
        for name in FIELDS:
            np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)


def test_rekeyed_queue_is_the_tuple_order() -> None:
    """Many jobs with equal keys (same team, size and QoS, and equal ages: submitted together,
    or at different times but past the age cap) and equal submit times: the re-keyed queue is
    the sorted (key, submit time, job) tuples."""
    rng = np.random.default_rng(2)
    n = 400
    w = make_workload([f"j{i}" for i in range(n)], rng.integers(0, 5, n) * 100.0,
                      rng.choice([1000, 8000], n), np.full(n, 50.0), requested_s=np.full(n, 60.0),
                      teams=rng.choice(["a", "b", "c"], n), qos=rng.integers(0, 2, n))
    run = _Run(w, uniform(4, 8), parse_policy("multifactor:max_age_s=750"), SimConfig(), 0)
    run.ctx.usage = [3.0e5, 1.0e5, 0.0]
    run.now = 1000.0
    run.queue = rng.permutation(n).tolist()
    run._rekey()
    keys = run.order.keys(run.ctx, np.arange(n), run.now).tolist()
    want = sorted((keys[j], float(w.submit_s[j]), j) for j in range(n))
    assert run.queue == [t[2] for t in want]
    assert run.qkey == [t[0] for t in want]
    assert len(set(run.qkey)) < n // 10  # ties were there to break, across submit times too
    assert len({(k, s) for k, s, _ in want}) > len(set(run.qkey))
    assert bytes(run.qclass) == bytes(run.size_class[j] for j in run.queue)


@pytest.mark.parametrize("teams", [1, 3, 7, 8, 12])
def test_multifactor_key_function_is_key_one(teams) -> None:
    """The key function a run sets up gives :meth:`key_one`'s doubles, through usage states
    with idle teams, tiny and huge usage, and jobs older than the age cap."""
    key = None
    for order, ctx, w, now in multifactor_states("multifactor:max_age_s=3600", 300, 7, teams, 8):
        key = key or order.key_fn(ctx)   # set up once, at the first (zero-usage) state
        got = np.array([key(j, now) for j in range(len(w))])
        want = np.array([order.key_one(ctx, j, now) for j in range(len(w))])
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("cluster", ["uniform", "mixed"])
@pytest.mark.parametrize("policy", ["fifo+backfill", "multifactor+backfill", "sjf+backfill"])
def test_a_shadowed_head_does_not_fit(cluster, policy, tmp_path, monkeypatch) -> None:
    """A pass skips placing a blocked head whose cached shadow time is still ahead; each time
    it does, the placement it skips is made here and must find nothing (with node failures
    and jobs on shares of a GPU). A pooled cluster never gets there: a head that
    does not fit has more GPUs than are free, which the pass tests first."""
    spec = {"uniform": uniform(24, 8), "mixed": _mixed_cluster(tmp_path)}[cluster]
    w = _workload(spec, 900, 6)
    rng = np.random.default_rng(6)
    frac = np.where(rng.uniform(size=len(w)) < 0.2, rng.integers(100, 1000, len(w)), w.gpus_milli)
    w = make_workload(w.names, w.submit_s, frac, w.duration_s, requested_s=w.requested_s,
                      teams=[w.teams[t] for t in w.team], qos=np.arange(len(w)) % 3,
                      checkpoint_s=np.full(len(w), 1800.0))
    shadowed = Dispatch._shadowed
    skipped: list[int] = []

    def checked(self, h):
        if shadowed(self, h):
            assert self.placer.place(self.st, self.milli[h], self._mask(h)) is None
            skipped.append(h)
            return True
        return False

    monkeypatch.setattr(Dispatch, "_shadowed", checked)
    simulate(w, spec, policy, SimConfig(failure_rate_per_node_day=0.1))
    assert len(skipped) > 50


@pytest.mark.parametrize("cluster", ["uniform", "mixed", "nvl"])
@pytest.mark.parametrize("policy", ["fifo+backfill", "multifactor+backfill+preempt"])
def test_a_skipped_fill_would_start_nothing(cluster, policy, tmp_path, monkeypatch) -> None:
    """Each time a pass skips the fill because nothing in the window can fit, every entry of
    the window (more than the fill would try) is placed here off the held nodes, as the fill
    would place it, and must find nothing; on equal and mixed nodes, shares of a GPU, node
    failures. The runs equal those of the per-entry loop."""
    spec = {"uniform": uniform(24, 8), "mixed": _mixed_cluster(tmp_path),
            "nvl": uniform(24, 8, nvlink_domain_gpus=32)}[cluster]
    w = _workload(spec, 900, 8)
    rng = np.random.default_rng(8)
    frac = np.where(rng.uniform(size=len(w)) < 0.1, rng.integers(100, 1000, len(w)), w.gpus_milli)
    w = make_workload(w.names, w.submit_s, frac, w.duration_s, requested_s=w.requested_s * 30,
                      teams=[w.teams[t] for t in w.team], qos=np.arange(len(w)) % 3,
                      checkpoint_s=np.full(len(w), 1800.0))
    none_fits = Dispatch._none_fits
    skipped: list[int] = []

    def checked(self, i, stop, shadow_t, reserved):
        if not none_fits(self, i, stop, shadow_t, reserved):
            return False
        mask = self._late_mask(reserved)
        for j in self.queue[i:stop]:
            assert self.now + self.req[j] > shadow_t
            assert self.placer.place(self.st, self.milli[j], mask) is None
        skipped.append(stop - i)
        return True

    monkeypatch.setattr(Dispatch, "_none_fits", checked)
    cfg = SimConfig(placement="topology", failure_rate_per_node_day=0.05)
    fast = simulate(w, spec, policy, cfg)
    assert len(skipped) > 20
    monkeypatch.setattr(Dispatch, "fast_fill", False)
    slow = simulate(w, spec, policy, cfg)
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)


def test_late_mask_bits_are_the_mask() -> None:
    """The bit set the fill hands to the placement with the nodes off the held ones is the
    one the placement would build from the array itself."""
    spec = uniform(70, 8)
    w = _workload(spec, 50, 1)
    run = _Run(w, spec, parse_policy("fifo+backfill"), SimConfig(), 0)
    rng = np.random.default_rng(3)
    for held in (0, 1, 2, 9, 70):
        reserved = np.zeros(spec.nodes, dtype=bool)
        reserved[rng.choice(spec.nodes, held, replace=False)] = True
        late = run._late_mask(reserved)
        want = int.from_bytes(np.packbits(late, bitorder="little").tobytes(), "little")
        assert run._late_bits(reserved) == want
        fresh = type(run.placer)()
        assert run.placer._bits(late) == fresh._bits(late) == want
    assert run._late_bits(None) == -1 and run._late_mask(None) is None
