"""Philly-derived workloads: Gavel per-VC traces (MIT) and Sia / Pollux workloads.

Only arrival times and GPU counts in these files are real (they come from Philly); the job
types are synthetic and the run times are not in the files (Gavel and Sia derive them from
throughput models that are not shipped here). Durations are therefore modelled:

* Gavel: the job's ``total_steps`` rank is mapped onto a lognormal with Philly's published
  median and mean run time (profile ``philly``), so longer jobs stay longer;
* Sia / Pollux: Sia's generator picked the application by the job's GPU-time bucket (< 1 GPU-h
  cifar10/ncf, < 10 deepspeech2/bert, < 100 yolov3, else imagenet;
  sia-simulator/utils/generate_workload.py). A job gets the geometric middle of its bucket
  (0.32, 3.2, 32, 320 GPU-hours) divided by its replicas.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from clustertwin.errors import Problem, ScenarioError
from clustertwin.scheduling.jobs import Rejections, TraceReport, Workload, make_workload
from clustertwin.scheduling.traces.common import (
    finish_report,
    lognormal_quantiles,
    profile,
    read_csv,
    read_trace_text,
)
from clustertwin.scheduling.traces.locate import trace_stem
from clustertwin.scheduling.traces.values import BadValue, number, whole

#: GPU-hours per application: geometric middle of Sia's GPU-time bucket (see module doc).
APP_GPU_HOURS = {"cifar10": math.sqrt(0.1), "ncf": math.sqrt(0.1), "deepspeech2": math.sqrt(10),
                 "bert": math.sqrt(10), "yolov3": math.sqrt(1000), "imagenet": math.sqrt(1e5)}


def load_gavel(paths: list[Path] | Path, *, strict: bool = False) -> Workload:
    """Gavel 7-column TSV traces; one file per virtual cluster (the file stem is the team)."""
    files = [paths] if isinstance(paths, Path) else list(paths)
    if not files:
        raise ScenarioError([Problem("gavel", "", "no .trace files found")])
    rej = Rejections()
    names, submit, gpus, steps, teams = [], [], [], [], []
    rows_read = 0
    for f in files:
        team = trace_stem(f)  # the virtual cluster (a packaged file ends in .trace.gz)
        lines = read_trace_text(f).splitlines()
        for i, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            rows_read += 1
            where = f"{f.name} line {i}"
            parts = line.split("\t")
            if len(parts) != 7:
                rej.add("not 7 tab-separated columns", where)
                continue
            try:
                st = number(parts[4], "total_steps", hi=1e15, lo_open=True)
                t = number(parts[5], "arrival_time")
                g = whole(parts[6], "scale_factor", lo=1)
            except BadValue as exc:
                rej.add(f"unparsable or out-of-range total_steps, arrival_time or scale_factor: {exc}",
                        where)
                continue
            names.append(f"{team}-{i}")
            submit.append(t)
            gpus.append(g)
            steps.append(st)
            teams.append(team)
    prof = profile("philly")
    n = len(names)
    if n:
        ranks = np.argsort(np.argsort(np.asarray(steps), kind="stable"), kind="stable")
        q = np.clip((ranks + 0.5) / n, 0.001, 0.999)
        dur = lognormal_quantiles(q, prof["run_median_s"], prof["run_mean_s"], prof["run_max_s"])
    else:
        dur = np.zeros(0)
    notes = ["durations modelled from total_steps rank on Philly's published run-time "
             f"median/mean ({prof['run_source']})"]
    src = str(files[0].parent if len(files) > 1 else files[0])
    rep = finish_report(src, rows_read, n, rej, notes, strict)
    w = make_workload(names, submit, np.asarray(gpus) * 1000, dur, teams=teams, report=rep)
    return w.subset(np.argsort(w.submit_s, kind="stable")) if n else w


def load_sia(path: Path, *, strict: bool = False, team: str | None = None,
             text: str | None = None) -> Workload:
    """Sia / Pollux workload CSV: ``name, time, application, num_replicas, batch_size``
    (``text``: the file's text when the caller has read it already)."""
    rows, _ = read_csv(path, ["name", "time", "application", "num_replicas"], text)
    rej = Rejections()
    names, submit, gpus, dur = [], [], [], []
    for i, r in enumerate(rows, start=2):
        where = f"row {i} ({r.get('name', '?')})"
        try:
            t = number(r["time"], "time")
            g = whole(r["num_replicas"], "num_replicas", lo=1)
        except BadValue as exc:
            rej.add(f"unparsable or out-of-range time or num_replicas: {exc}", where)
            continue
        app = r["application"]
        if app not in APP_GPU_HOURS:
            rej.add("unknown application (no GPU-time bucket)", where)
            continue
        names.append(r["name"])
        submit.append(t)
        gpus.append(g)
        dur.append(APP_GPU_HOURS[app] * 3600.0 / g)
    notes = ["durations from Sia's GPU-time buckets (geometric middle) / replicas; one GPU "
             "per replica"]
    rep: TraceReport = finish_report(str(path), len(rows), len(names), rej, notes, strict)
    w = make_workload(names, submit, np.asarray(gpus, dtype=np.int64) * 1000, dur,
                      teams=[team or path.parent.name] * len(names), report=rep)
    return w.subset(np.argsort(w.submit_s, kind="stable")) if len(w) else w
