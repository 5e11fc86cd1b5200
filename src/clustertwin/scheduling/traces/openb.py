"""Alibaba GPU v2023 "openb" pod lists (Weng et al., ATC'23; CC BY 4.0).

Columns: ``name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos, pod_phase,
creation_time, deletion_time, scheduled_time`` (seconds from trace start). A pod becomes a
job submitted at ``creation_time`` that runs ``deletion_time - scheduled_time`` seconds (at
least 1 s) on ``num_gpu x gpu_milli`` milli-GPUs. Pods never scheduled (Pending) or never
deleted cannot be replayed and are rejected with that reason. CPU-only pods are rejected by
default (``cpu_only="keep"`` keeps them as jobs that need no GPU). There are no users or teams;
the QoS class gives the job's QoS level.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from clustertwin.scheduling.jobs import QOS_LEVELS, Rejections, Workload, make_workload
from clustertwin.scheduling.traces.common import finish_report, read_csv
from clustertwin.scheduling.traces.values import MAX_JOB_GPUS, BadValue, number, whole

REQUIRED = ["name", "num_gpu", "gpu_milli", "creation_time", "scheduled_time", "deletion_time"]


def load_openb(path: str | Path, *, strict: bool = False, cpu_only: str = "reject",
               max_duration_s: float | None = None, text: str | None = None) -> Workload:
    p = Path(path)
    rows, cols = read_csv(p, REQUIRED, text)
    rej = Rejections()
    names, submit, milli, dur, qos = [], [], [], [], []
    clamped = 0
    unknown_qos: set[str] = set()
    for i, r in enumerate(rows, start=2):
        where = f"row {i} ({r.get('name', '?')})"
        try:
            ng = whole(r["num_gpu"], "num_gpu", lo=-MAX_JOB_GPUS)
            gm = whole(r["gpu_milli"] or 0, "gpu_milli", lo=-1000, hi=1_000_000)
            c = number(r["creation_time"], "creation_time")
        except BadValue as exc:
            rej.add(f"unparsable or out-of-range number: {exc}", where)
            continue
        if not r["scheduled_time"]:
            rej.add("never scheduled (no scheduled_time, e.g. Pending pods)", where)
            continue
        if not r["deletion_time"]:
            rej.add("never ended (no deletion_time)", where)
            continue
        try:
            s = number(r["scheduled_time"], "scheduled_time")
            d = number(r["deletion_time"], "deletion_time")
        except BadValue as exc:
            rej.add(f"unparsable or out-of-range time: {exc}", where)
            continue
        if ng < 0 or gm < 0 or gm > 1000:
            rej.add("num_gpu negative or gpu_milli outside 0-1000", where)
            continue
        if ng > 1 and gm != 1000:
            rej.add("part of several GPUs (num_gpu > 1 with gpu_milli < 1000)", where)
            continue
        m = ng * gm if ng else 0
        if m == 0 and cpu_only != "keep":
            rej.add("CPU-only pod (num_gpu = 0); not a GPU job", where)
            continue
        length = d - s
        if length < 1:
            clamped += 1
            length = 1.0
        if max_duration_s is not None and length > max_duration_s:
            rej.add(f"runs longer than the {max_duration_s:g} s cut-off", where)
            continue
        q = r.get("qos", "")
        if q not in QOS_LEVELS:
            unknown_qos.add(q)
        names.append(r["name"])
        submit.append(c)
        milli.append(m)
        dur.append(length)
        qos.append(QOS_LEVELS.get(q, 1))
    notes = []
    if clamped:
        notes.append(f"{clamped} pods ran under 1 s; counted as 1 s")
    if unknown_qos:
        notes.append(f"unknown qos {sorted(unknown_qos)} read as level 1")
    if "qos" not in cols:
        notes.append("no qos column: every job at level 1")
    rep = finish_report(str(p), len(rows), len(names), rej, notes, strict)
    order = np.argsort(np.asarray(submit), kind="stable")
    w = make_workload(names, submit, milli, dur, qos=qos, report=rep)
    return w.subset(order) if len(w) else w


def pai_sim_input(w: Workload, jobs: int, *, arrival_rate: int = 1000, interval_s: float = 60.0,
                  seed: int = 42) -> Workload:
    """The input the Alibaba PAI-2020 simulator builds (clusterdata
    ``cluster-trace-gpu-v2020/simulator/simulator.py`` at 7a6c496): shuffle the jobs with
    Python's ``random.Random(seed)``, keep the first ``jobs``, then re-time arrivals in
    submit order, ``arrival_rate`` jobs every ``interval_s``. Used to compare with the runs in
    scheduling-anchors.md section 3.3 (``-n JOBS -g GPUS -r 1000``)."""
    import random
    from dataclasses import replace

    idx = list(range(len(w)))
    random.Random(seed).shuffle(idx)  # noqa: S311 - replicates the reference simulator
    keep = np.asarray(idx[:jobs])
    sub = w.subset(keep)
    order = np.lexsort((keep, sub.submit_s))
    sub = sub.subset(order)
    arrivals = (np.arange(len(sub)) // arrival_rate) * interval_s
    return replace(sub, submit_s=arrivals.astype(np.float64))
