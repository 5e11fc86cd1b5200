"""Checks across sections that the schema alone cannot make: job size against the installed
GPUs and the node, the Monte Carlo budget, and the resolved model's shape."""

from __future__ import annotations

from typing import Any

from clustertwin.errors import Problem
from clustertwin.scenario.base import MAX_GPUS
from clustertwin.scenario.document import ScenarioFile
from clustertwin.scenario.model import ResolvedModel

#: GPUs in one host of a rack-scale system: a GB200 NVL72 compute tray holds 2 Grace + 4 Blackwell
#: (NVIDIA DGX GB200 user guide, as cited in catalog/data/nodes.yaml); a job takes whole trays
RACK_SCALE_HOST_GPUS = 4


def job_unit_gpus(node: Any) -> int:
    """Granularity of a training job's GPU count: whole nodes, or whole compute trays of a
    rack-scale system (a job may use part of an NVL72 rack; the rest idles)."""
    if node.rack_scale and node.gpus % RACK_SCALE_HOST_GPUS == 0:
        return RACK_SCALE_HOST_GPUS
    return int(node.gpus)


def check_sizes(doc: ScenarioFile, node: Any, source: str) -> list[Problem]:
    """training.gpus against the installed count and the node; deadline mode needs a job."""
    cl, t, out = doc.cluster, doc.training, []
    if (doc.model is None) != (t is None):
        have, miss = ("model", "training") if t is None else ("training", "model")
        out.append(Problem(source, miss, f"required with {have} (omit both for a design-only plan)"))
    if t is None:
        if cl.deadline_days is not None:
            out.append(Problem(source, "cluster.deadline_days",
                               "a deadline needs a model and training section; give cluster.gpus for a design-only plan"))
        return out
    if t.gpus != "auto":
        if cl.deadline_days is not None:
            out.append(Problem(source, "training.gpus", "a number with cluster.deadline_days: the deadline "
                               "solves for the GPU count; use auto (or give cluster.gpus instead)"))
        if cl.gpus is not None and t.gpus > cl.gpus:
            out.append(Problem(source, "training.gpus",
                               f"{t.gpus} is more than the {cl.gpus} GPUs installed (cluster.gpus); use auto or at most {cl.gpus}"))
        unit = job_unit_gpus(node)
        if t.gpus % unit and (t.gpus > unit or unit % t.gpus):
            lo = t.gpus // unit * unit or max(d for d in range(1, unit) if unit % d == 0 and d < t.gpus)
            what = "compute trays" if unit != node.gpus else f"{node.id} nodes"
            out.append(Problem(source, "training.gpus", f"{t.gpus} is neither a whole number of "
                               f"{unit}-GPU {what} nor a divisor of one; try {lo} or auto"))
    if t.global_batch_tokens is not None and t.global_batch_tokens < t.seq_len:
        out.append(Problem(source, "training.global_batch_tokens", f"smaller than one sequence ({t.seq_len} tokens)"))
    return out


#: Spare nodes a scenario may ask for beyond its installed nodes: as many again, or this many
#: when the cluster has fewer nodes. Every spare is designed, cabled and priced: a million spares
#: drove the design past several GB (issue 31); auto spares are a few percent of the nodes.
SPARE_FLOOR_NODES = 16


def check_spares(doc: ScenarioFile, node: Any, source: str) -> list[Problem]:
    """A spare-node count at most the installed nodes (or :data:`SPARE_FLOOR_NODES`); in
    deadline mode, whose size is solved later, spares of at most half the largest cluster."""
    cl = doc.cluster
    if cl.spare_nodes == "auto":
        return []
    per = max(1, int(node.gpus))
    if cl.gpus is not None:
        nodes = -(-cl.gpus // per)
        most = max(nodes, SPARE_FLOOR_NODES)
        why = f"as many as the {nodes:,} installed nodes" if nodes >= SPARE_FLOOR_NODES else \
            f"{SPARE_FLOOR_NODES} for a cluster of {nodes:,} nodes"
    else:
        most = max(1, MAX_GPUS // 2 // per)
        why = f"spares of at most {MAX_GPUS // 2:,} GPUs"
    if cl.spare_nodes <= most:
        return []
    return [Problem(source, "cluster.spare_nodes", f"at most {most:,} spare nodes ({why}); "
                    f"got {cl.spare_nodes:,}; use auto to size them from the failure rate")]


#: Most Monte Carlo trials x installed GPUs: the reliability simulation costs trials x
#: interruptions per run, ~10 s on one core at this product (1,000 trials x 524,288 GPUs: 9 s);
#: trials alone are at most 10,000 (100,000 trials took 31 s on 1,024 GPUs; issue 15)
MAX_TRIAL_GPUS = 2**29
#: GPUs past which a run's interruptions no longer add simulation work: the reliability stage
#: simulates about reliability.stage.MAIN_FAILURES (1,000) per trial and stretches the totals,
#: which a 54-day run reaches near 40,000 H100 (issue 11: 1,000,000 GPUs x 1,000 trials, 1.3 s)
STRETCH_GPUS = 2**16


def check_budget(doc: ScenarioFile, source: str) -> list[Problem]:
    gpus = doc.cluster.gpus
    if gpus is None or doc.reliability.trials * min(gpus, STRETCH_GPUS) <= MAX_TRIAL_GPUS:
        return []
    most = max(1, MAX_TRIAL_GPUS // min(gpus, STRETCH_GPUS))
    return [Problem(source, "reliability.trials", f"{doc.reliability.trials:,} trials on {gpus:,} GPUs "
                    f"would take minutes (trials x GPUs at most {MAX_TRIAL_GPUS:,}); use at most {most:,} trials")]


def check_model(m: ResolvedModel, source: str) -> list[Problem]:
    out = []
    if m.hidden % m.heads:
        out.append(Problem(source, "model.heads", f"hidden {m.hidden} is not divisible by heads {m.heads}"))
    if m.heads % m.kv_heads:
        out.append(Problem(source, "model.kv_heads", f"heads {m.heads} is not a multiple of kv_heads {m.kv_heads}"))
    if m.moe is not None:
        if m.moe.active_experts > m.moe.experts:
            out.append(Problem(source, "model.moe.active_experts", f"more than the {m.moe.experts} experts"))
        if m.moe.dense_layers >= m.layers:
            out.append(Problem(source, "model.moe.dense_layers", f"must be fewer than the {m.layers} layers"))
    return out


def check_dates(doc: ScenarioFile, source: str) -> list[Problem]:
    """A target date before the program starts can be met by no route."""
    target, start = doc.decision.target_date, doc.buildout.start_date
    if target is not None and start is not None and target <= start:
        return [Problem(source, "decision.target_date", f"{target.isoformat()} is not after "
                        f"buildout.start_date {start.isoformat()} (the day every route counts from)")]
    return []
