"""Observed vs planned: progress, steady-state speed, interruptions and their cost, ETTR.

Definitions (one place; the report, the forecast and the drift flags read them from here):

- *lost time* of an interruption: the wall-clock time across the break less the useful
  progress made in it, ``(t_after - t_before) - (step_after - step_before) x step time``. A job
  that restarts from an older checkpoint has ``step_after < step_before``, so the work redone
  counts as lost; a job down for an hour loses the hour.
- *productive rate*: tokens per second inside segments (uninterrupted training, checkpoint
  stalls and slow steps included) over the recent window: the last :data:`RATE_DAYS` days or
  the last :data:`RATE_SHARE` of the time elapsed, whichever is longer (speed changes, a batch ramp, a
  different GPU count, count from when they happen); ``productive_all`` is the whole run's.
- *steady step time*: the median logged step time (weighted by steps); the recent one is over
  the last :data:`RECENT_DAYS` days.
- *observed ETTR*: tokens trained in the window / (steady tokens per second x wall time).
- the plan's expected interruptions by now: its rate per wall-clock hour x hours elapsed; its
  90% range: the 5th and 95th percentiles of a Poisson count with that mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from clustertwin.track.planview import PlanView
from clustertwin.track.slurm import Allocation
from clustertwin.track.stream import RunHistory

RECENT_DAYS = 7.0
#: the productive rate's window: the last RATE_DAYS days or RATE_SHARE of the time elapsed
RATE_DAYS = 3.0
RATE_SHARE = 0.1
#: a Slurm allocation end this long before a log restart still explains it
MATCH_SLACK_S = 3600.0


@dataclass(frozen=True)
class Interruption:
    t: float                 #: when the job stopped (last record before, or the allocation end)
    cause: str
    lost_h: float
    nodes: tuple[str, ...] = ()
    evidence: str = ""


@dataclass(frozen=True)
class Observed:
    start: float
    as_of: float
    tokens_start: float
    tokens_done: float
    fraction: float
    elapsed_h: float
    step_s: float
    step_s_recent: float
    tokens_per_step: float
    tokens_per_s: float          #: steady state: tokens per step / steady step time
    productive_tokens_per_s: float
    productive_all_tokens_per_s: float
    mfu: float
    interruptions: tuple[Interruption, ...]
    lost_h: float
    ettr: float
    expected_interruptions: float
    expected_p5: float
    expected_p95: float
    by_cause: dict[str, int] = field(default_factory=dict)


def poisson_quantile(mean: float, q: float) -> float:
    """Smallest k with P(N <= k) >= q for N ~ Poisson(mean) (normal approximation past 1e4)."""
    if mean <= 0:
        return 0.0
    if mean > 1e4:
        z = {0.05: -1.6449, 0.95: 1.6449, 0.1: -1.2816, 0.9: 1.2816}.get(q, 0.0)
        return max(0.0, math.floor(mean + z * math.sqrt(mean) + 0.5))
    k, p = 0, math.exp(-mean)
    cum = p
    while cum < q:
        k += 1
        p *= mean / k
        cum += p
    return float(k)


def interruptions(history: RunHistory, allocs: list[Allocation], step_s: float) -> list[Interruption]:
    """Restarts seen in the log, each given a cause from the allocation that ended at the break;
    allocations that ended with a cause but left no mark in the log are counted too."""
    used: set[int] = set()
    out = []
    for r in history.restarts:
        lost = max(0.0, (r.t_after - r.t_before) - (r.step_after - r.step_before) * step_s) / 3600.0
        best = None
        for i, a in enumerate(allocs):
            if i in used or a.end is None or a.cause is None:
                continue
            if r.t_before - MATCH_SLACK_S <= a.end <= r.t_after:
                if best is None or abs(a.end - r.t_before) < abs(allocs[best].end - r.t_before):
                    best = i
        if best is not None:
            used.add(best)
            a = allocs[best]
            out.append(Interruption(r.t_before, a.cause or "unknown", lost, a.nodes,
                                    f"job {a.job} ended {a.state}; log: {r.why} at step {r.step_before}"))
        else:
            out.append(Interruption(r.t_before, "unknown (log only)", lost, (),
                                    f"log: {r.why} at step {r.step_before} -> {r.step_after}"))
    for i, a in enumerate(allocs):
        if i in used or a.cause is None or a.end is None or a.end < history.start:
            continue
        nxt = [b.start for b in allocs if b.start >= a.end]
        down = (min(nxt) - a.end) / 3600.0 if nxt else 0.0
        out.append(Interruption(a.end, a.cause, down, a.nodes, f"job {a.job} ended {a.state} (no restart in the log)"))
    return sorted(out, key=lambda x: x.t)


def _window_rate(history: RunHistory, since: float) -> float | None:
    """Tokens per second inside the segments after ``since`` (a segment cut by it counts in part,
    at its own average rate)."""
    tok = t = 0.0
    for t0, _, k0, t1, _, k1 in history.segments:
        if t1 <= since or t1 <= t0:
            continue
        share = (t1 - max(t0, since)) / (t1 - t0)
        tok += (k1 - k0) * share
        t += (t1 - max(t0, since))
    return tok / t if t > 0 and tok > 0 else None


def observe(history: RunHistory, plan: PlanView, allocs: list[Allocation], as_of: float | None) -> Observed:
    end = as_of if as_of is not None else history.end
    step_s = history.step_time() or plan.step_time_s
    recent = history.step_time(since=end - RECENT_DAYS * 86400.0) or step_s
    seg_tok = sum(s[5] - s[2] for s in history.segments)
    seg_t = sum(s[3] - s[0] for s in history.segments)
    seg_steps = sum(s[4] - s[1] for s in history.segments)
    per_step = seg_tok / seg_steps if seg_steps > 0 and seg_tok > 0 else plan.batch_tokens
    steady = per_step / step_s
    overall = seg_tok / seg_t if seg_t > 0 and seg_tok > 0 else steady
    window = max(RATE_DAYS * 86400.0, RATE_SHARE * (end - history.start))
    productive = _window_rate(history, end - window) or overall
    ints = interruptions(history, allocs, step_s)
    elapsed_h = max(end - history.start, 1.0) / 3600.0
    tok0, tok = history.segments[0][2], history.tokens_done
    if history.mfu is not None:
        mfu = history.mfu
    elif history.tflops is not None and plan.peak_tflops_per_gpu > 0:
        mfu = history.tflops / plan.peak_tflops_per_gpu
    else:  # the same model FLOPs per token: MFU scales with tokens per second
        mfu = plan.mfu * steady / plan.tokens_per_s
    expected = plan.interruptions_per_h * elapsed_h
    causes: dict[str, int] = {}
    for x in ints:
        causes[x.cause] = causes.get(x.cause, 0) + 1
    return Observed(
        start=history.start, as_of=end, tokens_start=tok0, tokens_done=tok, fraction=tok / plan.tokens,
        elapsed_h=elapsed_h, step_s=step_s, step_s_recent=recent, tokens_per_step=per_step,
        tokens_per_s=steady, productive_tokens_per_s=productive, productive_all_tokens_per_s=overall, mfu=mfu, interruptions=tuple(ints),
        lost_h=sum(x.lost_h for x in ints), ettr=min(1.0, (tok - tok0) / (steady * elapsed_h * 3600.0)),
        expected_interruptions=expected, expected_p5=poisson_quantile(expected, 0.05),
        expected_p95=poisson_quantile(expected, 0.95), by_cause=causes)
