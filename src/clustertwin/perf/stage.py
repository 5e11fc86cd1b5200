"""The perf stage: best parallelism plan, step time, throughput, MFU and memory per GPU.

``estimate(scenario, catalog)`` searches every parallelism plan the cluster can run (pinned
keys held fixed; see :mod:`clustertwin.perf.search`), rejects those that do not fit in HBM and
returns the fastest as a frozen :class:`TrainingEstimate`. With ``cluster.deadline_days``
instead of ``cluster.gpus`` it solves for the smallest GPU count (a whole number of nodes, on a
ladder of 2^a 3^b 5^c nodes so that batches still factor) whose best plan trains the tokens
within the deadline.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clustertwin.catalog import Catalog
from clustertwin.catalog.params import param_count
from clustertwin.errors import InfeasibleError, Problem
from clustertwin.perf.costmodel import RANK_ORDERS, Job
from clustertwin.perf.flops import model_flops_per_token, shape_of
from clustertwin.perf.search import SearchResult, check_pinned, fmt_plan, infeasible, search
from clustertwin.perf.system import System, system_from_catalog
from clustertwin.scenario import Scenario

METHOD = "analytical roofline + collectives model, vectorized parallelism search"
GIB = 2**30
_TIME_KEYS = (
    "bubble_s",
    "tp_comm_s",
    "cp_comm_s",
    "ep_comm_s",
    "pp_comm_s",
    "dp_exposed_s",
    "zero3_exposed_s",
    "optimizer_s",
)


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

    def summary_rows(self) -> list[tuple[str, str]]:
        p = self.parallelism
        plan = " ".join(f"{k}={p[k]}" for k in ("tp", "pp", "cp", "ep", "dp") if k in p)
        extra = ""
        if "micro_batch" in p:
            extra = (
                f", mb={p['micro_batch']} v={p['virtual_stages']} {p['recompute']} recompute"
                f"{' +SP' if p['sequence_parallel'] else ''} ZeRO-{p['zero']}"
            )
        mem = "-" if self.memory_gib_per_gpu is None else f"{self.memory_gib_per_gpu:.1f} GiB"
        return [
            ("GPUs", f"{self.gpus:,}"),
            ("parallelism", (plan or "-") + extra),
            ("rank order (innermost first)", self.rank_order),
            ("step time", f"{self.step_time_s:.2f} s"),
            ("throughput", f"{self.tokens_per_s / 1e6:.2f} M tokens/s"),
            ("model TFLOP/s per GPU", f"{self.model_tflops_per_gpu:.0f}"),
            ("MFU / HFU", f"{self.mfu:.1%} / {self.hfu:.1%}"),
            ("memory per GPU", mem),
            ("days to train (no failures)", f"{self.days:.1f}"),
            ("plans evaluated", f"{self.plans_evaluated:,} ({self.plans_feasible:,} fit)"),
        ]

    def figures(self) -> list[tuple[str, Any]]:
        import plotly.graph_objects as go

        tb = {k: v for k, v in self.time_breakdown_s.items() if v > 0}
        fig = go.Figure(go.Bar(x=list(tb), y=list(tb.values())))
        fig.update_layout(title="Step time breakdown (s)", yaxis_title="seconds per step")
        mb = self.memory_breakdown_gib
        fig2 = go.Figure(go.Bar(x=list(mb), y=list(mb.values())))
        fig2.update_layout(title="Memory per GPU (GiB)", yaxis_title="GiB")
        return [("step time breakdown", fig), ("memory per GPU", fig2)]


def job_of(scenario: Scenario) -> Job:
    t = scenario.training
    return Job(shape_of(scenario.model), t.seq_len, t.batch_seqs, t.precision)


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
    scenario: Scenario, job: Job, sys: System, res: SearchResult, gpus: int, notes: list[str]
) -> TrainingEstimate:
    ranked = res.ranked()
    i = int(ranked[0])
    r = res.row(i)
    pc = param_count(scenario.model)
    peak = sys.peak(job.precision if job.precision != "fp8" else "bf16")
    tps = r["tokens_per_s"]
    mtf = model_flops_per_token(job.shape, job.seq) * tps / gpus
    breakdown = {"step_s": r["step_time_s"], "compute_s": r["compute_s"]}
    breakdown.update({k: r[k] for k in _TIME_KEYS})
    membd = {
        "weights_grads_optimizer": r["state_bytes"] / GIB,
        "activations": r["activation_bytes"] / GIB,
        "reserve": r["reserve_bytes"] / GIB,
    }
    return TrainingEstimate(
        method=METHOD,
        gpus=gpus,
        parallelism=res.plan(i),
        step_time_s=r["step_time_s"],
        tokens_per_s=tps,
        model_tflops_per_gpu=mtf / 1e12,
        mfu=mtf / peak,
        hfu=r["hfu"],
        memory_gib_per_gpu=r["memory_bytes"] / GIB,
        days=scenario.training.tokens / tps / 86400,
        params_total=pc.total,
        params_active=pc.active,
        notes=notes,
        time_breakdown_s=breakdown,
        memory_breakdown_gib=membd,
        rank_order=RANK_ORDERS[int(r.get("rank_order", 0))],
        plans_evaluated=res.size,
        plans_feasible=int(ranked.size),
        calibration=list(sys.calibration_ids),
        global_batch_seqs=job.batch_seqs,
    )


def run_search(scenario: Scenario, catalog: Catalog, gpus: int) -> tuple[Job, System, SearchResult]:
    """Validate pinned keys for ``gpus`` and evaluate every plan (used by the CLI too)."""
    job = job_of(scenario)
    sys = system_of(scenario, catalog)
    check_pinned(job, gpus, scenario.training.pinned, scenario.source)
    return job, sys, search(job, sys, gpus, scenario.training.pinned)


def smooth_counts(lo: int, hi: int) -> list[int]:
    """Numbers 2^a 3^b 5^c in [lo, hi], sorted."""
    out = set()
    a = 1
    while a <= hi:
        b = a
        while b <= hi:
            c = b
            while c <= hi:
                if c >= lo:
                    out.add(c)
                c *= 5
            b *= 3
        a *= 2
    return sorted(out)


def _solve_gpus(scenario: Scenario, catalog: Catalog) -> tuple[int, list[str]]:
    job = job_of(scenario)
    sys = system_of(scenario, catalog)
    node_gpus = catalog.node(scenario.cluster.node).gpus
    deadline_s = scenario.cluster.deadline_days * 86400
    need_tps = scenario.training.tokens / deadline_s
    flops = model_flops_per_token(job.shape, job.seq)
    guess = need_tps * flops / (0.4 * sys.peak(job.precision))
    guess_nodes = max(1, math.ceil(guess / node_gpus))
    max_nodes = max(guess_nodes * 16, 64)
    ladder = smooth_counts(1, max_nodes)
    pinned = scenario.training.pinned

    def ok(nodes: int) -> bool:
        res = search(job, sys, nodes * node_gpus, pinned)
        ranked = res.ranked()
        return bool(ranked.size) and float(res.metrics["tokens_per_s"][ranked[0]]) >= need_tps

    # walk the ladder upward from a third of the 40%-MFU guess; the first count whose best
    # plan meets the deadline wins (very large counts may have no plan at all: dp must divide
    # the global batch, so the walk does not bisect)
    start = next((i for i, n in enumerate(ladder) if n * 3 >= guess_nodes), 0)
    found = next((i for i in range(start, min(len(ladder), start + 60)) if ok(ladder[i])), None)
    if found is None:
        raise InfeasibleError(
            [
                Problem(
                    scenario.source,
                    "cluster.deadline_days",
                    f"no GPU count up to {ladder[min(len(ladder), start + 60) - 1] * node_gpus:,} "
                    f"trains {scenario.training.tokens:.3g} tokens in "
                    f"{scenario.cluster.deadline_days:g} days with a global batch of "
                    f"{job.batch_seqs} sequences; extend the deadline or enlarge the batch",
                )
            ]
        )
    lo = found
    gpus = ladder[lo] * node_gpus
    return gpus, [
        f"GPU count solved for a {scenario.cluster.deadline_days:g}-day deadline: "
        f"{gpus:,} GPUs ({ladder[lo]} nodes)"
    ]


def estimate(scenario: Scenario, catalog: Catalog) -> TrainingEstimate:
    """Best plan for the scenario's GPU count (or the GPU count its deadline needs)."""
    notes: list[str] = []
    if scenario.cluster.gpus is not None:
        gpus = scenario.cluster.gpus
    else:
        gpus, notes = _solve_gpus(scenario, catalog)
    job, sys, res = run_search(scenario, catalog, gpus)
    if res.ranked().size == 0:
        raise infeasible(job, sys, res, gpus, scenario.source)
    est = _result(scenario, job, sys, res, gpus, notes)
    if est.parallelism["recompute"] == "full":
        notes.append("full activation recompute was needed to fit memory or was fastest")
    return est


__all__ = ["TrainingEstimate", "estimate", "run_search", "fmt_plan"]
