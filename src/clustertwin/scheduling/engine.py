"""The discrete-event engine: a heap of plain ``(time, seq, kind, payload)`` tuples.

Events at the same instant are all applied before one scheduling pass runs, ends before
failures before arrivals (``kind`` orders them), so capacity freed at time t is visible to jobs
arriving at t. A run is a pure function of (workload, cluster, policy, config, seed).

Semantics (see also :mod:`clustertwin.scheduling.policies`):

* gang: a job starts with all its GPUs or not at all;
* a run attempt lasts ``min(remaining work + restart overhead, time limit)``; a job that reaches
  its limit ends as ``timeout`` (Slurm TIMEOUT);
* preemption and node failure requeue a job; work since its last checkpoint is lost (all of it
  when the job cannot checkpoint); the requeued job keeps its queue position;
* dependencies: ``afterany`` waits for the other job to end, ``afterok`` for it to complete;
  when an ``afterok`` dependency ends otherwise the job is cancelled (Slurm
  ``kill_invalid_depend``);
* reservations hold a block of nodes over ``[start, end)``; other jobs may use those nodes only
  if their time limit ends before the start; members run only inside it;
* per-team GPU limits hold a team's jobs (they do not block other teams' jobs).
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import numpy as np

from clustertwin.errors import Problem, UsageError
from clustertwin.scheduling.cluster import ClusterSpec
from clustertwin.scheduling.jobs import Workload
from clustertwin.scheduling.placement import Placement, Topology, get_placement
from clustertwin.scheduling.policies import PolicySpec, parse_policy
from clustertwin.scheduling.state import WHOLE, Alloc, ClusterState

# event kinds, in the order they apply at one instant
END, REPAIR, FAIL, WAKE, ARRIVE = 0, 1, 2, 3, 4
# job status
FUTURE, HELD, QUEUED, RUNNING, DONE, TIMEOUT, CANCELLED = range(7)
STATUS_NAMES = ("not_submitted", "held", "queued", "running", "completed", "timeout", "cancelled")

#: Jobs the main loop considers per pass beyond the head: Slurm's ``default_queue_depth``
#: default (slurm.conf SchedulerParameters; scheduling-anchors.md section 4).
DEFAULT_SCAN_DEPTH = 100


@dataclass(frozen=True)
class Reservation:
    """A block of ``gpus`` GPUs (whole nodes, placed compactly) held over [start_s, end_s).
    Jobs whose ``reservation`` index points here run only inside it."""

    name: str
    start_s: float
    end_s: float
    gpus: int


@dataclass(frozen=True)
class SimConfig:
    """Run options. Times in seconds; rates per node per day."""

    placement: str = "best-fit"
    scan_depth: int | None = DEFAULT_SCAN_DEPTH
    failure_rate_per_node_day: float = 0.0
    repair_s: float = 4 * 3600.0
    restart_s: float = 0.0
    shares: dict[str, float] = field(default_factory=dict)
    team_limits_gpus: dict[str, float] = field(default_factory=dict)
    reservations: tuple[Reservation, ...] = ()
    horizon_s: float = math.inf
    record_timeline: bool = True


@dataclass
class RunOutput:
    """Raw per-job and over-time results of one run (metrics are computed from these)."""

    policy: str
    placement: str
    status: np.ndarray
    first_start_s: np.ndarray
    end_s: np.ndarray
    run_s: np.ndarray
    preemptions: np.ndarray
    interruptions: np.ndarray
    lost_gpu_s: np.ndarray
    lost_preempt_gpu_s: np.ndarray
    alloc_gpus: np.ndarray
    leaf_groups: np.ndarray
    scalable_units: np.ndarray
    timeline: dict[str, np.ndarray]
    down_gpu_s: float
    failures: int
    end_time_s: float
    team_gpu_s: np.ndarray
    shares: np.ndarray
    reserved_head_checks: list[tuple[int, float, float]]
    events: int


class _Ctx:
    """What orders may read: the workload, team usage and shares, capacity."""

    def __init__(self, w: Workload, shares: np.ndarray, capacity_milli: int) -> None:
        self.w = w
        self.shares = shares
        self.capacity_milli = capacity_milli
        self.team_usage = np.zeros(len(w.teams))


def _shares(w: Workload, cfg: SimConfig) -> np.ndarray:
    s = np.array([float(cfg.shares.get(t, 1.0 if not cfg.shares else 0.0)) for t in w.teams])
    if len(s) and s.sum() <= 0:
        s = np.ones(len(s))
    s = np.maximum(s, 1e-9)
    return s / s.sum() if len(s) else s


def simulate(w: Workload, spec: ClusterSpec, policy: PolicySpec | str,
             cfg: SimConfig | None = None, seed: int = 0) -> RunOutput:
    """Replay ``w`` on ``spec`` under ``policy``. Requested limits must be filled
    (:func:`clustertwin.scheduling.jobs.with_time_limits`)."""
    cfg = cfg or SimConfig()
    pol = parse_policy(policy) if isinstance(policy, str) else policy
    if len(w) and np.isnan(w.requested_s).any():
        raise UsageError([Problem("workload", "requested_s", "time limits missing; call "
                                  "with_time_limits first")])
    return _Run(w, spec, pol, cfg, seed).go()


class _Run:
    def __init__(self, w: Workload, spec: ClusterSpec, pol: PolicySpec, cfg: SimConfig,
                 seed: int) -> None:
        self.w, self.spec, self.pol, self.cfg = w, spec, pol, cfg
        self.rng = np.random.default_rng(np.random.SeedSequence(seed))
        self.order = pol.build()
        self.st = ClusterState(spec)
        self.placer: Placement = get_placement(cfg.placement)
        n = len(w)
        self.n = n
        self.shares = _shares(w, cfg)
        self.ctx = _Ctx(w, self.shares, self.st.capacity_milli)
        # per-job python lists: fast scalar access in the hot loop
        self.milli = w.gpus_milli.tolist()
        self.req = w.requested_s.tolist()
        self.ck = w.checkpoint_s.tolist()
        self.submit = w.submit_s.tolist()
        self.team = w.team.tolist()
        self.rank = list(zip(w.qos.tolist(), w.priority.tolist(), strict=True))
        self.resv_of = w.reservation.tolist()
        self.status = [FUTURE] * n
        self.remaining = w.duration_s.astype(float).tolist()
        self.first_start = [math.nan] * n
        self.end = [math.nan] * n
        self.run_start = [0.0] * n
        self.run_len = [0.0] * n
        self.run_total = [0.0] * n
        self.epoch = [0] * n
        self.alloc: list[Alloc | None] = [None] * n
        self.alloc_milli = [0] * n
        self.preempt = [0] * n
        self.interrupt = [0] * n
        self.lost = [0.0] * n
        self.lost_p = [0.0] * n
        self.leafs = [0] * n
        self.sus = [0] * n
        self.waiters: dict[int, list[int]] = {}
        for j, ds in w.deps.items():
            for _k, d in ds:
                self.waiters.setdefault(d, []).append(j)
        self.static_keys = None if self.order.dynamic else \
            self.order.keys(self.ctx, np.arange(n), 0.0).tolist()
        self.queue: list[tuple[float, float, int]] = []
        self.running: set[int] = set()
        self.run_ends: list[tuple[float, int]] = []  # (expected end at limit, job), sorted
        self.rank_count: dict[tuple[int, float], int] = {}  # running jobs per (QoS, priority)
        self.on_node: dict[int, set[int]] | None = {} if cfg.failure_rate_per_node_day > 0 else None
        self.team_milli = np.zeros(len(w.teams))
        self.team_gpu_s = np.zeros(len(w.teams))
        self.team_limit = {w.teams.index(t): g * WHOLE for t, g in cfg.team_limits_gpus.items()
                           if t in w.teams}
        self.heap: list[tuple[float, int, int, Any]] = []
        self.seq = count()
        self.now = 0.0
        self.last_usage_t = 0.0
        self.next_calc = 0.0
        self.version = 0
        self.shadow: tuple[int, int, float, np.ndarray | None, int] | None = None
        self.head_checks: list[tuple[int, float, float]] = []
        self.preempt_tried: tuple[int, int] | None = None
        self.in_pass = False
        self.deferred: list[tuple[float, float, int]] = []
        self.down_gpu_s = 0.0
        self.failures = 0
        self.outstanding = n
        self.tl: dict[str, list[float]] = {"t": [], "alloc_gpus": [], "up_gpus": [],
                                           "queue": [], "fragmentation": []}
        self._setup_reservations()

    # ------------------------------------------------------------------ setup
    def _setup_reservations(self) -> None:
        n = self.spec.nodes
        self.r_id = np.full(n, -1, dtype=np.int64)
        self.r_start = np.full(n, math.inf)
        self.r_end = np.full(n, -math.inf)
        self.r_starts_sorted: list[float] = []
        if not self.cfg.reservations:
            return
        if self.spec.pooled:
            raise UsageError([Problem("--reserve", "", "reservations need a cluster of nodes")])
        topo = Topology()
        free = np.ones(n, dtype=bool)
        for i, r in enumerate(self.cfg.reservations):
            idle = np.flatnonzero(free)
            if int(self.st.node_gpus[idle].sum()) < r.gpus:
                raise UsageError([Problem("--reserve", r.name, f"{r.gpus} GPUs do not fit next to "
                                          "the other reservations")])
            nodes = topo.pick_nodes(self.st, idle, r.gpus) if r.gpus > self.st.max_node_gpus \
                else [int(idle[0])]
            free[nodes] = False
            self.r_id[nodes] = i
            self.r_start[nodes] = r.start_s
            self.r_end[nodes] = r.end_s
        self.r_starts_sorted = sorted(r.start_s for r in self.cfg.reservations)

    def _mask(self, j: int, extra_exclude: np.ndarray | None = None) -> np.ndarray | None:
        if not self.cfg.reservations:
            return None if extra_exclude is None else ~extra_exclude
        r = self.resv_of[j]
        now = self.now
        if r >= 0:
            m = (self.r_id == r) & (now >= self.r_start) & (now < self.r_end)
        else:
            m = (self.r_id == -1) | (now >= self.r_end) | (now + self.req[j] <= self.r_start)
        if extra_exclude is not None:
            m &= ~extra_exclude
        return m

    def _mask_class(self, j: int) -> tuple[int, int]:
        if not self.cfg.reservations:
            return (0, 0)
        return (self.resv_of[j],
                bisect.bisect_left(self.r_starts_sorted, self.now + self.req[j]))

    # ------------------------------------------------------------------ events
    def push(self, t: float, kind: int, payload: Any) -> None:
        heapq.heappush(self.heap, (t, next(self.seq), kind, payload))

    def go(self) -> RunOutput:
        for j in range(self.n):
            self.push(self.submit[j], ARRIVE, j)
        for r in self.cfg.reservations:  # a pass when a reservation opens and closes
            self.push(r.start_s, WAKE, None)
            self.push(r.end_s, WAKE, None)
        if self.on_node is not None:
            self._next_failure()
        events = 0
        heap = self.heap
        pop = heapq.heappop
        while heap and self.outstanding > 0:
            t = heap[0][0]
            if t > self.cfg.horizon_s:
                break
            self._advance(t)
            while heap and heap[0][0] == t:
                _, _, kind, p = pop(heap)
                events += 1
                if kind == END:
                    j, ep = p
                    if self.epoch[j] == ep and self.status[j] == RUNNING:
                        self._finish(j)
                elif kind == ARRIVE:
                    self._arrive(p)
                elif kind == FAIL:
                    self._fail()
                elif kind == REPAIR:
                    self._repair(p)
            self._schedule()
            if self.cfg.record_timeline:
                self._sample()
        self._advance(self.now)
        return self._output(events)

    def _advance(self, t: float) -> None:
        dt = t - self.last_usage_t
        if dt > 0:
            if self.order.dynamic:
                hl = getattr(self.order, "half_life_s", math.inf)
                decay = 0.5 ** (dt / hl) if math.isfinite(hl) else 1.0
                self.ctx.team_usage = self.ctx.team_usage * decay + self.team_milli * dt / WHOLE
            self.team_gpu_s += self.team_milli * dt / WHOLE
            if self.on_node is not None:
                self.down_gpu_s += (self.st.capacity_milli - self.st.up_milli) / WHOLE * dt
            self.last_usage_t = t
        self.now = t

    def _sample(self) -> None:
        st = self.st
        tl = self.tl
        tl["t"].append(self.now)
        tl["alloc_gpus"].append((st.up_milli - st.free_milli) / WHOLE)
        tl["up_gpus"].append(st.up_milli / WHOLE)
        tl["queue"].append(len(self.queue))
        tl["fragmentation"].append(st.fragmentation)

    # ------------------------------------------------------------------ job life cycle
    def _arrive(self, j: int) -> None:
        if self._never_fits(j):
            self._cancel(j)
            return
        ds = self.w.deps.get(j)
        if ds:
            verdict = self._deps_verdict(ds)
            if verdict is False:
                self._cancel(j)
                return
            if verdict is None:
                self.status[j] = HELD
                return
        self._enqueue(j)

    def _never_fits(self, j: int) -> bool:
        """Larger than the cluster (or its reservation), or not whole GPUs above one GPU."""
        m = self.milli[j]
        r = self.resv_of[j]
        if r >= len(self.cfg.reservations):
            return True
        cap = self.st.capacity_milli if r < 0 else self.cfg.reservations[r].gpus * WHOLE
        if m > cap:
            return True
        if self.st.pooled or m < WHOLE:
            return False
        return m % WHOLE != 0

    def _deps_verdict(self, ds: tuple[tuple[str, int], ...]) -> bool | None:
        """True = all satisfied, False = can never be, None = wait."""
        ready = True
        for kind, d in ds:
            s = self.status[d]
            if s in (DONE, TIMEOUT, CANCELLED):
                if kind == "afterok" and s != DONE:
                    return False
            else:
                ready = False
        return True if ready else None

    def _enqueue(self, j: int) -> None:
        self.status[j] = QUEUED
        if self.static_keys is not None:
            key = self.static_keys[j]
        else:
            key = float(self.order.keys(self.ctx, np.array([j]), self.now)[0])
        bisect.insort(self.queue, (key, self.submit[j], j))

    def _cancel(self, j: int) -> None:
        self.status[j] = CANCELLED
        self.end[j] = self.now
        self.outstanding -= 1
        self._release_waiters(j)

    def _release_waiters(self, j: int) -> None:
        for k in self.waiters.get(j, ()):
            if self.status[k] != HELD:
                continue
            verdict = self._deps_verdict(self.w.deps[k])
            if verdict is False:
                self._cancel(k)
            elif verdict:
                self._enqueue(k)

    def _start(self, j: int, alloc: Alloc) -> None:
        st = self.st
        st.take(alloc)
        self.status[j] = RUNNING
        if math.isnan(self.first_start[j]):
            self.first_start[j] = self.now
        self.alloc[j] = alloc
        am = sum(a[2] * max(1, len(a[1])) for a in alloc)
        self.alloc_milli[j] = am
        self.team_milli[self.team[j]] += am
        overhead = self.cfg.restart_s if self.interrupt[j] or self.preempt[j] else 0.0
        ln = min(self.remaining[j] + overhead, self.req[j])
        self.run_start[j] = self.now
        self.run_len[j] = ln
        self.epoch[j] += 1
        self.running.add(j)
        bisect.insort(self.run_ends, (self.now + ln, j))
        rk = self.rank[j]
        self.rank_count[rk] = self.rank_count.get(rk, 0) + 1
        if not st.pooled:
            nodes = {a[0] for a in alloc}
            self.leafs[j] = len({int(self.spec.leaf[x]) for x in nodes})
            self.sus[j] = len({int(self.spec.su[x]) for x in nodes})
            if self.on_node is not None:
                for x in nodes:
                    self.on_node.setdefault(x, set()).add(j)
        self.push(self.now + ln, END, (j, self.epoch[j]))

    def _stop(self, j: int) -> float:
        """Take a running job off its GPUs; return how long this attempt ran."""
        alloc = self.alloc[j]
        assert alloc is not None  # engine invariant, not user input
        self.st.give(alloc)
        self.team_milli[self.team[j]] -= self.alloc_milli[j]
        self.running.discard(j)
        e = (self.run_start[j] + self.run_len[j], j)
        pos = bisect.bisect_left(self.run_ends, e)
        if pos < len(self.run_ends) and self.run_ends[pos] == e:
            del self.run_ends[pos]
        else:  # float round-trip: fall back to a search
            self.run_ends.remove(next(x for x in self.run_ends if x[1] == j))
        rk = self.rank[j]
        self.rank_count[rk] -= 1
        if not self.rank_count[rk]:
            del self.rank_count[rk]
        if self.on_node is not None:
            for a in alloc:
                s = self.on_node.get(a[0])
                if s:
                    s.discard(j)
        self.alloc[j] = None
        ran = self.now - self.run_start[j]
        self.run_total[j] += ran
        self.version += 1
        return ran

    def _finish(self, j: int) -> None:
        ran = self._stop(j)
        overhead = self.cfg.restart_s if self.interrupt[j] or self.preempt[j] else 0.0
        done_work = max(0.0, ran - overhead)
        if self.remaining[j] - done_work > 1e-6:
            self.status[j] = TIMEOUT
        else:
            self.status[j] = DONE
        self.remaining[j] = max(0.0, self.remaining[j] - done_work)
        self.end[j] = self.now
        self.outstanding -= 1
        self._release_waiters(j)

    def _interrupt(self, j: int, preempted: bool) -> None:
        """Requeue a running job; it keeps the work up to its last checkpoint."""
        ran = self._stop(j)
        overhead = self.cfg.restart_s if self.interrupt[j] or self.preempt[j] else 0.0
        work = max(0.0, ran - overhead)
        ck = self.ck[j]
        kept = math.floor(work / ck) * ck if math.isfinite(ck) and ck > 0 else 0.0
        kept = min(kept, self.remaining[j])
        self.remaining[j] -= kept
        lost = (ran - kept) * self.alloc_milli[j] / WHOLE
        if preempted:
            self.lost_p[j] += lost
        else:
            self.lost[j] += lost
        if preempted:
            self.preempt[j] += 1
        else:
            self.interrupt[j] += 1
        self.epoch[j] += 1
        self.status[j] = QUEUED
        key = self.static_keys[j] if self.static_keys is not None else \
            float(self.order.keys(self.ctx, np.array([j]), self.now)[0])
        if self.in_pass:
            self.deferred.append((key, self.submit[j], j))
        else:
            bisect.insort(self.queue, (key, self.submit[j], j))
        self.shadow = None

    # ------------------------------------------------------------------ failures
    def _next_failure(self) -> None:
        rate = self.cfg.failure_rate_per_node_day / 86400.0 * self.spec.nodes
        if rate <= 0:
            return
        self.push(self.now + float(self.rng.exponential(1.0 / rate)), FAIL, None)

    def _fail(self) -> None:
        node = int(self.rng.integers(self.spec.nodes))
        if self.st.up[node]:
            self.failures += 1
            assert self.on_node is not None
            for j in sorted(self.on_node.get(node, set())):
                self._interrupt(j, preempted=False)
            self.st.fail(node)
            self.push(self.now + float(self.rng.exponential(self.cfg.repair_s)), REPAIR, node)
            self.shadow = None
        self._next_failure()

    def _repair(self, node: int) -> None:
        self.st.repair(node)
        self.version += 1

    # ------------------------------------------------------------------ scheduling pass
    def _rekey(self) -> None:
        if not self.queue:
            return
        jobs = np.fromiter((e[2] for e in self.queue), dtype=np.int64, count=len(self.queue))
        keys = self.order.keys(self.ctx, jobs, self.now)
        sub = self.w.submit_s[jobs]
        idx = np.lexsort((jobs, sub, keys))
        self.queue = list(zip(keys[idx].tolist(), sub[idx].tolist(), jobs[idx].tolist(),
                              strict=True))

    def _schedule(self) -> None:
        if not self.queue:
            return
        self.in_pass = True
        try:
            self._pass()
        finally:
            self.in_pass = False
            for e in self.deferred:
                bisect.insort(self.queue, e)
            self.deferred.clear()

    def _pass(self) -> None:
        if self.order.dynamic and self.now >= self.next_calc:
            self._rekey()
            self.next_calc = self.now + self.order.calc_period_s
        pol = self.pol
        st = self.st
        q = self.queue
        depth = self.cfg.scan_depth
        limits = self.team_limit
        resv = bool(self.cfg.reservations)
        failed: dict[tuple[int, int, int], int] = {}
        head: int | None = None
        reserved: np.ndarray | None = None
        shadow_t = math.inf
        pool_extra = 0
        i = 0
        seen = 0
        tried_preempt = not pol.preempt
        while i < len(q):
            if st.free_milli <= 0 and tried_preempt:
                break
            if depth is not None and seen > depth:
                break
            seen += 1
            j = q[i][2]
            m = self.milli[j]
            if limits:
                lim = limits.get(self.team[j])
                if lim is not None and self.team_milli[self.team[j]] + m > lim:
                    i += 1
                    continue
            if resv and self.resv_of[j] >= 0 and not self._resv_open(j):
                i += 1
                continue
            mode = 0
            if head is not None:
                mode = 1 if self.now + self.req[j] > shadow_t else 0
            ck = (mode, 0, 0) if not resv else (mode,) + self._mask_class(j)
            fm = failed.get(ck)
            alloc = None
            if m <= st.free_milli and (fm is None or m < fm):
                if mode == 1 and st.pooled:
                    if m <= pool_extra:
                        alloc = self.placer.place(st, m)
                        if alloc is not None:
                            pool_extra -= m
                else:
                    alloc = self.placer.place(st, m, self._mask(j, reserved if mode else None))
                if alloc is None:
                    failed[ck] = m if fm is None else min(fm, m)
            if alloc is not None:
                del q[i]
                self._start(j, alloc)
                continue
            # j is blocked
            if head is None:
                if not tried_preempt:
                    tried_preempt = True
                    if self._try_preempt(j):
                        del q[i]
                        continue
                if pol.backfill:
                    head = j
                    shadow_t, reserved, pool_extra = self._shadow(j)
                    i += 1
                    continue
                if not pol.greedy:
                    break
            i += 1

    def _resv_open(self, j: int) -> bool:
        r = self.cfg.reservations[self.resv_of[j]]
        return r.start_s <= self.now < r.end_s

    # ------------------------------------------------------------------ EASY backfill
    def _shadow(self, h: int) -> tuple[float, np.ndarray | None, int]:
        """Earliest time the blocked head ``h`` can start if running jobs end at their limits,
        and the nodes it would get then (kept out of reach of jobs that would run past it)."""
        if self.shadow is not None and self.shadow[0] == h:
            _, _, t, nodes, extra = self.shadow
            return t, nodes, extra
        st = self.st
        m = self.milli[h]
        hyp = _copy_state(st)
        ends = self.run_ends
        mask = self._mask(h)
        t = math.inf
        nodes_arr: np.ndarray | None = None
        extra = 0
        k = m // WHOLE
        for tend, j in ends:
            alloc = self.alloc[j]
            assert alloc is not None
            hyp.give(alloc)
            if hyp.free_milli < m:
                continue
            if not hyp.pooled:
                touched = [a[0] for a in alloc]
                if m < WHOLE:
                    if not any(int(hyp.gfree[x].max()) >= m for x in touched):
                        continue
                elif k <= hyp.max_node_gpus:
                    if not any(int(hyp.full[x]) >= k for x in touched):
                        continue
                elif hyp.idle_node_gpus < k:
                    continue
            a = self.placer.place(hyp, m, mask)
            if a is not None:
                t = tend
                if hyp.pooled:
                    extra = hyp.free_milli - m
                else:
                    nodes_arr = np.zeros(self.spec.nodes, dtype=bool)
                    nodes_arr[[x[0] for x in a]] = True
                break
        self.shadow = (h, 0, t, nodes_arr, extra)
        self.head_checks.append((h, self.now, t))
        return t, nodes_arr, extra

    # ------------------------------------------------------------------ preemption
    def _try_preempt(self, h: int) -> bool:
        if self.preempt_tried == (h, self.version):
            return False
        self.preempt_tried = (h, self.version)
        rank = self.rank[h]
        if not any(rk < rank for rk in self.rank_count):
            return False
        victims = sorted((self.rank[j], -self.run_start[j], j) for j in self.running
                         if self.rank[j] < rank and self.resv_of[j] < 0)
        if not victims:
            return False
        m = self.milli[h]
        hyp = _copy_state(self.st)
        mask = self._mask(h)
        chosen: list[int] = []
        for _, _, j in victims:
            alloc = self.alloc[j]
            assert alloc is not None
            hyp.give(alloc)
            chosen.append(j)
            if hyp.free_milli >= m and self.placer.place(hyp, m, mask) is not None:
                break
        else:
            return False
        # drop victims that turned out not to be needed (latest first)
        for j in list(reversed(chosen[:-1])):
            test = _copy_state(self.st)
            for v in chosen:
                if v != j:
                    test.give(self.alloc[v])  # type: ignore[arg-type]
            if self.placer.place(test, m, mask) is not None:
                chosen.remove(j)
        for j in chosen:
            self._interrupt(j, preempted=True)
        alloc = self.placer.place(self.st, m, mask)
        assert alloc is not None  # same state as the hypothetical one
        self._start(h, alloc)
        return True

    # ------------------------------------------------------------------ output
    def _output(self, events: int) -> RunOutput:
        status = np.array(self.status, dtype=np.int8)
        tl = {k: np.asarray(v, dtype=np.float64) for k, v in self.tl.items()}
        run = np.array(self.run_total)
        # jobs still running at the horizon: count their time so far
        for j in self.running:
            run[j] += self.now - self.run_start[j]
        return RunOutput(
            policy=self.pol.label, placement=self.cfg.placement, status=status,
            first_start_s=np.array(self.first_start), end_s=np.array(self.end), run_s=run,
            preemptions=np.array(self.preempt, dtype=np.int32),
            interruptions=np.array(self.interrupt, dtype=np.int32),
            lost_gpu_s=np.array(self.lost), lost_preempt_gpu_s=np.array(self.lost_p),
            alloc_gpus=np.array(self.alloc_milli) / WHOLE,
            leaf_groups=np.array(self.leafs, dtype=np.int32),
            scalable_units=np.array(self.sus, dtype=np.int32), timeline=tl,
            down_gpu_s=self.down_gpu_s, failures=self.failures, end_time_s=self.now,
            team_gpu_s=self.team_gpu_s.copy(), shares=self.shares.copy(),
            reserved_head_checks=self.head_checks, events=events)


def _copy_state(st: ClusterState) -> ClusterState:
    c = ClusterState.__new__(ClusterState)
    c.__dict__.update(st.__dict__)
    c.gfree = st.gfree.copy()
    c.full = st.full.copy()
    c.up = st.up.copy()
    return c
