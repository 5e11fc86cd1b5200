"""What the reliability stage knows before it simulates anything.

:func:`resolve_inputs` turns a scenario, its estimate and (optionally) its design into a
:class:`StageInputs`: job size and spare nodes, failure rates, checkpoint and local-tier
times, the stall and background write of each checkpoint, the interval floors, the
first-order intervals and the two-tier :class:`.runspec.TierSpec`. :func:`check_intervals`
refuses fixed intervals shorter than those floors. Notes for the result are appended, in
order, to the list the caller passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from clustertwin.catalog.models import FailureProfile
from clustertwin.catalog.params import param_count
from clustertwin.design.failure_rates import JobRates, profile_for, scenario_rates
from clustertwin.design.spares import (
    poisson_cdf,
    resolve_spare_nodes,
    spares_needed,
    spares_worth_keeping,
)
from clustertwin.errors import InfeasibleError, Problem
from clustertwin.perf.checkpoint import (
    CheckpointTimes,
    LocalTierTimes,
    StorageRates,
    checkpoint_times,
    local_tier_times,
)
from clustertwin.reliability import interval as iv
from clustertwin.reliability.runspec import TierSpec


@dataclass(frozen=True)
class StageInputs:
    """Everything the searches and the main run read. Times: ``*_s`` seconds, ``*_h`` hours,
    ``*_min`` minutes; ``young``/``daly`` in minutes (inf without failures)."""

    r: Any                          #: the scenario's reliability section
    src: str                        #: the scenario file, for problems
    profile: FailureProfile
    gpus: int
    nodes: int
    spares: int
    rates: JobRates
    local_key: Any                  #: local_checkpoint_interval_min as given
    replicas: int
    ck: CheckpointTimes
    lt: LocalTierTimes | None       #: None for a single-tier schedule
    blocking_s: float               #: file-system checkpoint stall
    persist_s: float                #: its background write after the stall
    restart_h: float
    floor_min: float                #: shortest file-system interval (one write or step)
    local_floor_min: float | None   #: shortest local interval
    mtbf_min: float
    delta_min: float
    finite: bool                    #: any unexpected failures
    young: float
    daly: float
    work_h: float                   #: failure-free compute time
    in_repair: float                #: mean nodes in repair
    spares_advised: int
    runnable: float                 #: share of time not blocked by repairs
    e_est: float                    #: first-order ETTR at the Daly interval
    slow: float                     #: horizon shrink of runs that are mostly failures
    tiers: TierSpec | None
    q_loss: float                   #: share of failures that lose the local copy

    @property
    def fixed_pfs(self) -> float | None:
        v = self.r.checkpoint_interval_min
        return None if v == "auto" else float(v)

    @property
    def fixed_local(self) -> float | None:
        return None if self.local_key in ("auto", "none") else float(self.local_key)


def _spare_nodes(scenario: Any, catalog: Any, design: Any, gpus: int, nodes: int) -> int:
    """The design's spares, else (no design stage) ``cluster.spare_nodes``."""
    if design is not None:
        return int(design.spare_nodes)
    return int(resolve_spare_nodes(scenario, catalog, gpus))


def _local_tier(r: Any, node: Any, ck: CheckpointTimes, gpus: int, nodes: int, replicas: int,
                nvme: Any) -> LocalTierTimes:
    """Local-tier times from NVMe and the compute network, overridden by the scenario."""
    net = node.compute_nics * node.compute_nic_gbps / 8.0 if node.compute_nics else None
    lt = local_tier_times(ck.size_gb, gpus, nodes, replicas, nvme, net)
    if r.local_checkpoint_blocking_s != "auto":
        lt = replace(lt, blocking_s=float(r.local_checkpoint_blocking_s),
                     source=lt.source + "; stall from the scenario")
    if r.local_checkpoint_write_s != "auto":
        w = float(r.local_checkpoint_write_s)
        lt = replace(lt, persist_s=w, restore_s=max(w, lt.blocking_s),
                     source=lt.source + "; write time from the scenario")
    return lt


def _checkpoint_timing(scenario: Any, estimate: Any, design: Any, node: Any, gpus: int, nodes: int,
                       ) -> tuple[CheckpointTimes, LocalTierTimes | None, float, float]:
    """Checkpoint size and storage times (the local tier's when ``local_checkpoint_interval_min``
    is not ``none``); the file-system stall and background write (s)."""
    r = scenario.reliability
    multi, replicas = r.local_checkpoint_interval_min != "none", int(r.local_checkpoint_replicas)
    params = (estimate.params_total if estimate is not None else None) or param_count(scenario.model).total
    node_bw = node.storage_nics * node.storage_nic_gbps / 8.0 if node.storage_nics else None
    storage = design.storage if design is not None else None
    nvme = (storage.nvme_write_gbps_per_node if storage is not None else None) or node.local_nvme_write_gb_per_s or None
    ck = checkpoint_times(params, scenario.training.precision, gpus, nodes,
                          StorageRates(storage.write_gbps if storage is not None else None,
                                       storage.read_gbps if storage is not None else None, node_bw, nvme))
    lt = _local_tier(r, node, ck, gpus, nodes, replicas, nvme) if multi else None
    if r.checkpoint_blocking_s == "auto" and lt is not None:
        blocking_s, persist_s = lt.blocking_s, ck.write_s     # two-stage: drained in background
    elif r.checkpoint_blocking_s == "auto":
        blocking_s, persist_s = ck.write_s, 0.0
    else:
        blocking_s = float(r.checkpoint_blocking_s)
        persist_s = max(0.0, ck.write_s - blocking_s)
    return ck, lt, blocking_s, persist_s


def _spares_advice(rates: JobRates, spares: int, nodes: int, notes: list[str]
                   ) -> tuple[float, int, float]:
    """Mean nodes in repair, spares advised, and the share of time the job is runnable."""
    in_repair = rates.unexpected_per_h * rates.repair_share * rates.repair_h
    spares_advised = min(spares_needed(in_repair),
                         spares_worth_keeping(in_repair, rates.repair_h, nodes))
    # share of time a job with this many spares is not blocked by repairs (time average)
    runnable = poisson_cdf(spares, in_repair)
    if spares < spares_advised:
        notes.append(f"{spares} spare nodes: about {1 - runnable:.1%} of the time more nodes are in "
                     f"repair than there are spares; {spares_advised} spares avoid nearly all "
                     "waiting")
    return in_repair, spares_advised, runnable


def _tier_spec(rates: JobRates, ck: CheckpointTimes, lt: LocalTierTimes, restart_h: float,
               replicas: int, notes: list[str]) -> tuple[TierSpec, float]:
    """The local tier for the simulation and the share of failures that lose its copy."""
    q_loss = rates.repair_share if replicas == 0 else 0.0
    restart_local_h = max(restart_h - ck.restore_s / 3600.0, 0.0) + lt.restore_s / 3600.0
    tiers = TierSpec(lt.blocking_s / 3600.0, lt.persist_s / 3600.0, restart_local_h, replicas)
    if replicas == 0 and q_loss > 0:
        notes.append(f"node-local checkpoints die with their node: {q_loss:.0%} of failures "
                     "(those needing a repair) restore from the file system; "
                     "local_checkpoint_replicas: 1 keeps a copy on a peer node")
    return tiers, q_loss


def resolve_inputs(scenario: Any, catalog: Any, estimate: Any, design: Any,
                   notes: list[str]) -> StageInputs:
    """The stage's inputs; raises :class:`InfeasibleError` for a fixed interval below its floor."""
    r, src = scenario.reliability, scenario.source
    profile: FailureProfile = profile_for(scenario, catalog)
    node = catalog.node(scenario.cluster.node, source=src, path="cluster.node")
    gpus = int(estimate.gpus)
    nodes = max(1, math.ceil(gpus / node.gpus))
    spares = _spare_nodes(scenario, catalog, design, gpus, nodes)
    rates = scenario_rates(scenario, profile, gpus, node.gpus,
                           include_planned=r.include_planned)
    local_key = r.local_checkpoint_interval_min
    replicas = int(r.local_checkpoint_replicas)
    ck, lt, blocking_s, persist_s = _checkpoint_timing(scenario, estimate, design, node, gpus, nodes)
    restart_h = r.restart_min / 60.0
    if ck.restore_s / 60.0 > r.restart_min:
        notes.append(f"reading the checkpoint back takes {ck.restore_s / 60:.1f} min, more than "
                     f"restart_min ({r.restart_min:g} min), which should include it")
    step_s = float(estimate.step_time_s or 0.0) if estimate is not None else 0.0
    floor_min = max(ck.write_s, blocking_s, step_s) / 60.0
    local_floor_min = max(lt.persist_s, lt.blocking_s, step_s) / 60.0 if lt is not None else None

    mtbf_min = rates.mtbf_h * 60.0
    delta_min = blocking_s / 60.0
    finite = math.isfinite(mtbf_min)
    young = iv.young(delta_min, mtbf_min) if finite else math.inf
    daly = iv.daly(delta_min, mtbf_min) if finite else math.inf
    check_intervals(r, src, local_key, floor_min, local_floor_min, step_s)

    in_repair, spares_advised, runnable = _spares_advice(rates, spares, nodes, notes)
    # first-order ETTR at the Daly interval: a run whose wall clock is mostly failures takes
    # proportionally more events per work hour, so its simulated horizons shrink by it
    e_est = max(1e-3, iv.ettr_daly(max(daly, floor_min), delta_min, mtbf_min, r.restart_min)
                * runnable) if finite else 1.0
    tiers, q_loss = None, 0.0
    if lt is not None:
        tiers, q_loss = _tier_spec(rates, ck, lt, restart_h, replicas, notes)
    return StageInputs(
        r=r, src=src, profile=profile, gpus=gpus, nodes=nodes, spares=spares, rates=rates,
        local_key=local_key, replicas=replicas, ck=ck, lt=lt, blocking_s=blocking_s,
        persist_s=persist_s, restart_h=restart_h, floor_min=floor_min,
        local_floor_min=local_floor_min, mtbf_min=mtbf_min, delta_min=delta_min, finite=finite,
        young=young, daly=daly, work_h=float(estimate.days) * 24.0, in_repair=in_repair,
        spares_advised=spares_advised, runnable=runnable, e_est=e_est, slow=min(1.0, e_est / 0.5),
        tiers=tiers, q_loss=q_loss)


def check_intervals(r: Any, src: str, local_key: Any, floor_min: float,
                    local_floor_min: float | None, step_s: float) -> None:
    """Fixed intervals must be at least one checkpoint (or step) long, and the local one no
    longer than the file-system one."""
    if r.checkpoint_interval_min != "auto":
        used_min = float(r.checkpoint_interval_min)
        if used_min < floor_min:
            what = ("one training step" if floor_min * 60 == step_s else "writing one checkpoint")
            raise InfeasibleError([Problem(src, "reliability.checkpoint_interval_min",
                                           f"{used_min:g} min is shorter than {what} "
                                           f"({floor_min * 60:.1f} s); use at least "
                                           f"{math.ceil(floor_min * 10) / 10:g} min or 'auto'")])
    if local_key not in ("none", "auto"):
        assert local_floor_min is not None
        local_used = float(local_key)
        if local_used < local_floor_min:
            raise InfeasibleError([Problem(src, "reliability.local_checkpoint_interval_min",
                                           f"{local_used:g} min is shorter than one local checkpoint"
                                           f" or step ({local_floor_min * 60:.1f} s); use at least "
                                           f"{math.ceil(local_floor_min * 10) / 10:g} min or 'auto'")])
        if r.checkpoint_interval_min != "auto" and local_used > float(r.checkpoint_interval_min):
            raise InfeasibleError([Problem(src, "reliability.local_checkpoint_interval_min",
                                           f"{local_used:g} min is longer than the file-system "
                                           f"interval checkpoint_interval_min "
                                           f"({float(r.checkpoint_interval_min):g} min); the local "
                                           "tier must be the more frequent one")])
