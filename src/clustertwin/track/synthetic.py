"""Synthetic training runs from the twin's own models, with the truth known.

The run follows the plan's step time (times ``step_factor``, a lognormal jitter of
:data:`JITTER` per logged interval) and the reliability model's failure process: Poisson
interruptions at the plan's rate per wall-clock hour (times ``rate_factor``), each costing a
restart (lognormal, mean the plan's ``restart_min``, spread :data:`RESTART_SPREAD`) and the work
since the last checkpoint (saved every ``checkpoint_interval_min``, each save stalling the
plan's ``checkpoint_blocking_s``). It writes what the real job would: Megatron-LM iteration
lines (with a "loading checkpoint" line at each restart) and ``sacct --parsable2`` rows, one
allocation per attempt ending NODE_FAIL or FAILED on a named node.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np

from clustertwin.track.planview import PlanView

JITTER = 0.02
RESTART_SPREAD = 0.3
START = dt.datetime(2027, 3, 1, tzinfo=dt.UTC).timestamp()


@dataclass(frozen=True)
class SyntheticRun:
    log: str
    sacct: str
    start: float
    finish: float               #: when the last token was trained (the truth)
    interruptions: int
    checkpoints: list[tuple[float, float]]   #: (time, tokens) of each log line: the burn-up truth


def _stamp(t: float) -> str:
    return dt.datetime.fromtimestamp(t, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _line(t: float, it: int, total: int, samples: int, step_s: float, batch: int, loss: float) -> str:
    return (f"[{_stamp(t)}] iteration {it:>8d}/{total:>8d} | consumed samples: {samples:>12d} | "
            f"elapsed time per iteration (ms): {step_s * 1e3:.1f} | learning rate: 1.500000E-04 | "
            f"global batch size: {batch:>5d} | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: 1.234 | "
            "number of skipped iterations:   0 | number of nan iterations:   0 |\n")


def generate(plan: PlanView, seed: int, step_factor: float = 1.0, rate_factor: float = 1.0,
             nodes: int = 128, slowdown: tuple[float, float] | None = None,
             outage: tuple[float, float] | None = None) -> SyntheticRun:
    """One run to the end of the plan's tokens. Like a real logbook, a run may change on the way:
    ``slowdown=(share, factor)`` multiplies the step time from that share of the tokens on;
    ``outage=(share, hours)`` stops the job that long once it gets there (waiting for repairs)."""
    rng = np.random.default_rng(seed)
    step = plan.step_time_s * step_factor
    batch = max(1, round(plan.batch_tokens / plan.seq_len))
    total = int(np.ceil(plan.tokens / (batch * plan.seq_len)))
    ck_steps = max(1, round(plan.checkpoint_interval_min * 60.0 / step))
    lam = plan.interruptions_per_h * rate_factor / 3600.0
    t = START
    it, saved = 0, 0
    next_fail = t + rng.exponential(1.0 / lam) if lam > 0 else np.inf
    lines, rows, truth = [], [], []
    alloc_start, job, fails = t, 1000, 0
    while it < total:
        n = min(ck_steps - it % ck_steps, total - it)
        slow = slowdown[1] if slowdown is not None and it >= slowdown[0] * total else 1.0
        s = step * slow * float(np.exp(rng.normal(0.0, JITTER)))
        end = t + n * s
        down = None
        if outage is not None and it >= outage[0] * total:
            next_fail, down, outage = min(next_fail, end), outage[1] * 3600.0, None
        if end > next_fail:  # the job dies inside this interval: back to the last checkpoint
            node = f"gpu{rng.integers(1, nodes + 1):04d}"
            state = "NODE_FAIL" if rng.random() < 0.6 else "FAILED"
            rows.append(f"{job}|pretrain|{state}|{_stamp(alloc_start).replace(' ', 'T')}|"
                        f"{_stamp(next_fail).replace(' ', 'T')}|{int(next_fail - alloc_start)}|{node}\n")
            restart = plan.restart_min * 60.0 * float(np.exp(rng.normal(-RESTART_SPREAD**2 / 2, RESTART_SPREAD)))
            t = next_fail + (down if down is not None else restart)
            job, fails, it, alloc_start = job + 1, fails + 1, saved, t
            lines.append(f"[{_stamp(t)}] loading checkpoint from /ckpt at iteration {saved}\n")
            next_fail = t + rng.exponential(1.0 / lam) if lam > 0 else np.inf
            continue
        it += n
        t = end
        loss = 2.0 + 8.0 / np.sqrt(1.0 + it / 100.0)
        lines.append(_line(t, it, total, it * batch, s, batch, loss))
        truth.append((t, it * batch * plan.seq_len))
        if it % ck_steps == 0:
            saved = it
            t += plan.checkpoint_blocking_s
    rows.append(f"{job}|pretrain|COMPLETED|{_stamp(alloc_start).replace(' ', 'T')}|"
                f"{_stamp(t).replace(' ', 'T')}|{int(t - alloc_start)}|gpu[0001-{nodes:04d}]\n")
    head = "JobID|JobName|State|Start|End|ElapsedRaw|NodeList\n"
    return SyntheticRun("".join(lines), head + "".join(rows), START, truth[-1][0], fails, truth)


def write_big_log(path: str, n_lines: int, restart_every: int = 50_000, save_every: int = 100,
                  seed: int = 0) -> None:
    """A long Megatron log (benchmarks, the bounded-memory test): iteration lines with a save
    line every ``save_every`` and a restart from the last save every ``restart_every`` lines."""
    rng = np.random.default_rng(seed)
    t, it, saved = START, 0, 0
    with open(path, "w", encoding="utf-8") as f:
        for i in range(1, n_lines + 1):
            if i % restart_every == 0:
                t += 900.0
                f.write(f"[{_stamp(t)}] loading checkpoint from /ckpt at iteration {saved}\n")
                it = saved
            it += 1
            s = 20.0 * float(np.exp(rng.normal(0.0, JITTER))) if i % 997 == 0 else 20.0
            t += s
            f.write(_line(t, it, 10**8, it * 1536, s, 1536, 2.0 + 8.0 / np.sqrt(1.0 + it / 100.0)))
            if it % save_every == 0:
                saved = it
                f.write(f" saving checkpoint at iteration {it:>8d} to /ckpt in torch_dist format\n")
