"""The state of one run: per-job columns, the queue, the event heap, team usage.

Kept as plain Python lists (fast scalar access in the hot loop) on one object that the engine's
parts (:mod:`.lifecycle`, :mod:`.failures`, :mod:`.reservations`, :mod:`.backfill`,
:mod:`.preemption`, :mod:`.dispatch`) extend as mixins, so the event loop pays no indirection.
"""

from __future__ import annotations

import bisect
import heapq
import math
from itertools import count
from typing import Any

import numpy as np

from clustertwin.scheduling.cluster import ClusterSpec
from clustertwin.scheduling.jobs import Workload
from clustertwin.scheduling.placement import Placement, get_placement
from clustertwin.scheduling.policies import PolicySpec
from clustertwin.scheduling.simtypes import FUTURE, SimConfig
from clustertwin.scheduling.state import WHOLE, Alloc, ClusterState


class _Ctx:
    """What orders may read: the workload (and its submit times and teams as lists), team
    usage and shares, capacity.

    The engine keeps the decayed team usage as Python floats (``usage``, replaced as a new
    list whenever it changes); ``team_usage`` is that list as an array, built when an order
    reads it and kept until the list is replaced (so its identity marks the usage state)."""

    def __init__(self, w: Workload, shares: np.ndarray, capacity_milli: int) -> None:
        self.w = w
        self.submit: list[float] = w.submit_s.tolist()  # the columns as lists, for scalar reads
        self.team: list[int] = w.team.tolist()
        self.shares = shares
        self.capacity_milli = capacity_milli
        self.usage: list[float] = [0.0] * len(w.teams)
        self._usage_arr: tuple[list[float], np.ndarray] | None = None

    @property
    def team_usage(self) -> np.ndarray:
        cached = self._usage_arr
        if cached is None or cached[0] is not self.usage:
            cached = self._usage_arr = (self.usage, np.array(self.usage, dtype=np.float64))
        return cached[1]


def _shares(w: Workload, cfg: SimConfig) -> np.ndarray:
    s = np.array([float(cfg.shares.get(t, 1.0 if not cfg.shares else 0.0)) for t in w.teams])
    if len(s) and s.sum() <= 0:
        s = np.ones(len(s))
    s = np.maximum(s, 1e-9)
    return s / s.sum() if len(s) else s




class RunState:
    def __init__(self, w: Workload, spec: ClusterSpec, pol: PolicySpec, cfg: SimConfig,
                 seed: int) -> None:
        self.w, self.spec, self.pol, self.cfg = w, spec, pol, cfg
        self.rng = np.random.default_rng(np.random.SeedSequence(seed))
        self.order = pol.build()
        self.st = ClusterState(spec)
        self.leaf_of = spec.leaf.tolist()  # leaf group and scalable unit of each node
        self.su_of = spec.su.tolist()
        self.placer: Placement = get_placement(cfg.placement)
        n = len(w)
        self.n = n
        self.shares = _shares(w, cfg)
        self.ctx = _Ctx(w, self.shares, self.st.capacity_milli)
        # per-job python lists: fast scalar access in the hot loop
        self.milli = w.gpus_milli.tolist()
        self.req = w.requested_s.tolist()
        self.ck = w.checkpoint_s.tolist()
        self.submit = self.ctx.submit
        # the workload's shortest time limit and smallest demand (bounds the EASY fill uses)
        self.min_req = min(self.req, default=math.inf)
        self.min_milli = min(self.milli, default=0)
        self.min_node_gpus = min(self.st.gpus_l, default=0)  # fewest GPUs on a node
        self.team = self.ctx.team
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
        self._init_queue(w)
        self.running: set[int] = set()
        # (the attempt's end, job, epoch) of the running attempts, a heap; an entry whose job
        # no longer runs that attempt (epoch or status changed) is stale and skipped
        self.run_ends: list[tuple[float, int, int]] = []
        self.rank_count: dict[tuple[int, float], int] = {}  # running jobs per (QoS, priority)
        self.on_node: dict[int, set[int]] | None = {} if cfg.failure_rate_per_node_day > 0 else None
        self.team_milli = [0.0] * len(w.teams)  # GPU-milli in use per team
        self.team_gpu_s = [0.0] * len(w.teams)
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
        self.deferred: list[tuple[float, int]] = []  # (key, job) requeued during a pass
        # a fast-path EASY pass that started nothing: (cluster state's change count, head);
        # and the queue entries added since the last pass (see Dispatch._pass)
        self.dead: tuple[int, int] | None = None
        self.fresh: list[tuple[float, int]] = []
        self.down_gpu_s = 0.0
        self.failures = 0
        self.outstanding = n
        self.tl: dict[str, list[float]] = {"t": [], "alloc_gpus": [], "up_gpus": [],
                                           "queue": [], "fragmentation": []}

    def _init_queue(self, w: Workload) -> None:
        """The empty queue and what keys it: a static order's key of every job, or a dynamic
        order's key function; and the size class of every job (see :meth:`_queue_put`)."""
        order = self.order
        self.static_keys = None if order.dynamic else \
            order.keys(self.ctx, np.arange(len(w)), 0.0).tolist()
        self.key_of = order.key_fn(self.ctx) if order.dynamic else None
        # the queue in policy order: the jobs, and beside them their keys (an entry sorts by
        # (key, submit time, job); see RunState._queue_pos) and size classes, a byte each
        self.queue: list[int] = []
        self.qkey: list[float] = []
        self.qclass = bytearray()
        levels = np.unique(w.gpus_milli)
        self.milli_levels: list[int] = levels.tolist()
        self.size_class = np.minimum(np.searchsorted(levels, w.gpus_milli), 255) \
            .astype(np.uint8).tobytes()

    def push(self, t: float, kind: int, payload: Any) -> None:
        heapq.heappush(self.heap, (t, next(self.seq), kind, payload))

    def _queue_pos(self, key: float, j: int) -> int:
        """Where the entry (key, submit time, job) of ``j`` sorts in the queue: its index if
        it is there, else where it goes. Keys are compared first (a bisection over the float
        list); among equal keys the earlier submit time, then the lower job index."""
        qk = self.qkey
        lo = bisect.bisect_left(qk, key)
        hi = bisect.bisect_right(qk, key, lo)
        if lo == hi:
            return lo
        sub = self.submit
        return bisect.bisect_left(self.queue, (sub[j], j), lo, hi, key=lambda k: (sub[k], k))

    def _queue_add(self, key: float, j: int) -> int:
        """Insert ``j`` with its key into the queue's two lists; return its position."""
        pos = self._queue_pos(key, j)
        self.queue.insert(pos, j)
        self.qkey.insert(pos, key)
        return pos

    def _queue_put(self, key: float, j: int) -> None:
        """Queue ``j`` (:meth:`_queue_add`) and its size class into ``qclass``: the rank of its
        milli-GPUs among the workload's distinct demands (``milli_levels``), 255 for the 255th
        and above. An entry is below ``lim`` milli-GPUs only if its class is below
        ``bisect_left(milli_levels, lim)``, which lets the EASY fill find the entries it may
        try with one bytes scan (:meth:`Dispatch._fill_at`)."""
        self.qclass.insert(self._queue_add(key, j), self.size_class[j])
