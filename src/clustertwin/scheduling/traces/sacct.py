"""Slurm accounting import: ``sacct --parsable2`` output replays as a trace.

Export (any Slurm >= 18.08; ``--allocations`` leaves the job steps out, optional)::

    sacct --allusers --parsable2 --starttime 2025-01-01 --endtime 2025-02-01 \\
          --format JobID,Submit,Start,End,ElapsedRaw,Timelimit,AllocTRES,State,Account,QOS,Priority \\
          > jobs.sacct

Fields (Slurm's sacct man page): ``|``-separated, a header row of field names, no trailing
``|``. Times are ``YYYY-MM-DDTHH:MM:SS`` (``Unknown``/``None`` when absent); ``Timelimit`` is
``[days-]hours:minutes:seconds`` or ``UNLIMITED``/``Partition_Limit``; ``AllocTRES`` lists
``type=count`` pairs, GPUs as ``gres/gpu=N`` (or only typed ``gres/gpu:MODEL=N``).

Mapping: submit = Submit - the earliest Submit; duration = ElapsedRaw (else End - Start);
GPUs from AllocTRES (ReqTRES / AllocGRES when absent); team = Account (else User); QoS by
name; requested time = Timelimit. Every row is accounted for: a job, a job step (JobID with
``.batch``, ``.extern``, ``.N``; counted under ``rows_skipped``, it belongs to its job), or a
rejection with its reason (never started, still running, no GPUs, unparsable fields).
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import numpy as np

from clustertwin.errors import Problem, ScenarioError
from clustertwin.scheduling.jobs import QOS_LEVELS, Rejections, Workload, make_workload
from clustertwin.scheduling.traces.common import finish_report, read_trace_text
from clustertwin.scheduling.traces.values import MAX_JOB_GPUS, MAX_TIME_S, BadValue, number

NEEDED = ("JobID", "Submit", "Start", "End", "State")
GPU_FIELDS = ("AllocTRES", "ReqTRES", "AllocGRES", "ReqGRES")
ABSENT = ("", "Unknown", "None", "N/A")


def is_sacct(header_line: str) -> bool:
    return "|" in header_line and "JobID" in header_line.split("|")


def sacct_time(text: str, what: str) -> dt.datetime:
    if text in ABSENT:
        raise BadValue(f"no {what} time")
    try:
        # read as UTC: only differences matter, and local daylight-saving jumps would bend them
        return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
    except ValueError:
        raise BadValue(f"{what} is not a YYYY-MM-DDTHH:MM:SS time") from None


def time_limit_s(text: str) -> float:
    """Slurm's time formats in seconds: ``minutes``, ``minutes:seconds``,
    ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes``,
    ``days-hours:minutes:seconds``; NaN for UNLIMITED / Partition_Limit / empty."""
    t = text.strip()
    if t in ABSENT or t.upper() in ("UNLIMITED", "PARTITION_LIMIT", "INVALID"):
        return math.nan
    days, _, rest = t.rpartition("-")
    parts = rest.split(":")
    if len(t) > 32 or not all(x.isdigit() for x in parts) or len(parts) > 3 \
            or (days and not days.isdigit()):
        raise BadValue("Timelimit is not [days-]hours:minutes:seconds")
    v = [int(x) for x in parts]
    if days:  # days-hours[:minutes[:seconds]]
        v += [0] * (3 - len(v))
        secs = int(days) * 86400 + v[0] * 3600 + v[1] * 60 + v[2]
    elif len(v) == 3:
        secs = v[0] * 3600 + v[1] * 60 + v[2]
    elif len(v) == 2:
        secs = v[0] * 60 + v[1]
    else:
        secs = v[0] * 60
    if secs > MAX_TIME_S:
        raise BadValue("Timelimit is too large")
    return float(secs) if secs > 0 else math.nan


def gpus_of(tres: str) -> int:
    """GPU count of a TRES string; 0 when it names no GPU."""
    total, typed = None, 0
    for item in tres.split(","):
        key, sep, val = item.strip().partition("=")
        if not sep or not key.startswith(("gres/gpu", "gpu")):
            continue
        n = number(val.split("(")[0], "GPU count in TRES", 0.0, float(MAX_JOB_GPUS))
        if n != int(n):
            raise BadValue("GPU count in TRES is not a whole number")
        if key in ("gres/gpu", "gpu"):
            total = int(n)
        else:
            typed += int(n)
    return total if total is not None else typed


def _row(f: dict[str, str], gpu_field: str) -> tuple[float, int, float, float]:
    """(submit epoch s, GPUs, duration s, limit s) of one job row, or BadValue."""
    state = f["State"].split(" ")[0]
    submit = sacct_time(f["Submit"], "Submit")
    if f["Start"] in ABSENT:
        raise BadValue(f"never started ({state})")
    start = sacct_time(f["Start"], "Start")
    if f.get("ElapsedRaw", "").strip():
        dur = number(f["ElapsedRaw"], "ElapsedRaw")
    else:
        if f["End"] in ABSENT:
            raise BadValue(f"still running or no End time ({state})")
        dur = (sacct_time(f["End"], "End") - start).total_seconds()
        if dur < 0:
            raise BadValue("End is before Start")
    if f["End"] in ABSENT and state in ("RUNNING", "PENDING", "REQUEUED", "SUSPENDED"):
        raise BadValue(f"still running or no End time ({state})")
    g = gpus_of(f.get(gpu_field, ""))
    if g == 0:
        raise BadValue("no GPUs allocated (CPU-only job)")
    limit = time_limit_s(f.get("Timelimit", ""))
    return submit.timestamp(), g, max(dur, 1.0), limit


def load_sacct(path: str | Path, *, strict: bool = False, text: str | None = None) -> Workload:
    p = Path(path)
    lines = (read_trace_text(p) if text is None else text).splitlines()
    header = lines[0].strip().split("|") if lines else []
    missing = [c for c in NEEDED if c not in header]
    gpu_field = next((g for g in GPU_FIELDS if g in header), None)
    if missing or gpu_field is None:
        need = missing + ([] if gpu_field else ["AllocTRES"])
        raise ScenarioError([Problem(str(p), "header", f"missing sacct field(s) {', '.join(need)}; "
                                     "export with --parsable2 --format as in the README")])
    rej, steps = Rejections(), 0
    names, submit, gpus, dur, lim, teams, qos, prio = [], [], [], [], [], [], [], []
    rows = 0
    for line_no, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        rows += 1
        parts = line.split("|")
        where = f"line {line_no} ({parts[0][:40]})"
        if len(parts) != len(header):
            rej.add(f"{len(parts)} fields, the header has {len(header)}", where)
            continue
        f = dict(zip(header, parts, strict=True))
        if "." in f["JobID"]:
            steps += 1
            continue
        try:
            s, g, d, limit = _row(f, gpu_field)
            pr = number(f["Priority"], "Priority", 0.0, 1e12) if f.get("Priority", "").strip() else 0.0
        except BadValue as exc:
            rej.add(str(exc), where)
            continue
        names.append(f["JobID"][:64])
        submit.append(s)
        gpus.append(g * 1000)
        dur.append(d)
        lim.append(limit)
        teams.append((f.get("Account") or f.get("User") or "default")[:64])
        qos.append(QOS_LEVELS.get(f.get("QOS", ""), 1))
        prio.append(pr)
    notes = ["Slurm sacct export: submit times from the earliest Submit; durations from "
             "ElapsedRaw (else End - Start); GPUs from " + gpu_field]
    skipped = {"job steps (JobID.batch/.extern/.N), counted with their jobs": steps} if steps else {}
    t0 = min(submit) if submit else 0.0
    rel = [x - t0 for x in submit]
    if rel and max(rel) > MAX_TIME_S:
        raise ScenarioError([Problem(str(p), "Submit", "submit times span more than 300 years")])
    rep = finish_report(str(p), rows, len(names), rej, notes, strict, skipped)
    w = make_workload(names, rel, gpus, dur, requested_s=lim, teams=teams, qos=qos, priority=prio,
                      report=rep)
    return w.subset(np.argsort(w.submit_s, kind="stable")) if len(w) else w
