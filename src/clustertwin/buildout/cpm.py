"""Critical path method on the step graph: compile, forward/backward pass, slack, critical path.

The graph is compiled once into topological order with integer predecessor/successor lists;
both the deterministic pass here and the Monte Carlo pass in :mod:`.montecarlo` walk it.
Relations are finish-to-start with zero lag; a step with no successor (other than go-live)
feeds go-live implicitly so the project ends when every step has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from clustertwin.errors import Problem, UsageError

#: Two finish times closer than this (days) count as equal when tracing the critical path.
TIE_DAYS = 1e-6


@dataclass(frozen=True)
class Network:
    """The step graph in topological order (index i is step ``numbers[i]``)."""

    numbers: tuple[int, ...]
    preds: tuple[tuple[int, ...], ...]
    succs: tuple[tuple[int, ...], ...]
    sink: int

    @property
    def size(self) -> int:
        return len(self.numbers)

    def index(self) -> dict[int, int]:
        return {n: i for i, n in enumerate(self.numbers)}


def _cycle_message(after: Mapping[int, Sequence[int]]) -> str:
    import networkx as nx

    g = nx.DiGraph()
    g.add_edges_from((p, n) for n, ps in after.items() for p in ps)
    try:
        cyc = nx.find_cycle(g)
    except nx.NetworkXNoCycle:  # pragma: no cover - only called when Kahn found one
        return "the predecessors form a cycle"
    loop = " -> ".join(str(u) for u, _ in cyc) + f" -> {cyc[0][0]}"
    return f"the predecessors form a cycle: {loop}"


def compile_network(
    after: Mapping[int, Sequence[int]], go_live: int, source: str = "steps", key: str = ""
) -> Network:
    """Topologically order the steps (``after`` maps step -> predecessors).

    Raises :class:`UsageError` on unknown predecessors or a cycle. A graph compiled before
    (the same steps and predecessors, in the same order) is read from a small cache: every
    plan over one step book and profile has the same graph, whatever its seed or quantities,
    and a :class:`Network` is immutable."""
    return _compiled(tuple((n, tuple(ps)) for n, ps in after.items()), go_live, source, key)


@lru_cache(maxsize=32)
def _compiled(after: tuple[tuple[int, tuple[int, ...]], ...], go_live: int, source: str,
              key: str) -> Network:
    return _compile(dict(after), go_live, source, key)


def _compile(after: Mapping[int, Sequence[int]], go_live: int, source: str, key: str) -> Network:
    known = set(after)
    problems = [
        Problem(source, f"step.{n}.after", f"unknown step {p}")
        for n, ps in after.items()
        for p in ps
        if p not in known
    ]
    if go_live not in known:
        problems.append(Problem(source, "steps", f"go-live step {go_live} is missing"))
    if problems:
        raise UsageError(problems)
    preds = {n: sorted(set(ps)) for n, ps in after.items()}
    has_succ = {p for ps in preds.values() for p in ps}
    for n in preds:  # loose ends feed go-live
        if n != go_live and n not in has_succ and n not in preds[go_live]:
            preds[go_live].append(n)
    indeg = {n: len(ps) for n, ps in preds.items()}
    succ: dict[int, list[int]] = {n: [] for n in preds}
    for n, ps in preds.items():
        for p in ps:
            succ[p].append(n)
    ready = sorted(n for n, d in indeg.items() if d == 0)
    order: list[int] = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for s in sorted(succ[n]):
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
        ready.sort()
    if len(order) != len(preds):
        raise UsageError([Problem(source, key or "step.after", _cycle_message(preds))])
    if order[-1] != go_live:  # go-live depends on every loose end, so it is last
        raise UsageError([Problem(source, f"step.{go_live}", "go-live must come after every step")])
    idx = {n: i for i, n in enumerate(order)}
    return Network(
        numbers=tuple(order),
        preds=tuple(tuple(sorted(idx[p] for p in preds[n])) for n in order),
        succs=tuple(tuple(sorted(idx[s] for s in succ[n])) for n in order),
        sink=idx[go_live],
    )


@dataclass(frozen=True)
class CPMResult:
    """Deterministic schedule, days from the start, indexed like ``Network.numbers``."""

    es: np.ndarray
    ef: np.ndarray
    ls: np.ndarray
    lf: np.ndarray
    length: float

    @property
    def slack(self) -> np.ndarray:
        return self.ls - self.es


def cpm(net: Network, durations: np.ndarray) -> CPMResult:
    """Forward and backward pass with one duration per step (days)."""
    d = np.asarray(durations, dtype=float)
    n = net.size
    dd = d.tolist()  # Python floats: the same IEEE doubles, without NumPy's per-item cost
    efl = [0.0] * n
    for i, pr in enumerate(net.preds):
        efl[i] = (max([efl[p] for p in pr]) if pr else 0.0) + dd[i]
    length = efl[net.sink]
    lsl = [0.0] * n
    for i in range(n - 1, -1, -1):
        su = net.succs[i]
        lsl[i] = (min([lsl[s] for s in su]) if su else length) - dd[i]
    ef, ls = np.array(efl), np.array(lsl)
    return CPMResult(es=ef - d, ef=ef, ls=ls, lf=ls + d, length=length)


def critical_path(net: Network, res: CPMResult) -> list[int]:
    """Step numbers of one zero-slack chain from a start step to go-live, in order.

    Walks back from go-live to the predecessor that finishes last (ties: lowest step number)."""
    path = [net.sink]
    i = net.sink
    while net.preds[i]:
        target = res.es[i]
        cands = [p for p in net.preds[i] if abs(res.ef[p] - target) <= TIE_DAYS]
        if not cands:  # pragma: no cover - a start time always equals some predecessor's finish
            break
        i = min(cands, key=lambda p: net.numbers[p])
        path.append(i)
    return [net.numbers[i] for i in reversed(path)]
