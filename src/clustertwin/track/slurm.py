"""A training job's allocations from Slurm accounting: why each one ended, when, on which nodes.

Export (``--duplicates`` keeps the allocations a requeue replaced)::

    sacct -j JOBID --duplicates --parsable2 \\
          --format JobID,JobName,State,Start,End,ElapsedRaw,NodeList,ExitCode > job.sacct

Fields as :mod:`clustertwin.scheduling.traces.sacct` reads them (``|``-separated, header row,
``YYYY-MM-DDTHH:MM:SS`` read as UTC, ``Unknown`` when absent); job steps (``JobID.batch``,
``.extern``, ``.N``) are left out. An allocation that ended NODE_FAIL, FAILED, TIMEOUT,
PREEMPTED, OUT_OF_MEMORY, CANCELLED or REQUEUED is an interruption of that cause; its node list
(Slurm's hostlist syntax, ``gpu[001-004,007]``) names the suspects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from clustertwin.errors import Problem, UsageError
from clustertwin.scheduling.traces.sacct import ABSENT, is_sacct, sacct_time
from clustertwin.scheduling.traces.values import BadValue, number
from clustertwin.track.records import LineStats

NEEDED = ("JobID", "State", "Start", "End")
#: sacct state -> the cause an interruption is counted under
CAUSES = {"NODE_FAIL": "node failure", "FAILED": "job failed", "TIMEOUT": "time limit",
          "PREEMPTED": "preempted", "OUT_OF_MEMORY": "out of memory", "CANCELLED": "cancelled",
          "REQUEUED": "requeued", "BOOT_FAIL": "node failure", "DEADLINE": "time limit"}
HOSTS_MAX = 100_000


@dataclass(frozen=True)
class Allocation:
    job: str
    state: str
    start: float
    end: float | None        #: None: still running
    nodes: tuple[str, ...]

    @property
    def cause(self) -> str | None:
        return CAUSES.get(self.state)


def expand_hostlist(text: str) -> list[str]:
    """Slurm hostlist ``a[01-03,7],b2`` -> ``["a01", "a02", "a03", "a7", "b2"]`` (zero padding kept)."""
    out: list[str] = []
    for m in re.finditer(r"([^,\[]+)(?:\[([^\]]*)\])?([^,\[]*)", text.strip()):
        prefix, ranges, suffix = m.group(1), m.group(2), m.group(3)
        if not prefix or prefix in ABSENT or prefix == "None assigned":
            continue
        if ranges is None:
            out.append(prefix + suffix)
            continue
        for part in ranges.split(","):
            lo, sep, hi = part.partition("-")
            if not lo.isdigit() or (sep and not hi.isdigit()):
                raise BadValue(f"node range {part!r} is not N or N-M")
            for n in range(int(lo), int(hi if sep else lo) + 1):
                out.append(f"{prefix}{n:0{len(lo)}d}{suffix}")
                if len(out) > HOSTS_MAX:
                    raise BadValue("node list names more than 100,000 hosts")
    return out


def read_sacct(path: str | Path, as_of: float | None = None,
               text: str | None = None) -> tuple[list[Allocation], LineStats]:
    """The job's allocations in start order (rows after ``as_of`` left out, ends after it open)."""
    p = Path(path)
    stats = LineStats(str(p))
    try:
        lines = (p.read_text(encoding="utf-8", errors="replace") if text is None else text).splitlines()
    except OSError as exc:
        raise UsageError([Problem(str(p), "--sacct", f"a readable sacct file ({exc.strerror or exc})")]) from None
    if not lines or not is_sacct(lines[0]):
        raise UsageError([Problem(str(p), "header", "a 'sacct --parsable2' header row with JobID")])
    header = lines[0].strip().split("|")
    missing = [c for c in NEEDED if c not in header]
    if missing:
        raise UsageError([Problem(str(p), "header", f"sacct field(s) {', '.join(missing)} "
                                  "(export with --format JobID,State,Start,End,ElapsedRaw,NodeList)")])
    out = []
    for no, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) != len(header):
            stats.reject(no, f"{len(parts)} fields, the header has {len(header)}")
            continue
        f = dict(zip(header, parts, strict=True))
        if "." in f["JobID"]:
            stats.other += 1
            continue
        try:
            a = _allocation(f)
        except BadValue as exc:
            stats.reject(no, str(exc))
            continue
        if a is None or (as_of is not None and a.start > as_of):
            stats.other += 1
            continue
        if as_of is not None and a.end is not None and a.end > as_of:
            a = Allocation(a.job, "RUNNING", a.start, None, a.nodes)
        stats.read += 1
        out.append(a)
    return sorted(out, key=lambda a: a.start), stats


def _allocation(f: dict[str, str]) -> Allocation | None:
    state = f["State"].split(" ")[0].strip().upper()
    if f["Start"] in ABSENT:
        return None  # never started (pending, or cancelled before it ran)
    start = sacct_time(f["Start"], "Start").timestamp()
    end = None
    if f["End"] not in ABSENT:
        end = sacct_time(f["End"], "End").timestamp()
    elif f.get("ElapsedRaw", "").strip() and state not in ("RUNNING", "PENDING"):
        end = start + number(f["ElapsedRaw"], "ElapsedRaw")
    if end is not None and end < start:
        raise BadValue("End is before Start")
    nodes = tuple(expand_hostlist(f.get("NodeList", "")))
    return Allocation(f["JobID"][:64], state, start, end if state != "RUNNING" else None, nodes)
