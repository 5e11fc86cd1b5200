"""The ``cluster`` section: GPU, node, size or deadline, spares, and the compute fabric."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from clustertwin.scenario.base import MAX_GPUS, Auto, GpuCount, Section


class FabricSection(Section):
    technology: str = Field("ib-ndr", description="compute-fabric family catalog id")
    topology: Literal["rail-optimized-fat-tree", "fat-tree"] = Field("rail-optimized-fat-tree")
    oversubscription: float = Field(1.0, ge=1.0, le=64.0, description="leaf downlink:uplink ratio (1.0 = non-blocking)")
    pod_gpus: int | None = Field(None, le=MAX_GPUS, description="GPUs under one pod (leaves + spines at the leaf ratio); "
                                 "pods are joined by an aggregation layer. None = one tree as sized by the radix")
    pod_oversubscription: float = Field(1.0, le=64.0, description="down:up ratio of a pod's spines toward the aggregation "
                                        "layer (7.0 = cross-pod bandwidth is 1/7 of injection); needs pod_gpus")
    leaf_switch: str | None = Field(None, description="switch catalog id of the leaves / ToRs; None = the fabric's switch")
    spine_switch: str | None = Field(None, description="switch catalog id above the leaves (spine and aggregation); "
                                     "None = the fabric's switch")
    dual_tor: bool = Field(False, description="each NIC's two ports go to two ToRs, one per plane (Alibaba HPN)")

    @field_validator("pod_gpus", mode="before")
    @classmethod
    def _pod_gpus(cls, v: Any) -> Any:
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError(f"expected a whole number of GPUs >= 1 (GPUs under one pod) or null, got {v!r}")
        return v

    @field_validator("pod_oversubscription")
    @classmethod
    def _pod_ratio(cls, v: float, info: Any) -> float:
        if v < 1.0:
            raise ValueError(f"{v:g} is below 1 (a pod cannot send more up than it takes in); "
                             "use 1.0 for a non-blocking aggregation layer")
        if v != 1.0 and "pod_gpus" in info.data and info.data["pod_gpus"] is None:
            raise ValueError("applies where pods meet the aggregation layer; set cluster.fabric.pod_gpus too")
        return v

    @field_validator("leaf_switch", "spine_switch")
    @classmethod
    def _switch_id(cls, v: Any) -> Any:
        if v is not None and not str(v).strip():
            raise ValueError("expected a switch catalog id (see `clustertwin catalog switch`) or null")
        return v


class Cluster(Section):
    gpu: str = Field(description="GPU catalog id")
    node: str = Field(description="node/system catalog id")
    gpus: GpuCount | None = Field(None, description="GPUs installed (spares excluded); the job uses training.gpus of them")
    deadline_days: float | None = Field(None, ge=1 / 24, le=1000, description="solve for the GPU count that trains within this many days")
    deadline_basis: Literal["wall-clock", "failure-free"] = Field(
        "wall-clock", description="wall-clock = the deadline includes failures, checkpoints and restarts "
        "(reliability.effective_days); failure-free = training.days")
    spare_nodes: Annotated[int, Field(le=MAX_GPUS)] | Auto = Field("auto", description="hot spares beyond the job's nodes; auto = enough that "
                                    "at most 0.1% of repair-needing failures wait for a spare; at most as "
                                    "many as the installed nodes (16 when that is fewer)")

    spare_placement: Literal["inside", "outside"] = Field(
        "inside", description="inside = hot spares take free slots of the scalable units the job "
        "already fills (a spare never opens a unit; spares that find no free slot are not "
        "installed, and the design says so); outside = spares get slots of their own, opening "
        "units and switches when needed (the design prices and names the switches they add)")

    @field_validator("spare_nodes")
    @classmethod
    def _spares(cls, v: Any) -> Any:
        if v != "auto" and v < 0:
            raise ValueError("must be 'auto' or a number of nodes >= 0")
        return v
    fabric: FabricSection = Field(default_factory=FabricSection)

    @model_validator(mode="after")
    def _one_size(self) -> Cluster:
        if (self.gpus is None) == (self.deadline_days is None):
            raise ValueError("give exactly one of gpus or deadline_days")
        return self
