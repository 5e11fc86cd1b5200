"""The cluster the scheduler sees: nodes with GPUs, grouped by NVLink domain, leaf group and
scalable unit (SU).

A :class:`ClusterSpec` is frozen; each run builds its own mutable state from it
(:mod:`clustertwin.scheduling.state`). Groups are numbered per node: ``domain[i]`` is the NVLink
domain of node ``i``, ``leaf[i]`` its leaf-switch group, ``su[i]`` its scalable unit. In a
rail-optimized fat tree every node of an SU reaches all of that SU's leaf switches, so the
leaf group and the SU coincide unless told otherwise.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from clustertwin.errors import Problem, ScenarioError, UsageError

#: Nodes per scalable unit when nothing better is known (node lists carry no topology):
#: NVIDIA DGX SuperPOD reference architectures build SUs of 32 DGX nodes.
DEFAULT_NODES_PER_SU = 32


@dataclass(frozen=True, eq=False)
class ClusterSpec:
    """Nodes and their grouping. ``pooled`` clusters have one node whose GPU capacity is
    shared as a single pool (fractions add up across GPUs), as in the Alibaba PAI-2020
    simulator's one-big-node mode; used to compare with that simulator."""

    name: str
    node_gpus: np.ndarray
    node_names: tuple[str, ...]
    domain: np.ndarray
    leaf: np.ndarray
    su: np.ndarray
    domain_gpus: int
    source: str = ""
    pooled: bool = False
    notes: tuple[str, ...] = ()

    @property
    def nodes(self) -> int:
        return len(self.node_gpus)

    @property
    def gpus(self) -> int:
        return int(self.node_gpus.sum())

    @property
    def max_node_gpus(self) -> int:
        return int(self.node_gpus.max()) if self.nodes else 0

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "nodes": self.nodes, "gpus": self.gpus,
                "max_gpus_per_node": self.max_node_gpus, "nvlink_domain_gpus": self.domain_gpus,
                "leaf_groups": int(len(np.unique(self.leaf))),
                "scalable_units": int(len(np.unique(self.su))), "pooled": self.pooled,
                "source": self.source, "notes": list(self.notes)}


def uniform(nodes: int, gpus_per_node: int, *, nvlink_domain_gpus: int | None = None,
            nodes_per_su: int = DEFAULT_NODES_PER_SU, nodes_per_leaf: int | None = None,
            name: str = "uniform") -> ClusterSpec:
    """``nodes`` identical nodes, numbered so that domains, leaf groups and SUs are contiguous."""
    if nodes <= 0 or gpus_per_node <= 0:
        raise UsageError([Problem(name, "cluster", "needs at least one node with GPUs")])
    dom_gpus = max(gpus_per_node, nvlink_domain_gpus or gpus_per_node)
    nodes_per_dom = max(1, dom_gpus // gpus_per_node)
    idx = np.arange(nodes)
    per_su = max(1, nodes_per_su)
    per_leaf = max(1, nodes_per_leaf or per_su)
    return ClusterSpec(name=name, node_gpus=np.full(nodes, gpus_per_node, dtype=np.int64),
                       node_names=tuple(f"n{i:05d}" for i in range(nodes)),
                       domain=idx // nodes_per_dom, leaf=idx // per_leaf, su=idx // per_su,
                       domain_gpus=dom_gpus)


#: Largest cluster a replay builds (the scenario bound, scenario.MAX_GPUS) and node size.
MAX_CLUSTER_GPUS = 1_048_576
MAX_NODE_GPUS = 4096


def pooled(gpus: int, name: str = "pool") -> ClusterSpec:
    """One pool of ``gpus`` GPUs (no nodes, no topology; fractional demands simply add)."""
    one = np.zeros(1, dtype=np.int64)
    return ClusterSpec(name=name, node_gpus=np.array([gpus], dtype=np.int64),
                       node_names=("pool",), domain=one, leaf=one, su=one, domain_gpus=gpus,
                       source=f"pooled {gpus} GPUs", pooled=True)


def from_node_list(path: str | Path, *, nodes_per_su: int = DEFAULT_NODES_PER_SU) -> ClusterSpec:
    """Read a node-list CSV: a name column (``sn``, ``name`` or ``node``) and a GPU-count column
    (``gpu`` or ``gpus``); optional ``su``/``leaf``/``domain`` columns give the grouping.
    Nodes without GPUs are left out (they cannot run GPU jobs) and counted in the notes."""
    import io

    from clustertwin.scheduling.traces.common import read_trace_text

    p = Path(path)
    try:  # the input layer: regular file, size cap, UTF-8
        rows = list(csv.DictReader(io.StringIO(read_trace_text(p))))
    except csv.Error as exc:
        raise ScenarioError([Problem(str(p), "", f"not CSV: {exc}")]) from None
    if not rows:
        raise ScenarioError([Problem(str(p), "", "node list is empty")])
    cols = set(rows[0])
    name_col = next((c for c in ("sn", "name", "node") if c in cols), None)
    gpu_col = next((c for c in ("gpu", "gpus", "num_gpu") if c in cols), None)
    if gpu_col is None:
        raise ScenarioError([Problem(str(p), "columns", "node list needs a GPU-count column "
                                     f"(gpu or gpus); found {', '.join(sorted(cols))}")])
    names, gpus, groups = [], [], {"su": [], "leaf": [], "domain": []}
    problems: list[Problem] = []
    cpu_only = 0
    for i, r in enumerate(rows, start=2):
        try:
            g = int(float(r[gpu_col]))
            if not -1 < g <= MAX_NODE_GPUS:
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            problems.append(Problem(str(p), f"row {i}, column {gpu_col}",
                                    f"not a GPU count from 0 to {MAX_NODE_GPUS}: {str(r[gpu_col])[:40]!r}"))
            continue
        if g <= 0:
            cpu_only += 1
            continue
        names.append(r[name_col] if name_col else f"n{i - 2:05d}")
        gpus.append(g)
        for k in groups:
            groups[k].append(r.get(k))
    if problems:
        raise ScenarioError(problems[:10])
    if not gpus:
        raise ScenarioError([Problem(str(p), gpu_col, "no node has GPUs")])
    n = len(gpus)
    idx = np.arange(n)

    def grouping(key: str, default: np.ndarray) -> np.ndarray:
        vals = groups[key]
        if all(v not in (None, "") for v in vals):
            _, codes = np.unique(np.asarray(vals, dtype=str), return_inverse=True)
            return codes.astype(np.int64)
        return default

    su = grouping("su", idx // max(1, nodes_per_su))
    leaf = grouping("leaf", su)
    domain = grouping("domain", idx)
    notes = [f"{n} GPU nodes read from {p.name}"]
    if cpu_only:
        notes.append(f"{cpu_only} nodes without GPUs left out")
    if not groups["su"] or groups["su"][0] in (None, ""):
        notes.append(f"no topology columns: {nodes_per_su} nodes per SU assumed, in file order")
    garr = np.asarray(gpus, dtype=np.int64)
    return ClusterSpec(name=p.stem, node_gpus=garr, node_names=tuple(names), domain=domain,
                       leaf=leaf, su=su, domain_gpus=int(garr.max()), source=str(p),
                       notes=tuple(notes))


def from_scenario(path: str | Path, catalog_dirs: list[Path] | None = None) -> ClusterSpec:
    """Cluster of a scenario: the nodes and scalable units of the design ``plan`` builds for it
    (spares included; a deadline scenario's solved size), else, should the design stage be
    unavailable, computed from the scenario and catalog (nodes = GPUs / GPUs per node; nodes per
    SU = switch ports / 2). NVLink domain from the node entry."""
    from clustertwin.scenario.load import load_inputs

    scenario, catalog = load_inputs(path, catalog_dirs)
    node = catalog.node(scenario.cluster.node)
    gpn = int(node.gpus)
    dom = int(node.nvlink_domain_gpus or gpn)
    notes: list[str] = []
    gpus = scenario.cluster.gpus
    nodes = per_su = None
    from clustertwin.plan import plan_through

    d = plan_through(scenario, catalog).design  # the plan's own design (deadline rounds included)
    if d is not None:
        nodes, sus = int(d.nodes), int(d.scalable_units)
        per_su = math.ceil(nodes / sus) if sus else None
        notes.append("nodes and scalable units from the cluster design")
    if not nodes:
        if not gpus:
            raise ScenarioError([Problem(str(path), "cluster.gpus",
                                         "the scheduler needs a GPU count (cluster.gpus)")])
        nodes = math.ceil(int(gpus) / gpn) + int(scenario.cluster.spare_nodes or 0)
    if not per_su:
        try:
            fab = catalog.fabric(scenario.cluster.fabric.technology)
            sw = catalog.get("switch", fab.switch)
            per_su = max(1, int(sw.ports) // 2)
            notes.append(f"{per_su} nodes per SU = {sw.id} ports / 2")
        except Exception:  # noqa: BLE001
            per_su = DEFAULT_NODES_PER_SU
            notes.append(f"fabric switch unknown; {per_su} nodes per SU assumed")
    spec = uniform(int(nodes), gpn, nvlink_domain_gpus=dom, nodes_per_su=int(per_su),
                   name=str(scenario.name))
    return replace(spec, source=str(path), notes=tuple(notes))


def load_cluster(arg: str, catalog_dirs: list[Path] | None = None) -> ClusterSpec:
    """``--cluster``: a scenario (.yaml/.yml/.toml), a node-list CSV, or ``pool:GPUS`` /
    ``uniform:NODESxGPUS``."""
    if arg.startswith("pool:"):
        return pooled(_int(arg[5:], arg))
    if arg.startswith("uniform:"):
        n, _, g = arg[8:].partition("x")
        nodes, per = _int(n, arg), _int(g or "8", arg)
        if nodes * per > MAX_CLUSTER_GPUS or per > MAX_NODE_GPUS:
            raise UsageError([Problem(arg, "--cluster", f"at most {MAX_CLUSTER_GPUS:,} GPUs and "
                                      f"{MAX_NODE_GPUS:,} per node")])
        return uniform(nodes, per, name=arg)
    p = Path(arg)
    if not p.exists():
        raise UsageError([Problem(arg, "--cluster", "file not found (give a scenario, a node-list "
                                  "CSV, pool:GPUS or uniform:NODESxGPUS)")])
    if p.name.lower().endswith((".csv", ".csv.gz")):
        return from_node_list(p)
    return from_scenario(p, catalog_dirs)


def _int(s: str, arg: str) -> int:
    try:
        v = int(s) if len(s) < 12 else -1
    except ValueError:
        raise UsageError([Problem(arg, "--cluster", f"{s!r} is not a whole number")]) from None
    if not 0 < v <= MAX_CLUSTER_GPUS:
        raise UsageError([Problem(arg, "--cluster", f"must be a whole number from 1 to {MAX_CLUSTER_GPUS:,}")])
    return v
