"""The perf stage: best parallelism plan, step time, throughput, MFU and memory per GPU.

``estimate(scenario, catalog)`` searches every parallelism plan on at most the installed GPUs
(``training.gpus: auto``) or on exactly ``training.gpus``, with the global batch rounded as
``training.batch_rounding`` allows (see :mod:`clustertwin.perf.jobsize`; pinned keys held fixed),
rejects those that do not fit in HBM and returns the fastest (most tokens per second) as a
frozen :class:`TrainingEstimate`: ``gpus`` the job uses, ``installed_gpus``, ``idle_gpus`` and
the batch used. The installed count is ``cluster.gpus``, or the count a caller passes: with
``cluster.deadline_days`` the plan-level solver (:mod:`clustertwin.deadline`) finds it.
MFU is model FLOPs per second over the dense tensor-core peak of the precision trained in.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clustertwin.catalog import Catalog
from clustertwin.catalog.params import param_count
from clustertwin.errors import Problem, ScenarioError
from clustertwin.perf.costmodel import RANK_ORDERS, Job
from clustertwin.perf.flops import model_flops_per_token, shape_of
from clustertwin.perf.jobsize import BATCH_TOLERANCE, search_job
from clustertwin.perf.search import SearchResult, check_pinned, fmt_plan, infeasible
from clustertwin.perf.system import System, system_from_catalog
from clustertwin.scenario import Scenario, job_unit_gpus

METHOD = "analytical roofline + collectives model, vectorized parallelism search"
GIB = 2**30
#: bubble share of a step above which the batch is called small for the cluster: 1F1B with at
#: least 4 micro-batches per stage boundary, m >= 4 (p - 1), idles at most (p-1)/(m+p-1) = 20%
#: (our rule of thumb from the bubble formula of Narayanan et al. 2021, not a published limit)
SMALL_BATCH_BUBBLE = 0.20
#: the step's time parts beside compute, as the search's rows and the estimate's breakdown name them
TIME_KEYS = (
    "bubble_s",
    "tp_comm_s",
    "cp_comm_s",
    "ep_comm_s",
    "pp_comm_s",
    "dp_exposed_s",
    "zero3_exposed_s",
    "optimizer_s",
)


#: scenario keys :func:`estimate` reads (a section name covers the whole section): the model,
#: the training run, the cluster's GPU, node, size and deadline and the fabric keys of the
#: collectives model; not economics, seeds, spares or switch models
READS = ("source", "model", "training", "cluster.gpu", "cluster.node", "cluster.gpus",
         "cluster.deadline_days", "cluster.deadline_basis", "cluster.fabric.technology",
         "cluster.fabric.oversubscription", "cluster.fabric.pod_gpus",
         "cluster.fabric.pod_oversubscription")


class TrainingEstimate(BaseModel):
    """Result of the perf stage (contract block ``training``)."""

    model_config = ConfigDict(frozen=True)

    method: str
    #: GPUs the training job uses (training.gpus; the design is sized on installed_gpus)
    gpus: int
    parallelism: dict[str, Any]
    step_time_s: float
    tokens_per_s: float
    model_tflops_per_gpu: float
    mfu: float
    hfu: float
    memory_gib_per_gpu: float | None
    days: float
    params_total: float
    params_active: float
    notes: list[str] = []
    time_breakdown_s: dict[str, float] = Field(default_factory=dict)
    memory_breakdown_gib: dict[str, float] = Field(default_factory=dict)
    #: rank order of the chosen plan, innermost first (costmodel.RANK_ORDERS): Megatron-core's
    #: tp-cp-ep-dp-pp, or Llama 3's tp-cp-pp-dp where pods make it faster
    rank_order: str = RANK_ORDERS[0]
    plans_evaluated: int = 0
    plans_feasible: int = 0
    calibration: list[str] = []
    #: GPUs installed for the job (cluster.gpus, or the count solved for a deadline), spares
    #: excluded; 0 = the same as ``gpus`` (filled in by the validator)
    installed_gpus: int = 0
    #: installed GPUs the job leaves unused (installed_gpus - gpus)
    idle_gpus: int = 0
    #: global batch actually trained, in sequences (the scenario's, or rounded so the plan
    #: divides it: training.batch_rounding)
    global_batch_seqs: int = 0
    #: precision trained in and its dense tensor-core peak per GPU: the base of ``mfu`` and ``hfu``
    precision: str = "bf16"
    peak_tflops_per_gpu: float = 0.0
    #: software stack priced (catalog kind ``stack``; scenario ``training.stack``, ``auto``
    #: resolved by perf.autostack to the stack it chose)
    stack: str = "megatron"
    #: band around ``days`` from the stack's leave-one-source-out calibration residuals
    #: (catalog stacks.yaml days_band_*; clustertwin calibration --cv); 0 = not computed
    days_low: float = 0.0
    days_high: float = 0.0
    #: whole-run goodput: steady-state time (``days``) over wall-clock time (perf.goodput; with
    #: the reliability stage, its ETTR multiplied in by reliability.goodput); 1 = not computed
    goodput: float = 1.0
    #: its factors: evaluation, data_loader, batch_rampup and failures_checkpoints (the
    #: reliability stage's ETTR: failures, restarts, lost work, checkpoint stalls; None = not run)
    goodput_parts: dict[str, float | None] = Field(default_factory=dict)
    #: days / goodput: wall-clock days with every goodput part charged (0 = not computed)
    wall_clock_days: float = 0.0

    @model_validator(mode="after")
    def _fill_counts(self) -> TrainingEstimate:
        if self.installed_gpus == 0:
            object.__setattr__(self, "installed_gpus", self.gpus)
        if self.installed_gpus < self.gpus:
            raise ValueError(f"installed_gpus {self.installed_gpus} < gpus {self.gpus}")
        object.__setattr__(self, "idle_gpus", self.installed_gpus - self.gpus)
        return self

    def to_contract(self) -> dict[str, Any]:
        return self.model_dump()


def job_of(scenario: Scenario, catalog: Catalog | None = None) -> Job:
    """The Job of a scenario; its software stack (training.stack, ``auto`` chosen by
    :mod:`clustertwin.perf.autostack`) resolved for the cluster's GPU generation from
    ``catalog`` (default: the built-in catalog)."""
    from clustertwin.catalog import load_catalog
    from clustertwin.perf.autostack import resolve_stack
    from clustertwin.perf.stacks import profile_of

    t = scenario.training
    cat = catalog if catalog is not None else load_catalog()
    gen = cat.gpu(scenario.cluster.gpu).generation
    stack = profile_of(cat, resolve_stack(scenario, cat), gen)
    return Job(shape_of(scenario.model), t.seq_len, t.batch_seqs, t.precision, stack=stack)


def system_of(scenario: Scenario, catalog: Catalog) -> System:
    c = scenario.cluster
    f = c.fabric
    return system_from_catalog(
        catalog,
        c.gpu,
        c.node,
        f.technology,
        f.oversubscription,
        f.pod_gpus,
        f.pod_oversubscription,
    )


def _result(
    scenario: Scenario, job: Job, sys: System, res: SearchResult, installed: int, notes: list[str],
    catalog: Catalog,
) -> TrainingEstimate:
    ranked = res.ranked()
    i = int(ranked[0])
    r = res.row(i)
    gpus = int(r.get("gpus", installed))
    batch = int(r.get("batch_seqs", job.batch_seqs))
    pc = param_count(scenario.model)
    # MFU and HFU against the dense tensor-core peak of the precision trained in (fp8 against
    # fp8), the same base as the cost model's (perf.costmodel._metrics)
    peak = sys.peak(job.precision)
    tps = r["tokens_per_s"]
    mtf = model_flops_per_token(job.shape, job.seq) * tps / gpus
    days = scenario.training.tokens / tps / 86400
    breakdown = {"step_s": r["step_time_s"], "compute_s": r["compute_s"]}
    breakdown.update({k: r[k] for k in TIME_KEYS})
    membd = {
        "weights_grads_optimizer": r["state_bytes"] / GIB,
        "activations": r["activation_bytes"] / GIB,
        "reserve": r["reserve_bytes"] / GIB,
    }
    return TrainingEstimate(
        method=METHOD,
        gpus=gpus,
        installed_gpus=installed,
        parallelism=res.plan(i),
        step_time_s=r["step_time_s"],
        tokens_per_s=tps,
        model_tflops_per_gpu=mtf / 1e12,
        mfu=r["mfu"],
        hfu=r["hfu"],
        memory_gib_per_gpu=r["memory_bytes"] / GIB,
        days=days,
        days_low=days * (1 + job.stack.days_band_low),
        days_high=days * (1 + job.stack.days_band_high),
        params_total=pc.total,
        params_active=pc.active,
        notes=notes,
        time_breakdown_s=breakdown,
        memory_breakdown_gib=membd,
        rank_order=RANK_ORDERS[int(r.get("rank_order", 0))],
        plans_evaluated=res.size,
        plans_feasible=int(ranked.size),
        calibration=list(sys.calibration_ids),
        global_batch_seqs=batch,
        precision=job.precision,
        peak_tflops_per_gpu=peak / 1e12,
        stack=job.stack.id,
        **_goodput(scenario, catalog, r, breakdown, res.plan(i), batch, days),
    )


def _goodput(scenario: Scenario, catalog: Catalog, r: dict[str, Any], breakdown: dict[str, float],
             plan: dict[str, Any], batch: int, days: float) -> dict[str, Any]:
    """Goodput before failures (perf.goodput); the reliability stage multiplies its ETTR in."""
    from clustertwin.perf import goodput as gp

    per_replica = batch / max(1, int(plan.get("dp", 1))) / max(1, int(plan.get("micro_batch", 1)))
    factors = gp.parts(gp.settings_of(scenario, catalog), mfu=r["mfu"], hfu=r["hfu"],
                       breakdown=breakdown, step_s=r["step_time_s"], tokens=scenario.training.tokens,
                       micro_batches=per_replica)
    g = gp.product(factors)
    return {"goodput": g, "goodput_parts": {**factors, "failures_checkpoints": None},
            "wall_clock_days": days / g}


def sub_node_unit(unit: int, fixed: int | None, installed: int) -> int:
    """The job's GPU granularity: whole hosts of ``unit`` GPUs, or the whole job when it is
    smaller than one host (``training.gpus`` 1, 2, 4 of an 8-GPU node; a one-node cluster
    with fewer GPUs installed than the node holds)."""
    size = fixed if fixed is not None else installed
    return size if 0 < size < unit else unit


#: the searches a process ran last, by their inputs' text (a deadline is solved again in each
#: of a plan's deadline rounds, and its estimate repeats the solver's last search): the
#: fastest plan of each (GPUs used, tokens per second, step seconds; None: no plan fits), and
#: the whole result of the last few (each holds every plan evaluated)
_BEST: dict[str, tuple[int, float, float] | None] = {}
_RECENT: dict[str, SearchResult] = {}
BEST_KEPT, RECENT_KEPT = 4096, 2
_MISSING = object()
_LOCK = threading.Lock()


def _search_inputs(scenario: Scenario, catalog: Catalog, installed: int) -> tuple[Job, System, tuple, str]:
    """The search's job, system and other arguments, and the text of them all (the memo key:
    reprs of frozen dataclasses of numbers and text, so equal text is an equal search)."""
    job = job_of(scenario, catalog)
    sys = system_of(scenario, catalog)
    t = scenario.training
    fixed = None if t.gpus == "auto" else int(t.gpus)
    check_pinned(job, fixed, t.pinned, scenario.source, installed=installed,
                 exact_batch=t.batch_rounding == "exact")
    unit = sub_node_unit(job_unit_gpus(catalog.node(scenario.cluster.node)), fixed, installed)
    args = (installed, unit, fixed, t.batch_rounding, t.pinned)
    return job, sys, args, repr((job, sys, *args[:-1], sorted(t.pinned.items())))


def _remember(memo: dict, key: str, value: Any, kept: int) -> None:
    with _LOCK:
        memo.pop(key, None)
        memo[key] = value
        while len(memo) > kept:
            memo.pop(next(iter(memo)))


def run_search(scenario: Scenario, catalog: Catalog, installed: int) -> tuple[Job, System, SearchResult]:
    """Validate pinned keys and evaluate every plan on at most ``installed`` GPUs (exactly
    ``training.gpus`` when it is a number), the batch rounded per ``training.batch_rounding``
    (used by the CLI and the deadline solver too). The result is shared with an equal search
    run just before: read it, never change it."""
    job, sys, args, key = _search_inputs(scenario, catalog, installed)
    return job, sys, _searched(job, sys, args, key)[0]


def _searched(job: Job, sys: System, args: tuple, key: str) -> tuple[SearchResult, tuple[int, float, float] | None]:
    res = _RECENT.get(key)
    if res is None:
        res = search_job(job, sys, *args)
    ranked = res.ranked()
    i = int(ranked[0]) if ranked.size else None
    best = None if i is None else (int(res.metrics["gpus"][i]), float(res.metrics["tokens_per_s"][i]),
                                   float(res.metrics["step_time_s"][i]))
    _remember(_BEST, key, best, BEST_KEPT)
    _remember(_RECENT, key, res, RECENT_KEPT)
    return res, best


def fastest_plan(scenario: Scenario, catalog: Catalog, installed: int) -> tuple[int, float, float] | None:
    """(GPUs used, tokens per second, step seconds) of the fastest plan :func:`run_search` finds
    on ``installed`` GPUs, None when no plan fits; an equal search asked before is not run
    again (the deadline solver's trials)."""
    job, sys, args, key = _search_inputs(scenario, catalog, installed)
    best = _BEST.get(key, _MISSING)
    return _searched(job, sys, args, key)[1] if best is _MISSING else best


def _notes(scenario: Scenario, job: Job, est: TrainingEstimate) -> list[str]:
    """What the user should know about the chosen job: idle GPUs, a moved batch, a batch too
    small for the cluster, recompute."""
    out = []
    t, p = scenario.training, est.parallelism
    if est.global_batch_seqs != job.batch_seqs:
        moved = est.global_batch_seqs / job.batch_seqs - 1
        out.append(f"global batch rounded from {job.batch_seqs:,} to {est.global_batch_seqs:,} sequences "
                   f"({moved:+.1%}) so the {p['dp']:,} data-parallel replicas divide it "
                   f"(training.batch_rounding: nearest, at most {BATCH_TOLERANCE:.0%}; 'exact' keeps it)")
    if est.idle_gpus:
        why = "" if t.gpus != "auto" else " (the fastest plan found on at most the installed GPUs)"
        out.append(f"the run uses {est.gpus:,} of the {est.installed_gpus:,} installed GPUs; "
                   f"{est.idle_gpus:,} idle{why}")
    bubble = est.time_breakdown_s.get("bubble_s", 0.0) / est.step_time_s if est.step_time_s else 0.0
    per_gpu = est.global_batch_seqs * job.seq / est.gpus
    if est.gpus >= 64 and (bubble > SMALL_BATCH_BUBBLE or est.gpus < 0.9 * est.installed_gpus):
        out.append(f"the global batch ({est.global_batch_seqs:,} sequences, {per_gpu:,.0f} tokens per GPU) is "
                   f"small for {est.installed_gpus:,} GPUs: the pipeline bubble is {bubble:.0%} of each step"
                   + (f" and {est.idle_gpus:,} GPUs idle" if est.gpus < 0.9 * est.installed_gpus else "")
                   + "; a larger batch would use the cluster better")
    if p["recompute"] == "full":
        out.append("full activation recompute was needed to fit memory or was fastest")
    return out


def estimate(scenario: Scenario, catalog: Catalog, *, installed: int | None = None,
             notes: list[str] | tuple[str, ...] = ()) -> TrainingEstimate:
    """Best plan for the installed GPUs: ``installed``, else ``cluster.gpus`` (a deadline
    scenario's count comes from :func:`clustertwin.deadline.train`). ``notes`` lead the
    estimate's notes (how the count was found)."""
    return estimate_with_search(scenario, catalog, installed=installed, notes=notes)[0]


def estimate_with_search(
    scenario: Scenario, catalog: Catalog, *, installed: int | None = None,
    notes: list[str] | tuple[str, ...] = (),
) -> tuple[TrainingEstimate, SearchResult]:
    """:func:`estimate` and the search it ranked (every plan evaluated on the installed GPUs),
    for callers that show more than the best plan (``clustertwin estimate``)."""
    if scenario.training is None or scenario.model is None:
        raise ScenarioError([Problem(scenario.source, "training",
                                     "the training estimate needs model and training sections")])
    if installed is None:
        installed = scenario.cluster.gpus
    if installed is None:
        raise ScenarioError([Problem(scenario.source, "cluster.gpus", "the training estimate needs the "
                                     "installed GPUs (a deadline is solved by clustertwin.deadline.train)")])
    job, sys, res = run_search(scenario, catalog, installed)
    if res.ranked().size == 0:
        raise infeasible(job, sys, res, installed, scenario.source)
    est = _result(scenario, job, sys, res, installed, list(notes), catalog)
    return est.model_copy(update={"notes": list(notes) + _notes(scenario, job, est)}), res


__all__ = ["TrainingEstimate", "estimate", "estimate_with_search", "run_search", "fmt_plan"]
