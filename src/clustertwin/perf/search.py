"""Parallelism search: enumerate plans, prune by divisibility, evaluate all at once, rank.

Keys pinned in the scenario (``training.parallelism``) are held fixed; the rest are searched:

* ``tp``: divisors of the GPU count that divide the query heads (and are compatible with the
  key/value heads), up to the NVLink domain;
* ``cp``: powers of two that split the sequence into chunks of at least 1,024 tokens;
* ``pp``: divisors of what is left, at most the number of layers;
* ``dp``: the rest; ``ep`` (MoE only): divisors of the expert count that divide dp;
* ``micro_batch``: divisors of the per-replica batch; ``virtual_stages``: 1..8 chunks per stage
  (Megatron's interleaved schedule needs the micro-batch count to be a multiple of pp);
* ``recompute`` none/selective/full, ``sequence_parallel`` (tp > 1 only), ``zero`` 0..3
  (ZeRO-3 only without pipeline parallelism; ZeRO-2 with it, as Llama 3's FSDP ran with
  pipeline stages: weights kept whole, gradients and optimizer sharded, arXiv 2407.21783
  section 3.3.2; ZeRO-2 reduce-scatters per micro-batch, a once-per-step reduction is zero=1,
  see :mod:`clustertwin.perf.memory`).

Plans that fail a divisibility rule are never built (they are counted per rule); plans that
do not fit in HBM are evaluated but rejected and reported with the memory they need.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from typing import Any

import numpy as np

from clustertwin.errors import InfeasibleError, Problem, ScenarioError
from clustertwin.perf.costmodel import PLAN_KEYS, RECOMPUTE, Job, evaluate
from clustertwin.perf.system import System

MAX_MICRO_BATCH = 32
MAX_VIRTUAL = 8
MAX_CP = 32
MIN_CP_CHUNK = 1024


def divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


@dataclass
class SearchResult:
    """Every evaluated plan (arrays) plus counts of plans never built and why."""

    plans: dict[str, np.ndarray]
    metrics: dict[str, np.ndarray]
    pruned: Counter = field(default_factory=Counter)

    @property
    def size(self) -> int:
        return int(self.plans["tp"].shape[0])

    def feasible(self) -> np.ndarray:
        return np.flatnonzero(self.metrics["fits"])

    def ranked(self) -> np.ndarray:
        """Indices of feasible plans, fastest first: most tokens per second (plans of a job-size
        search differ in batch and GPUs), then shortest step."""
        idx = self.feasible()
        met = self.metrics
        if "tokens_per_s" not in met:
            return idx[np.argsort(met["step_time_s"][idx], kind="stable")]
        return idx[np.lexsort((met["step_time_s"][idx], -met["tokens_per_s"][idx]))]

    def plan(self, i: int) -> dict[str, Any]:
        p = {k: int(self.plans[k][i]) for k in PLAN_KEYS}
        p["recompute"] = RECOMPUTE[p["recompute"]]
        p["sequence_parallel"] = bool(p["sequence_parallel"])
        return p

    def row(self, i: int) -> dict[str, float]:
        return {k: float(v[i]) for k, v in self.metrics.items()}


def pinned_values(pinned: dict[str, Any], key: str, default: list[int]) -> list[int]:
    if key not in pinned:
        return default
    val = pinned[key]
    if key == "recompute":
        return [RECOMPUTE.index(val)]
    if key == "sequence_parallel":
        return [int(bool(val))]
    return [int(val)]


_KEY = "training.parallelism."


def _pinned_tp(m: Any, tp: int, gpus: int, source: str) -> list[Problem]:
    if m.heads % tp:
        return [Problem(source, _KEY + "tp", f"{tp} does not divide the {m.heads} attention heads")]
    if m.kv_heads % tp and tp % m.kv_heads:
        return [Problem(source, _KEY + "tp", f"{tp} and the {m.kv_heads} key/value heads do not divide one another")]
    if gpus % tp:
        return [Problem(source, _KEY + "tp", f"{tp} does not divide the {gpus} GPUs")]
    return []


def _pinned_dp(job: Job, dp: int, gpus: int, source: str, exact_batch: bool) -> list[Problem]:
    if gpus % dp:
        return [Problem(source, _KEY + "dp", f"{dp} does not divide the {gpus} GPUs")]
    if job.batch_seqs % dp and exact_batch:
        return [Problem(source, _KEY + "dp", f"{dp} does not divide the global batch of {job.batch_seqs} sequences")]
    return []


def _pinned_degrees(job: Job, pinned: dict[str, Any], gpus: int, source: str, exact_batch: bool) -> list[Problem]:
    """One problem per impossible tp, pp, cp, dp or ep."""
    m = job.shape
    tp, pp, cp, ep, dp = (pinned.get(k) for k in ("tp", "pp", "cp", "ep", "dp"))
    probs = _pinned_tp(m, tp, gpus, source) if tp is not None else []
    if pp is not None and pp > m.layers:
        probs.append(Problem(source, _KEY + "pp", f"{pp} pipeline stages but the model has only {m.layers} layers"))
    if cp is not None and job.seq % cp:
        probs.append(Problem(source, _KEY + "cp", f"{cp} does not divide the sequence length {job.seq}"))
    if dp is not None:
        probs += _pinned_dp(job, dp, gpus, source, exact_batch)
    if ep is not None and ep > 1:
        if not m.moe:
            probs.append(Problem(source, _KEY + "ep", f"{ep} > 1 but the model has no experts"))
        elif m.experts % ep:
            probs.append(Problem(source, _KEY + "ep", f"{ep} does not divide the {m.experts} experts"))
    return probs


def _pinned_product(pinned: dict[str, Any], gpus: int, source: str) -> list[Problem]:
    """The pinned degrees against the GPU count (all four: equal to it; some: divide it)."""
    tp, pp, cp, dp = (pinned.get(k) for k in ("tp", "pp", "cp", "dp"))
    fixed = [x for x in (tp, pp, cp, dp) if x is not None]
    if len(fixed) == 4 and tp * pp * cp * dp != gpus:
        return [Problem(source, _KEY + "dp", f"tp*pp*cp*dp = {tp * pp * cp * dp}, not the {gpus} GPUs")]
    if fixed and gpus % math.prod(fixed):
        return [Problem(source, "training.parallelism", f"the pinned degrees multiply to {math.prod(fixed)}, "
                        f"which does not divide the {gpus} GPUs")]
    return []


def check_pinned(job: Job, gpus: int | None, pinned: dict[str, Any], source: str,
                 installed: int | None = None, exact_batch: bool = True) -> None:
    """Raise ScenarioError naming every impossible pinned value (one problem per key).

    ``gpus`` is the job's fixed GPU count, or None when the job size is searched (then the
    pinned degrees must fit in ``installed``); ``exact_batch`` False when the batch may be
    rounded to what dp divides."""
    if gpus is None:
        _check_pinned_auto(job, pinned, source, installed or 0, exact_batch)
        return
    probs = _pinned_degrees(job, pinned, gpus, source, exact_batch)
    if not probs:
        probs = _pinned_product(pinned, gpus, source)
    dp, pp = pinned.get("dp"), pinned.get("pp")
    mb, v = pinned.get("micro_batch"), pinned.get("virtual_stages")
    if mb is not None and dp is not None and not probs and exact_batch and (job.batch_seqs // dp) % mb:
        probs.append(Problem(source, _KEY + "micro_batch", f"{mb} does not divide the "
                             f"{job.batch_seqs // dp} sequences per data-parallel replica"))
    if v is not None and v > 1 and pp is not None and pp == 1:
        probs.append(Problem(source, _KEY + "virtual_stages", "interleaving needs pp > 1"))
    if probs:
        raise ScenarioError(probs)


def _check_pinned_auto(job: Job, pinned: dict[str, Any], source: str, installed: int, exact_batch: bool) -> None:
    """Pinned keys when the job size is searched: the per-key rules with no GPU count, and the
    pinned degrees must fit in the installed GPUs."""
    probs: list[Problem] = []
    try:
        check_pinned(job, math.prod(pinned.get(k, 1) for k in ("tp", "pp", "cp", "dp")),
                     {k: v for k, v in pinned.items() if k not in ("dp", "micro_batch")}, source)
    except ScenarioError as exc:
        probs.extend(exc.problems)
    dp = pinned.get("dp")
    if dp is not None and exact_batch and job.batch_seqs % dp:
        probs.append(Problem(source, "training.parallelism.dp",
                             f"{dp} does not divide the global batch of {job.batch_seqs} sequences "
                             "(training.batch_rounding: exact)"))
    size = math.prod(pinned.get(k, 1) for k in ("tp", "pp", "cp", "dp"))
    if size > installed:
        probs.append(Problem(source, "training.parallelism",
                             f"the pinned degrees need {size:,} GPUs but {installed:,} are installed"))
    if probs:
        raise ScenarioError(probs)


def tp_fits_heads(m: Any, tp: int) -> bool:
    """``tp`` divides the query heads and the key/value heads (or is a multiple of them)."""
    return m.heads % tp == 0 and (m.kv_heads % tp == 0 or tp % m.kv_heads == 0)


def cp_options(job: Job, pinned: dict[str, Any]) -> list[int]:
    """Context-parallel degrees: powers of two that split the sequence into ring chunks of at
    least :data:`MIN_CP_CHUNK` tokens (the pinned value when ``cp`` is pinned)."""
    cps = [c for c in (1, 2, 4, 8, 16, MAX_CP)
           if c == 1 or (job.seq % (2 * c) == 0 and job.seq // c >= MIN_CP_CHUNK)]
    return pinned_values(pinned, "cp", cps)


def enumerate_plans(
    job: Job, sys: System, gpus: int, pinned: dict[str, Any] | None = None
) -> tuple[dict[str, np.ndarray], Counter]:
    """All plans that pass the divisibility rules, as arrays; and counts of those that did not."""
    pinned = pinned or {}
    m = job.shape
    pruned: Counter = Counter()
    divs = divisors(gpus)
    tp_opts = pinned_values(pinned, "tp", [d for d in divs if d <= max(sys.nvlink_domain, 1)])
    cp_opts = cp_options(job, pinned)
    blocks = PlanBlocks(pinned)
    for tp in tp_opts:
        if not tp_fits_heads(m, tp):
            pruned["tp does not divide the attention heads"] += 1
            continue
        for cp in cp_opts:
            if gpus % (tp * cp):
                pruned["tp*cp does not divide the GPUs"] += 1
                continue
            pp_all = divisors(gpus // (tp * cp))
            for pp in pinned_values(pinned, "pp", pp_all):
                if pp > m.layers:
                    pruned["pp exceeds the layers"] += 1
                    continue
                if gpus % (tp * cp * pp):
                    pruned["tp*cp*pp does not divide the GPUs"] += 1
                    continue
                dp = gpus // (tp * cp * pp)
                if "dp" in pinned and pinned["dp"] != dp:
                    continue
                if job.batch_seqs % dp:
                    pruned["dp does not divide the global batch"] += 1
                    continue
                per_rep = job.batch_seqs // dp
                blocks.add(m, (tp, cp, pp, dp), per_rep, pruned, fold=job.stack.expert_tp_folding)
    return blocks.plans(), pruned


#: the pinned keys the inner loop reads (the outer degrees are read by the callers)
_INNER_PINS = ("ep", "micro_batch", "virtual_stages", "recompute", "sequence_parallel", "zero")


class PlanBlocks:
    """The plans of many (tp, cp, pp, dp) shapes, built as arrays: a shape's rows other than its
    tp, cp and dp are the same for every shape with the same pipeline depth, per-replica batch,
    tp == 1 and (MoE) expert span, so each such block is built once per process
    (:func:`_inner_block`) and the shapes' degrees are filled in by ``np.repeat``. Rows come in
    the order the nested loops of the plan rules give: shape by shape, then ep, micro-batch,
    virtual stages, recompute, sequence parallelism, ZeRO stage."""

    def __init__(self, pinned: dict[str, Any]) -> None:
        self.pins = tuple((k, pinned[k]) for k in _INNER_PINS if k in pinned)
        self.blocks: list[np.ndarray] = []
        self.heads: list[tuple[int, int, int]] = []
        self.sizes: list[int] = []

    def add(self, m: Any, outer: tuple[int, int, int, int], per_rep: int, pruned: Counter,
            coarse: bool = False, fold: bool = False) -> int:
        """Add the plans of ``outer`` = (tp, cp, pp, dp) with ``per_rep`` sequences per replica
        (``coarse``: the job-size search's first pass; ``fold``: the stack folds expert
        parallelism over the tensor, context and data-parallel ranks); returns how many."""
        tp, cp, pp, dp = outer
        span = (tp * cp * dp if fold else dp) if m.moe else 0
        block, refused = _inner_block(m, tp == 1, pp, span, per_rep, self.pins, coarse)
        for why, n in refused:
            pruned[why] += n
        self.blocks.append(block)
        self.heads.append((tp, cp, dp))
        self.sizes.append(block.shape[0])
        return block.shape[0]

    def plans(self) -> dict[str, np.ndarray]:
        """Every row added, as one int64 array per key of :data:`PLAN_KEYS`."""
        if not self.blocks or not sum(self.sizes):
            return {k: np.zeros(0, dtype=np.int64) for k in PLAN_KEYS}
        cols = np.concatenate(self.blocks).T.copy()
        heads = np.repeat(np.array(self.heads, dtype=np.int64), self.sizes, axis=0)
        out = {k: cols[i] for i, k in enumerate(PLAN_KEYS)}
        out["tp"], out["cp"], out["dp"] = heads[:, 0].copy(), heads[:, 1].copy(), heads[:, 2].copy()
        return out


#: blocks kept: a block is at most a few thousand rows (~100 KB), most a few dozen
@lru_cache(maxsize=1024)
def _inner_block(m: Any, tp_one: bool, pp: int, span: int, per_rep: int,
                 pins: tuple[tuple[str, Any], ...], coarse: bool,
                 ) -> tuple[np.ndarray, tuple[tuple[str, int], ...]]:
    """The rows of one shape with tp, cp and dp left 0 (a read-only array), and the counts of
    plans the rules refused on the way: ``coarse`` keeps a few options per key (first pass of
    the job-size search): micro-batches 1 and 2, plain or the deepest interleaving, sequence
    parallelism on, ZeRO-1 and the deepest ZeRO stage allowed; ``span``: the ranks expert
    parallelism divides (MoE; 0 for a dense model)."""
    pinned = dict(pins)
    refused: Counter = Counter()
    rc_opts = pinned_values(pinned, "recompute", [0, 1, 2])
    z_all = [0, 1, 2, 3] if not coarse else ([1, 3] if pp == 1 else [1, 2])
    z_opts = pinned_values(pinned, "zero", z_all)
    sp_opts = [0] if tp_one else pinned_values(pinned, "sequence_parallel", [1] if coarse else [0, 1])
    if m.moe:
        ep_opts = pinned_values(pinned, "ep", [e for e in divisors(m.experts) if span % e == 0])
        ep_opts = [e for e in ep_opts if m.experts % e == 0 and span % e == 0]
    else:
        ep_opts = [1]
    rows: list[tuple[int, ...]] = []
    if not ep_opts:
        refused["ep does not divide dp"] += 1
    mb_all = _micro_batches(per_rep)
    mb_opts = pinned_values(pinned, "micro_batch", mb_all[:2] if coarse else mb_all)
    for ep in ep_opts:
        for mb in mb_opts:
            if per_rep % mb:
                refused["micro_batch does not divide the per-replica batch"] += 1
                continue
            n_micro = per_rep // mb
            if pp == 1:
                v_opts = [1]
            else:
                v_all = [x for x in range(1, MAX_VIRTUAL + 1)
                         if x * pp <= m.layers and (x == 1 or n_micro % pp == 0)]
                v_opts = pinned_values(pinned, "virtual_stages",
                                       sorted({v_all[0], v_all[-1]}) if coarse and v_all else v_all)
            if not v_opts:
                refused["virtual_stages impossible"] += 1
                continue
            # FSDP/ZeRO-3 with pipeline stages only when asked for (torchtitan runs FSDP + PP)
            zs = z_opts if pp == 1 or pinned.get("zero") == 3 else [z for z in z_opts if z <= 2]
            if not zs:
                refused["ZeRO-3 cannot run with pipeline parallelism"] += 1
                continue
            head = (0, pp, 0, ep, 0, mb)
            rows.extend([head + rest for rest in product(v_opts, rc_opts, sp_opts, zs)])
    block = np.array(rows, dtype=np.int64).reshape(-1, len(PLAN_KEYS))
    block.flags.writeable = False
    return block, tuple(refused.items())


@lru_cache(maxsize=256)
def _micro_batch_options(per_rep: int) -> tuple[int, ...]:
    return tuple(d for d in divisors(per_rep) if d <= MAX_MICRO_BATCH)


def _micro_batches(per_rep: int) -> list[int]:
    """Micro-batch sizes for ``per_rep`` sequences per replica: its divisors up to
    :data:`MAX_MICRO_BATCH` (a search asks for the same few batches thousands of times)."""
    return list(_micro_batch_options(per_rep))


def search(job: Job, sys: System, gpus: int, pinned: dict[str, Any] | None = None) -> SearchResult:
    """Evaluate every buildable plan for ``gpus`` GPUs."""
    plans, pruned = enumerate_plans(job, sys, gpus, pinned)
    if plans["tp"].shape[0] == 0:
        return SearchResult(
            plans,
            {"fits": np.zeros(0, bool), "step_time_s": np.zeros(0), "memory_bytes": np.zeros(0)},
            pruned,
        )
    return SearchResult(plans, evaluate(job, sys, plans), pruned)


def infeasible(job: Job, sys: System, res: SearchResult, gpus: int, source: str) -> InfeasibleError:
    """The error for a search with no plan that fits, naming the nearest fixes."""
    gib = 2**30
    hbm = sys.hbm_bytes / gib
    if res.size == 0:
        reasons = (
            "; ".join(f"{k} ({n})" for k, n in res.pruned.most_common(3)) or "no factorization"
        )
        return InfeasibleError(
            [
                Problem(
                    source,
                    "training.parallelism",
                    f"no parallelism plan can be built for {gpus} GPUs: {reasons}; "
                    "change the GPU count or unpin keys",
                )
            ]
        )
    m = res.metrics
    runnable = np.ones(res.size, bool) if job.stack.interleaved else res.plans["virtual_stages"] <= 1
    if not runnable.any():
        return InfeasibleError([Problem(
            source, "training.parallelism.virtual_stages",
            f"the {job.stack.id} stack runs no interleaved pipeline schedule, so virtual_stages must "
            "be 1; unpin it or set training.stack to one that interleaves (megatron, torchtitan)")])
    mem = np.where(runnable, m["memory_bytes"], np.inf)
    i = int(np.argmin(mem))
    need, best = float(mem[i]) / gib, res.plan(i)
    return InfeasibleError([Problem(
        source, "cluster.gpus",
        f"no parallelism plan fits in {hbm:.0f} GiB per GPU on {gpus:,} GPUs; the smallest plan "
        f"needs {need:.1f} GiB per GPU ({fmt_plan(best)}); nearest changes: "
        + ", or ".join(_memory_hints(best, need, hbm, gpus, sys.gpus_per_node))
        + (", or unpin training.parallelism keys" if "pinned" in source else ""))])


def _memory_hints(best: dict[str, Any], need: float, hbm: float, gpus: int, node: int) -> list[str]:
    """What to change, in the user's units: recompute, ZeRO stage, micro-batch, GPU count."""
    hints = []
    if best["recompute"] != "full":
        hints.append("training.parallelism.recompute: full")
    if best["zero"] < 3:
        hints.append("training.parallelism.zero: 3")
    if best["micro_batch"] > 1:
        hints.append("training.parallelism.micro_batch: 1")
    more = math.ceil(gpus * need / hbm * 1.1 / node) * node
    if more > gpus:
        hints.append(f"roughly {more:,} GPUs or more ({more // node:,} nodes of {node})")
    return hints or [f"a GPU with more than {need:.0f} GiB"]


def fmt_plan(p: dict[str, Any]) -> str:
    return (
        f"tp{p['tp']} pp{p['pp']} cp{p['cp']} ep{p['ep']} dp{p['dp']} mb{p['micro_batch']} "
        f"v{p['virtual_stages']} {p['recompute']} sp={int(p['sequence_parallel'])} zero{p['zero']}"
    )
