"""Trace loaders (registry) for ``shared/traces`` and the synthetic generator.

``--trace`` accepts a name or a file:

* ``openb`` or ``openb:VARIANT`` (``openb_pod_list_VARIANT.csv``, default ``default``);
* ``gavel`` (all virtual clusters of seed 0) or ``gavel:VC``;
* ``sia-philly[:N]``, ``sia-saturn[:N]``, ``pollux[:N]`` (workload file N, default 1);
* ``synthetic:PROFILE[:JOBS]`` (profiles: ``philly``, ``openb``);
* a path to an openb-style pod CSV, a Sia/Pollux CSV or a Gavel ``.trace`` file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from clustertwin.errors import Problem, UsageError
from clustertwin.scheduling.jobs import Workload
from clustertwin.scheduling.registry import Registry
from clustertwin.scheduling.traces.locate import ENV, traces_dir
from clustertwin.scheduling.traces.openb import load_openb
from clustertwin.scheduling.traces.philly import load_gavel, load_sia
from clustertwin.scheduling.traces.synthetic import generate

__all__ = ["load_trace", "traces_dir", "load_openb", "load_gavel", "load_sia", "generate",
           "TRACES"]

Loader = Callable[[str, bool], Workload]
TRACES: Registry[Loader] = Registry("trace")


def _need_dir() -> Path:
    d = traces_dir()
    if d is None:
        raise UsageError([Problem("--trace", "", "shared/traces not found; set "
                                  f"{ENV} to the folder holding the trace sub-folders")])
    return d


def _openb(arg: str, strict: bool) -> Workload:
    variant = arg or "default"
    p = _need_dir() / "alibaba-gpu-v2023-openb" / f"openb_pod_list_{variant}.csv"
    if not p.is_file():
        raise UsageError([Problem(str(p), "--trace", f"no openb variant {variant!r}")])
    return load_openb(p, strict=strict)


def _gavel(arg: str, strict: bool) -> Workload:
    d = _need_dir() / "philly-derived-gavel" / "seed=0"
    files = sorted(d.glob("*.trace")) if not arg else [d / f"{arg}.trace"]
    if any(not f.is_file() for f in files) or not files:
        raise UsageError([Problem(str(d), "--trace", f"no Gavel trace {arg or '*'}")])
    return load_gavel(files, strict=strict)


def _sia(folder: str, team: str) -> Loader:
    def load(arg: str, strict: bool) -> Workload:
        p = _need_dir() / folder / f"workload-{arg or '1'}.csv"
        if not p.is_file():
            raise UsageError([Problem(str(p), "--trace", "no such workload file")])
        return load_sia(p, strict=strict, team=team)

    return load


TRACES.add("openb", _openb)
TRACES.add("gavel", _gavel)
TRACES.add("sia-philly", _sia("sia-workloads/philly", "philly"))
TRACES.add("sia-saturn", _sia("sia-workloads/saturn", "saturn"))
TRACES.add("pollux", _sia("pollux-workloads/workloads-realistic", "pollux"))


def load_trace(arg: str, *, strict: bool = False, cluster_gpus: int = 0, max_node_gpus: int = 8,
               rng: np.random.Generator | None = None, load: float = 0.9) -> Workload:
    """Load ``--trace`` (see the module doc)."""
    p = Path(arg)
    if p.suffix in (".csv", ".trace") and p.exists():
        if p.suffix == ".trace":
            return load_gavel([p], strict=strict)
        head = p.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
        if "application" in head:
            return load_sia(p, strict=strict)
        return load_openb(p, strict=strict)
    name, _, rest = arg.partition(":")
    if name == "synthetic":
        prof, _, njobs = rest.partition(":")
        try:
            jobs = int(njobs or 10000)
        except ValueError:
            raise UsageError([Problem("--trace", arg, "synthetic:PROFILE:JOBS needs a whole "
                                      "number of jobs")]) from None
        return generate(prof or "philly", jobs, max(cluster_gpus, 1),
                        rng or np.random.default_rng(0), load=load, max_node_gpus=max_node_gpus)
    if name not in TRACES and (p.suffix or "/" in arg):
        raise UsageError([Problem(arg, "--trace", "file not found")])
    return TRACES.get(name, path="--trace")(rest, strict)
