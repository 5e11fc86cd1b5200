"""``track``: read the logs and the Slurm history, compare with the plan, forecast, flag drift.

:func:`track` runs the scenario's plan (the ordinary pipeline) and hands its figures to
:func:`track_plan`, which does the rest; tests and the back-test call :func:`track_plan` with
a plan they made once. Log files are read in the order of their first dated record, each
streamed through one :class:`~clustertwin.track.stream.Accumulator`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clustertwin.errors import Problem, UsageError
from clustertwin.track.detect import items, open_log
from clustertwin.track.drift import Flag, flags
from clustertwin.track.forecast import Forecast, forecast
from clustertwin.track.observe import Observed, observe
from clustertwin.track.planview import PlanView, plan_view
from clustertwin.track.readers import Resume
from clustertwin.track.records import LineStats, Record
from clustertwin.track.slurm import Allocation, read_sacct
from clustertwin.track.stream import Accumulator, RunHistory


@dataclass(frozen=True)
class TrackResult:
    plan: PlanView
    history: RunHistory
    observed: Observed
    forecast: Forecast
    flags: tuple[Flag, ...]
    lines: tuple[LineStats, ...]
    formats: tuple[str, ...]
    allocations: tuple[Allocation, ...] = ()
    scenario_name: str = ""


def _first_time(it: Iterator[Any]) -> tuple[float, list[Any]]:
    """The time of the first dated record and the items read to find it."""
    head = []
    for x in it:
        head.append(x)
        if isinstance(x, Record) and x.t is not None:
            return x.t, head
        if isinstance(x, dict) and len(x.get("t", ())):
            return float(x["t"][0]), head
    return float("inf"), head


def read_history(sources: list[tuple[str, str, Iterator[Any], LineStats]], pv: PlanView,
                 as_of: float | None) -> RunHistory:
    """Stream ``(name, format, items, stats)`` sources, earliest first, into one history."""
    acc = Accumulator(tokens_per_step=pv.batch_tokens, seq_len=pv.seq_len, as_of=as_of)
    ordered = []
    for name, _fmt, it, stats in sources:
        t0, head = _first_time(it)
        ordered.append((t0, name, itertools.chain(head, it), stats))
    for _, _, it, _ in sorted(ordered, key=lambda x: (x[0], x[1])):
        for x in it:
            if isinstance(x, Resume):
                acc.resume(x.t)
            elif isinstance(x, dict):  # a block of columns (the block reader)
                acc.flush()
                acc.add_columns(x)
            else:
                acc.add(x)
    history = acc.finish()
    if not history.segments:
        names = ", ".join(s[0] for s in sources)
        why = (f"every record is after --as-of ({history.dropped_after})" if history.dropped_after
               else "no dated training records")
        bad = [Problem(s[3].source, f"{s[3].unit} {no}", why_bad) for s in sources for no, why_bad in s[3].bad[:3]]
        raise UsageError([Problem(names, "--log", f"training records with times ({why})"), *bad])
    return history


def track_plan(pv: PlanView, logs: list[Path] | list[tuple[str, str]], sacct: Path | str | None = None,
               as_of: float | None = None, seed: int = 0, sacct_text: str | None = None) -> TrackResult:
    """``logs``: paths, or ``(name, text)`` pairs (in-memory logs: tests, the back-test)."""
    sources = []
    for log in logs:
        if isinstance(log, tuple):
            from clustertwin.track.detect import sniff
            from clustertwin.track.textlog import text_items

            name, text = log
            fmt = sniff(text[:262144]) or "unknown"
            stats = LineStats(name)
            sources.append((name, fmt, text_items(text, fmt, stats), stats))
        else:
            fmt, stats = open_log(Path(log))
            sources.append((str(log), fmt, items(Path(log), fmt, stats), stats))
    history = read_history(sources, pv, as_of)
    allocs: list[Allocation] = []
    line_stats = [s[3] for s in sources]
    if sacct is not None:
        allocs, st = read_sacct(sacct, as_of, text=sacct_text)
        line_stats.append(st)
    obs = observe(history, pv, allocs, as_of)
    fc = forecast(pv, obs, history, seed=seed)
    return TrackResult(pv, history, obs, fc, tuple(flags(pv, obs, history, fc, pv.nodes)),
                       tuple(line_stats), tuple(s[1] for s in sources), tuple(allocs))


def track(scenario: Any, catalog: Any, logs: list[Path] | list[tuple[str, str]], sacct: Path | str | None = None,
          as_of: float | None = None, plan: Any = None, sacct_text: str | None = None) -> TrackResult:
    """The scenario's plan (made here unless given), then :func:`track_plan` (``logs`` and
    ``sacct``/``sacct_text`` as it takes them: files, or names with their text)."""
    if plan is None:
        from clustertwin.plan import make_plan

        plan = make_plan(scenario, catalog)
    pv = plan_view(plan, scenario.source)
    seed = int(scenario.reliability.seed)
    res = track_plan(pv, logs, sacct, as_of, seed, sacct_text=sacct_text)
    return TrackResult(**{**res.__dict__, "scenario_name": scenario.name})
