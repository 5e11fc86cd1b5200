"""Trace loaders (registry) for the packaged traces (:mod:`.locate`) and the synthetic generator.

``--trace`` accepts a name or a file:

* ``openb`` or ``openb:VARIANT`` (``openb_pod_list_VARIANT.csv``, default ``default``);
* ``gavel`` (all virtual clusters of seed 0) or ``gavel:VC``;
* ``sia-philly[:N]``, ``sia-saturn[:N]``, ``pollux[:N]`` (workload file N, default 1);
* ``tiresias`` (the Tiresias simulator's 60-job sample, as a jobs CSV);
* ``synthetic:PROFILE[:JOBS]`` (profiles: ``philly``, ``openb``);
* a path to a clustertwin jobs CSV (the documented format, :mod:`.jobs_csv`), a Slurm
  ``sacct --parsable2`` export (:mod:`.sacct`), an openb-style pod CSV, a Sia/Pollux CSV or a
  Gavel ``.trace`` file; the kind is read from the header row.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from clustertwin.errors import Problem, UsageError
from clustertwin.scheduling.jobs import Workload
from clustertwin.scheduling.registry import Registry
from clustertwin.scheduling.traces.jobs_csv import is_jobs_csv, load_jobs_csv
from clustertwin.scheduling.traces.locate import find_file, find_files, not_found, traces_dir
from clustertwin.scheduling.traces.openb import load_openb
from clustertwin.scheduling.traces.philly import load_gavel, load_sia
from clustertwin.scheduling.traces.sacct import is_sacct, load_sacct
from clustertwin.scheduling.traces.synthetic import generate

__all__ = ["load_trace", "traces_dir", "load_openb", "load_gavel", "load_sia", "load_jobs_csv",
           "load_sacct", "generate", "TRACES"]

Loader = Callable[[str, bool], Workload]
TRACES: Registry[Loader] = Registry("trace")


def _need(relative: str, what: str) -> Path:
    p = find_file(relative)
    if p is None:
        raise not_found(what, relative)
    return p


def _openb(arg: str, strict: bool) -> Workload:
    variant = arg or "default"
    p = _need(f"alibaba-gpu-v2023-openb/openb_pod_list_{variant}.csv", f"openb:{variant}")
    return load_openb(p, strict=strict)


def _gavel(arg: str, strict: bool) -> Workload:
    folder = "philly-derived-gavel/seed=0"
    files = find_files(folder, ".trace") if not arg else [_need(f"{folder}/{arg}.trace", arg)]
    if not files:
        raise not_found("gavel", folder)
    return load_gavel(files, strict=strict)


def _sia(folder: str, team: str, name: str) -> Loader:
    def load(arg: str, strict: bool) -> Workload:
        p = _need(f"{folder}/workload-{arg or '1'}.csv", f"{name}:{arg or '1'}")
        return load_sia(p, strict=strict, team=team)

    return load


def _tiresias(arg: str, strict: bool) -> Workload:
    p = _need(f"tiresias-sample/{arg or '60_job'}.csv", f"tiresias:{arg or '60_job'}")
    return load_jobs_csv(p, strict=strict)


def load_file(p: Path, strict: bool) -> Workload:
    """A trace file of any supported kind, told apart by its header row (the file is read
    once; the loader parses the same text)."""
    if p.name.endswith((".trace", ".trace.gz")):
        return load_gavel([p], strict=strict)
    from clustertwin.scheduling.traces.common import read_trace_text

    text = read_trace_text(p)
    head = text.split("\n", 1)[0].strip()
    if is_sacct(head):
        return load_sacct(p, strict=strict, text=text)
    if is_jobs_csv(head.split(",")):
        return load_jobs_csv(p, strict=strict, text=text)
    if "application" in head.split(","):
        return load_sia(p, strict=strict, text=text)
    return load_openb(p, strict=strict, text=text)


TRACES.add("openb", _openb)
TRACES.add("tiresias", _tiresias)
TRACES.add("gavel", _gavel)
TRACES.add("sia-philly", _sia("sia-workloads/philly", "philly", "sia-philly"))
TRACES.add("sia-saturn", _sia("sia-workloads/saturn", "saturn", "sia-saturn"))
TRACES.add("pollux", _sia("pollux-workloads/workloads-realistic", "pollux", "pollux"))


def load_trace(arg: str, *, strict: bool = False, cluster_gpus: int = 0, max_node_gpus: int = 8,
               rng: np.random.Generator | None = None, load: float = 0.9) -> Workload:
    """Load ``--trace`` (see the module doc)."""
    p = Path(arg)
    if (p.suffix or "/" in arg) and os.path.lexists(p):
        return load_file(p, strict)
    name, _, rest = arg.partition(":")
    if name == "synthetic":
        prof, _, njobs = rest.partition(":")
        try:
            jobs = int(njobs or 10000) if len(njobs) < 12 else -1
            if not 1 <= jobs <= 2_000_000:
                raise ValueError
        except ValueError:
            raise UsageError([Problem("--trace", arg, "synthetic:PROFILE:JOBS needs a whole "
                                      "number of jobs from 1 to 2,000,000")]) from None
        return generate(prof or "philly", jobs, max(cluster_gpus, 1),
                        rng or np.random.default_rng(0), load=load, max_node_gpus=max_node_gpus)
    if name not in TRACES and (p.suffix or "/" in arg):
        raise UsageError([Problem(arg, "--trace", "file not found")])
    return TRACES.get(name, path="--trace")(rest, strict)
