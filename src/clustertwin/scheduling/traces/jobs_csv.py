"""The clustertwin jobs CSV: a trace format any operator can write (see README, "Trace format").

One row per job, comma-separated, a header row naming the columns (any order):

===============  ========  ====================================================================
column           unit      meaning
===============  ========  ====================================================================
``job_id``       text      optional; the job's name in the results (empty = ``job-ROW``)
``submit_s``     s         required; submit time from the start of the trace, >= 0
``gpus``         GPUs      required; whole GPUs (>= 1), or a fraction < 1 of one shared GPU
``duration_s``   s         required; run time on the GPUs, > 0
``requested_s``  s         optional; the user's time limit (empty = modelled, --time-limit-factor)
``team``         text      optional; account / team / virtual cluster (empty = ``default``)
``qos``          name|int  optional; BE, normal, LS, high, Guaranteed ... or a level 0-3
``priority``     number    optional; site priority (higher first under ``priority``)
``checkpoint_s`` s         optional; checkpoint interval (empty = --checkpoint-min)
===============  ========  ====================================================================

Column aliases accepted for other simulators' CSVs: ``num_gpu`` = gpus, ``submit_time`` =
submit_s, ``duration`` = duration_s (the Tiresias simulator's ``60_job.csv`` loads as is).
Every row becomes a job or a counted rejection with its reason (errors under ``--strict``).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from clustertwin.errors import Problem, ScenarioError
from clustertwin.scheduling.jobs import QOS_LEVELS, Rejections, Workload, make_workload
from clustertwin.scheduling.traces.common import finish_report, read_trace_text
from clustertwin.scheduling.traces.values import MAX_JOB_GPUS, BadValue, number

REQUIRED = ("submit_s", "gpus", "duration_s")
ALIASES = {"num_gpu": "gpus", "submit_time": "submit_s", "duration": "duration_s"}


def is_jobs_csv(header: list[str]) -> bool:
    cols = {ALIASES.get(c.strip(), c.strip()) for c in header}
    return {"submit_s", "gpus", "duration_s"} <= cols


def _gpus_milli(text: str) -> int:
    g = number(text, "gpus", 0.0, float(MAX_JOB_GPUS), lo_open=True)
    if g >= 1.0:
        if g != int(g):
            raise BadValue("gpus is more than one GPU but not a whole number")
        return int(g) * 1000
    milli = round(g * 1000)
    if milli < 1:
        raise BadValue("gpus is below one thousandth of a GPU")
    return milli


def _qos(text: str) -> int:
    t = text.strip()
    if t in QOS_LEVELS:
        return QOS_LEVELS[t]
    try:
        level = int(t)
    except ValueError:
        raise BadValue(f"qos is not a known class ({', '.join(k for k in QOS_LEVELS if k)}) "
                       "or a level 0-3") from None
    if not 0 <= level <= 3:
        raise BadValue("qos level outside 0-3")
    return level


def load_jobs_csv(path: str | Path, *, strict: bool = False, text: str | None = None) -> Workload:
    p = Path(path)
    if text is None:
        text = read_trace_text(p)
    reader = csv.reader(io.StringIO(text))
    try:
        header = [ALIASES.get(c.strip(), c.strip()) for c in next(reader, [])]
    except csv.Error as exc:
        raise ScenarioError([Problem(str(p), "header", f"not CSV: {exc}")]) from None
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ScenarioError([Problem(str(p), "columns", f"missing column(s) {', '.join(missing)}; "
                                     f"found {', '.join(header) or 'none'} (see README, Trace format)")])
    col = {c: i for i, c in enumerate(header)}
    rej = Rejections()
    names: list[str] = []
    submit, milli, dur, req, teams, qos, prio, ck = [], [], [], [], [], [], [], []
    rows = 0
    try:
        for line_no, row in enumerate(reader, start=2):
            if not row or not any(c.strip() for c in row):
                continue
            rows += 1
            name = row[col["job_id"]].strip() if "job_id" in col and col["job_id"] < len(row) else ""
            where = f"row {line_no} ({name[:40]})" if name else f"row {line_no}"
            if len(row) != len(header):
                rej.add(f"{len(row)} fields, the header has {len(header)}", where)
                continue
            try:
                s = number(row[col["submit_s"]], "submit_s")
                m = _gpus_milli(row[col["gpus"]])
                d = number(row[col["duration_s"]], "duration_s", lo_open=True)
                r = (number(row[col["requested_s"]], "requested_s", lo_open=True)
                     if "requested_s" in col and row[col["requested_s"]].strip() else np.nan)
                q = _qos(row[col["qos"]]) if "qos" in col and row[col["qos"]].strip() else 1
                pr = (number(row[col["priority"]], "priority", -1e12, 1e12)
                      if "priority" in col and row[col["priority"]].strip() else 0.0)
                c = (number(row[col["checkpoint_s"]], "checkpoint_s", lo_open=True)
                     if "checkpoint_s" in col and row[col["checkpoint_s"]].strip() else np.inf)
            except BadValue as exc:
                rej.add(str(exc), where)
                continue
            team = row[col["team"]].strip() if "team" in col else ""
            names.append(name or f"job-{line_no}")
            submit.append(s)
            milli.append(m)
            dur.append(d)
            req.append(r)
            teams.append(team[:64] or "default")
            qos.append(q)
            prio.append(pr)
            ck.append(c)
    except csv.Error as exc:
        raise ScenarioError([Problem(str(p), f"row {reader.line_num}", f"not CSV: {exc}")]) from None
    rep = finish_report(str(p), rows, len(names), rej, ["clustertwin jobs CSV"], strict)
    w = make_workload(names, submit, milli, dur, requested_s=req, teams=teams, qos=qos,
                      priority=prio, checkpoint_s=ck, report=rep)
    return w.subset(np.argsort(w.submit_s, kind="stable")) if len(w) else w
