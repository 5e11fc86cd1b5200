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

This module is the event loop and the clock; the rest of a run lives in one module each:
:mod:`.simtypes` (options, output, event kinds), :mod:`.runstate` (the run's state),
:mod:`.lifecycle` (arrive/start/stop/finish/interrupt), :mod:`.failures` (node failures and
repairs), :mod:`.reservations` (node masks), :mod:`.dispatch` (the scheduling pass),
:mod:`.backfill` (EASY shadow time) and :mod:`.preemption`.
"""

from __future__ import annotations

import gc
import heapq
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from clustertwin.errors import Problem, UsageError
from clustertwin.scheduling.cluster import ClusterSpec
from clustertwin.scheduling.dispatch import Dispatch
from clustertwin.scheduling.failures import Failures
from clustertwin.scheduling.jobs import Workload
from clustertwin.scheduling.policies import PolicySpec, parse_policy
from clustertwin.scheduling.simtypes import (
    ARRIVE,
    CANCELLED,
    DEFAULT_SCAN_DEPTH,
    DONE,
    END,
    FAIL,
    FUTURE,
    HELD,
    QUEUED,
    REPAIR,
    RUNNING,
    STATUS_NAMES,
    TIMEOUT,
    WAKE,
    Reservation,
    RunOutput,
    SimConfig,
)
from clustertwin.scheduling.state import WHOLE

__all__ = ["ARRIVE", "CANCELLED", "DEFAULT_SCAN_DEPTH", "DONE", "END", "FAIL", "FUTURE", "HELD",
           "QUEUED", "REPAIR", "RUNNING", "STATUS_NAMES", "TIMEOUT", "WAKE", "Reservation",
           "RunOutput", "SimConfig", "simulate"]


def simulate(w: Workload, spec: ClusterSpec, policy: PolicySpec | str,
             cfg: SimConfig | None = None, seed: int = 0) -> RunOutput:
    """Replay ``w`` on ``spec`` under ``policy``. Requested limits must be filled
    (:func:`clustertwin.scheduling.jobs.with_time_limits`)."""
    cfg = cfg or SimConfig()
    pol = parse_policy(policy) if isinstance(policy, str) else policy
    if len(w) and np.isnan(w.requested_s).any():
        raise UsageError([Problem("workload", "requested_s", "time limits missing; call "
                                  "with_time_limits first")])
    with _cycle_collector_paused():
        return _Run(w, spec, pol, cfg, seed).go()


_gc_lock = threading.Lock()
_gc_paused = [0, False]  # runs in progress (all threads), collector enabled before the first


@contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector while a run is replayed. A run allocates millions of
    short-lived tuples (events, queue entries, allocations) and keeps hundreds of thousands
    alive, so the collector's generational passes cost 10-15 % of a large replay, yet they
    find next to nothing: the engine's objects form no reference cycles (freed by reference
    counting as usual). Results are the same; the collector resumes when the last run in
    progress (in any thread) ends, as it was before the first."""
    with _gc_lock:
        if _gc_paused[0] == 0:
            _gc_paused[1] = gc.isenabled()
            gc.disable()
        _gc_paused[0] += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_paused[0] -= 1
            if _gc_paused[0] == 0 and _gc_paused[1]:
                gc.enable()




class _Run(Dispatch, Failures):
    """One run: the event loop over the state and transitions of :mod:`.runstate` and its
    mixins (life cycle, failures, reservations, backfill, preemption, the scheduling pass)."""

    def __init__(self, w: Workload, spec: ClusterSpec, pol: PolicySpec, cfg: SimConfig,
                 seed: int) -> None:
        super().__init__(w, spec, pol, cfg, seed)
        self.half_life_s = getattr(self.order, "half_life_s", math.inf)  # usage decay: multifactor only
        self._setup_reservations()

    def go(self) -> RunOutput:
        """The event loop. Arrivals are known up front: they are read in (submit time, job)
        order from a sorted list, not kept in the heap (which then holds only the running
        jobs' ends and failures), and at one instant they come before the heap's events,
        where the heap would have put them too (they were pushed first)."""
        for r in self.cfg.reservations:  # a pass when a reservation opens and closes
            self.push(r.start_s, WAKE, None)
            self.push(r.end_s, WAKE, None)
        if self.on_node is not None:
            self._next_failure()
        sub = self.submit
        arrivals = np.argsort(self.w.submit_s, kind="stable").tolist()
        a = 0
        next_arrival = sub[arrivals[0]] if self.n else math.inf
        events = 0
        heap = self.heap
        pop = heapq.heappop
        while (heap or a < self.n) and self.outstanding > 0:
            t = heap[0][0] if heap and heap[0][0] < next_arrival else next_arrival
            if t > self.cfg.horizon_s:
                break
            self._advance(t)
            while next_arrival == t and a < self.n:
                self._arrive(arrivals[a])
                a += 1
                events += 1
                next_arrival = sub[arrivals[a]] if a < self.n else math.inf
            while heap and heap[0][0] == t:
                _, _, kind, p = pop(heap)
                events += 1
                if kind == END:
                    j, ep = p
                    if self.epoch[j] == ep and self.status[j] == RUNNING:
                        self._finish(j)
                elif kind == FAIL:
                    self._fail()
                elif kind == REPAIR:
                    self._repair(p)
            self._schedule()
            if self.cfg.record_timeline:
                self._sample()
            if self.on_node is not None and not self.running and a == self.n and self._stalled():
                break
        self._advance(self.now)
        return self._output(events)

    def _stalled(self) -> bool:
        """Nothing runs, every node is up and only failure events remain: the queued jobs can
        never start (e.g. a reservation job that missed its window), and failures alone would
        keep the heap alive for ever. Those jobs end the run still queued."""
        if self.st.up_milli != self.st.capacity_milli:
            return False
        return all(kind in (FAIL, REPAIR) for _, _, kind, _ in self.heap)

    def _advance(self, t: float) -> None:
        dt = t - self.last_usage_t
        if dt > 0:
            # per team, the same IEEE operations in the same order as the former NumPy form
            # (GPU-s used in the interval x = milli * dt / WHOLE); the usage in a new list (its
            # identity marks the usage state), the GPU-seconds in place
            if self.order.dynamic:
                hl = self.half_life_s
                decay = 0.5 ** (dt / hl) if hl < math.inf else 1.0
                usage = self.ctx.usage[:]
                gpu_s = self.team_gpu_s
                for i, tm in enumerate(self.team_milli):
                    x = tm * dt / WHOLE
                    usage[i] = usage[i] * decay + x
                    gpu_s[i] += x
                self.ctx.usage = usage
            else:
                self.team_gpu_s = [g + tm * dt / WHOLE
                                   for g, tm in zip(self.team_gpu_s, self.team_milli, strict=True)]
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
            team_gpu_s=np.array(self.team_gpu_s, dtype=np.float64), shares=self.shares.copy(),
            reserved_head_checks=self.head_checks, events=events)

