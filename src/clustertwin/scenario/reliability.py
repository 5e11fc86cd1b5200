"""The ``reliability`` section: failure profile, checkpoint intervals and the Monte Carlo."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from clustertwin.scenario.base import Auto, Section

#: Upper bounds of the reliability numbers: past them the models stop meaning anything and the
#: spare and interval searches grow without end (issue 15).
RELIABILITY_MAX = {
    "failures_per_1000_node_days": (1_000.0, "one failure per node-day, ~250x Llama 3's rate"),
    "checkpoint_interval_min": (43_200.0, "30 days"),
    "checkpoint_blocking_s": (86_400.0, "a day"),
    "local_checkpoint_blocking_s": (86_400.0, "a day"),
    "local_checkpoint_write_s": (86_400.0, "a day"),
    "repair_h": (720.0, "30 days"),
}


#: Smallest non-zero failure rate: below it the mean time between failures outgrows any run
#: (1e-300 gave an MTBF of 3e303 hours and a checkpoint interval of 1e151 minutes); 0 = none.
_RELIABILITY_MIN = {
    "failures_per_1000_node_days": (1e-3, "one failure per million node-days, ~4,000x below Llama 3's rate"),
}


class Reliability(Section):
    failure_profile: str = Field("auto", description="failure-profile catalog id; auto = the "
                                 "profile the catalog names for the cluster's GPU generation")
    failures_per_1000_node_days: float | Auto = Field("auto", description="overrides the profile's total rate: "
                                                      "0 (none) or 0.001 to 1,000")
    checkpoint_interval_min: float | Auto = Field("auto", description="minutes between checkpoints; auto = optimum")
    checkpoint_blocking_s: float | Auto = Field("auto", description="training stall per checkpoint; auto = from size and storage")
    restart_min: float = Field(10.0, ge=0, le=10080, description="detect + reschedule + init + reload per interruption")
    trials: Annotated[int, Field(gt=0, le=10_000)] = Field(1000, description="Monte Carlo trials (at most 10,000)")
    seed: int = Field(0, ge=0, le=2**63 - 1, description="random seed, 0 to 2**63-1")
    local_checkpoint_interval_min: float | Literal["none", "auto"] = Field(
        "none", description="minutes between checkpoints to the local tier (node NVMe / host memory); none = file system only, auto = optimum")
    local_checkpoint_replicas: int = Field(0, ge=0, le=8, description="peer-node copies of each local checkpoint; 0 = lost with its node")
    local_checkpoint_blocking_s: float | Auto = Field("auto", description="training stall per local checkpoint; auto = GPU-to-host copy")
    local_checkpoint_write_s: float | Auto = Field("auto", description="background time until a local checkpoint (and its replicas) is durable; auto = from NVMe and network bandwidth")
    repair_h: float | Auto = Field("auto", description="hours to repair a failed node; auto = the failure profile's")
    include_planned: bool = Field(True, description="simulate the profile's planned (maintenance) interruptions")

    @field_validator("failures_per_1000_node_days", "checkpoint_interval_min", "checkpoint_blocking_s",
                     "local_checkpoint_blocking_s", "local_checkpoint_write_s", "repair_h")
    @classmethod
    def _positive(cls, v: Any, info: Any) -> Any:
        if v != "auto" and v < 0:
            raise ValueError("must be 'auto' or a number >= 0")
        low = _RELIABILITY_MIN.get(info.field_name)
        if low is not None and v != "auto" and 0 < v < low[0]:
            raise ValueError(f"0 or at least {low[0]:g} ({low[1]}); got {v:g}")
        top = RELIABILITY_MAX[info.field_name]
        if v != "auto" and v > top[0]:
            raise ValueError(f"at most {top[0]:g} ({top[1]}); got {v:g}")
        return v

    @field_validator("local_checkpoint_interval_min")
    @classmethod
    def _local_interval(cls, v: Any) -> Any:
        if v not in ("none", "auto") and not 0 < v <= 525_600:
            raise ValueError("must be 'none', 'auto' or a number of minutes > 0 and at most a year (525600)")
        return v
