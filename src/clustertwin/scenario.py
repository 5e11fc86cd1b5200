"""The scenario file: schema (pydantic v2), loading, and resolution against the catalog.

:func:`load_scenario` reads a YAML/TOML file (or a dict) and returns a :class:`Scenario`:
validated, defaults filled, the model preset merged with explicit fields and every catalog id
checked. Problems are collected and raised together as one :class:`ScenarioError`, one line
per problem naming the file, the key path and what was expected.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from clustertwin.catalog import Catalog, load_catalog
from clustertwin.catalog.models import MoESpec
from clustertwin.errors import Problem, ScenarioError, UserError
from clustertwin.io import no_bool_for_number, pydantic_problems, read_document

Auto = Literal["auto"]
PosInt = Annotated[int, Field(gt=0, le=2**40, strict=False)]
#: Most GPUs a scenario may install or use: 2**20, the scale of the largest clusters announced
#: (xAI Colossus 2, ~1M GPUs planned, 2025). The reliability Monte Carlo costs trials x
#: interruptions per run: ~9 s at 524,288 GPUs with 1,000 trials on one core (issue 15).
MAX_GPUS = 1_048_576
GpuCount = Annotated[int, Field(gt=0, le=MAX_GPUS, strict=False)]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_number(cls, v: Any, info: Any) -> Any:
        """``true`` where a number is expected is a mistake, not 1 (issue 15)."""
        return no_bool_for_number(cls.model_fields[info.field_name].annotation, v)


#: Largest sizes the models compute in seconds (searches loop over divisors of layers, batch
#: and GPU counts); far past any published model: Llama 3 405B has 126 layers, width 16,384,
#: vocabulary 128,256; the longest trained context is ~10 M tokens (issue 15).
_SIZE_MAX_MODEL = {"layers": 1024, "hidden": 262_144, "ffn_hidden": 1_048_576, "heads": 4096,
                   "kv_heads": 4096, "vocab": 16_777_216}
_SIZE_MAX = {**_SIZE_MAX_MODEL, "seq_len": 16_777_216, "global_batch_tokens": 2**36,
             "global_batch_seqs": 2**26, "micro_batch": 2**20, "virtual_stages": 1024,
             "tp": MAX_GPUS, "pp": 1024, "cp": MAX_GPUS, "ep": MAX_GPUS, "dp": MAX_GPUS}


def _at_most(v: Any, name: str) -> Any:
    top = _SIZE_MAX[name]
    if isinstance(v, int) and not isinstance(v, bool) and v > top:
        raise ValueError(f"at most {top:,} (got {v:,})")
    return v


class ModelSection(_Section):
    """The network to train. A ``preset`` fills every field; explicit fields override it."""

    preset: str | None = Field(None, description="model catalog id (llama3-405b, gpt3-175b, ...)")
    layers: PosInt | None = Field(None, description="transformer blocks")
    hidden: PosInt | None = Field(None, description="model width d_model")
    ffn_hidden: PosInt | None = Field(None, description="dense MLP inner width")
    heads: PosInt | None = Field(None, description="attention (query) heads")
    kv_heads: PosInt | None = Field(None, description="key/value heads; = heads for multi-head attention")
    vocab: PosInt | None = Field(None, description="vocabulary size")
    mlp: Literal["gelu", "swiglu"] | None = Field(None, description="MLP type")
    moe: MoESpec | None = Field(None, description="mixture-of-experts layout; absent = dense")
    tied_embeddings: bool | None = Field(None, description="input embedding shared with the LM head")

    @field_validator(*_SIZE_MAX_MODEL)
    @classmethod
    def _size_bound(cls, v: Any, info: Any) -> Any:
        return _at_most(v, info.field_name)


class ResolvedModel(_Section):
    """A model with every architectural field known (preset merged with overrides)."""

    name: str
    layers: PosInt
    hidden: PosInt
    ffn_hidden: PosInt
    heads: PosInt
    kv_heads: PosInt
    vocab: PosInt
    mlp: Literal["gelu", "swiglu"]
    moe: MoESpec | None = None
    tied_embeddings: bool = False

    @field_validator(*_SIZE_MAX_MODEL)
    @classmethod
    def _size_bound(cls, v: Any, info: Any) -> Any:
        return _at_most(v, info.field_name)

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


class Parallelism(_Section):
    """Pinned parallelism; any key left out or set to ``auto`` is searched."""

    tp: PosInt | Auto = Field("auto", description="tensor-parallel degree")
    pp: PosInt | Auto = Field("auto", description="pipeline stages")
    cp: PosInt | Auto = Field("auto", description="context-parallel degree")
    ep: PosInt | Auto = Field("auto", description="expert-parallel degree")
    dp: PosInt | Auto = Field("auto", description="data-parallel replicas")
    micro_batch: PosInt | Auto = Field("auto", description="sequences per micro-batch")
    virtual_stages: PosInt | Auto = Field("auto", description="interleaved chunks per stage (1 = plain 1F1B)")
    recompute: Literal["none", "selective", "full", "auto"] = Field("auto", description="activation recomputation")
    sequence_parallel: bool | Auto = Field("auto", description="Megatron sequence parallelism")
    zero: Literal[0, 1, 2, 3] | Auto = Field("auto", description="ZeRO stage (3 = FSDP)")

    @field_validator("tp", "pp", "cp", "ep", "dp", "micro_batch", "virtual_stages")
    @classmethod
    def _size_bound(cls, v: Any, info: Any) -> Any:
        return _at_most(v, info.field_name)

    def pinned(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v != "auto"}


class Training(_Section):
    tokens: float = Field(gt=0, le=1e18, description="tokens to train on")
    seq_len: PosInt = Field(description="sequence length, tokens")
    global_batch_tokens: PosInt | None = Field(None, description="tokens per optimizer step")
    global_batch_seqs: PosInt | None = Field(None, description="sequences per optimizer step")
    precision: Literal["bf16", "fp16", "fp8"] = Field("bf16", description="training math precision")
    stack: str = Field("megatron", description="software stack id from the catalog (kind 'stack': megatron, torchtitan, fsdp, deepspeed, ...)")
    parallelism: Parallelism = Field(default_factory=Parallelism, description="'auto' or a mapping of pinned keys")
    gpus: GpuCount | Auto = Field("auto", description="GPUs the run uses, at most cluster.gpus; auto = the fastest "
                                "plan on at most the installed GPUs, in whole nodes")
    batch_rounding: Literal["nearest", "exact"] = Field(
        "nearest", description="nearest = the global batch may move (at most perf.jobsize.BATCH_TOLERANCE) to a "
        "size the plan divides; exact = only plans that divide the batch as given")

    @field_validator("seq_len", "global_batch_tokens", "global_batch_seqs")
    @classmethod
    def _size_bound(cls, v: Any, info: Any) -> Any:
        return _at_most(v, info.field_name)

    @field_validator("parallelism", mode="before")
    @classmethod
    def _auto_parallelism(cls, v: Any) -> Any:
        return {} if v == "auto" or v is None else v

    @field_validator("tokens", mode="before")
    @classmethod
    def _tokens_number(cls, v: Any) -> Any:
        if isinstance(v, str):
            try:
                return float(v.replace("_", ""))
            except ValueError:
                raise ValueError("expected a number of tokens such as 15.6e12") from None
        return v

    @model_validator(mode="after")
    def _one_batch(self) -> Training:
        if (self.global_batch_tokens is None) == (self.global_batch_seqs is None):
            raise ValueError("give exactly one of global_batch_tokens or global_batch_seqs")
        return self

    @property
    def batch_seqs(self) -> int:
        """Global batch in sequences (tokens rounded down to whole sequences, at least one)."""
        if self.global_batch_seqs is not None:
            return self.global_batch_seqs
        return max(1, int(self.global_batch_tokens) // self.seq_len)  # type: ignore[arg-type]

    @property
    def batch_tokens(self) -> int:
        return self.batch_seqs * self.seq_len

    @property
    def pinned(self) -> dict[str, Any]:
        return self.parallelism.pinned()


class FabricSection(_Section):
    technology: str = Field("ib-ndr", description="compute-fabric family catalog id")
    topology: Literal["rail-optimized-fat-tree", "fat-tree"] = Field("rail-optimized-fat-tree")
    oversubscription: float = Field(1.0, ge=1.0, le=64.0, description="leaf downlink:uplink ratio (1.0 = non-blocking)")
    pod_gpus: int | None = Field(None, description="GPUs under one pod (leaves + spines at the leaf ratio); "
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


class Cluster(_Section):
    gpu: str = Field(description="GPU catalog id")
    node: str = Field(description="node/system catalog id")
    gpus: GpuCount | None = Field(None, description="GPUs installed (spares excluded); the job uses training.gpus of them")
    deadline_days: float | None = Field(None, ge=1 / 24, le=1000, description="solve for the GPU count that trains within this many days")
    deadline_basis: Literal["wall-clock", "failure-free"] = Field(
        "wall-clock", description="wall-clock = the deadline includes failures, checkpoints and restarts "
        "(reliability.effective_days); failure-free = training.days")
    spare_nodes: Annotated[int, Field(le=MAX_GPUS)] | Auto = Field("auto", description="hot spares beyond the job's nodes; auto = enough that "
                                    "at most 0.1% of repair-needing failures wait for a spare")

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


#: Upper bounds of the reliability numbers: past them the models stop meaning anything and the
#: spare and interval searches grow without end (issue 15).
_RELIABILITY_MAX = {
    "failures_per_1000_node_days": (1_000.0, "one failure per node-day, ~250x Llama 3's rate"),
    "checkpoint_interval_min": (43_200.0, "30 days"),
    "checkpoint_blocking_s": (86_400.0, "a day"),
    "local_checkpoint_blocking_s": (86_400.0, "a day"),
    "local_checkpoint_write_s": (86_400.0, "a day"),
    "repair_h": (720.0, "30 days"),
}


class Reliability(_Section):
    failure_profile: str = Field("auto", description="failure-profile catalog id; auto = the "
                                 "profile the catalog names for the cluster's GPU generation")
    failures_per_1000_node_days: float | Auto = Field("auto", description="overrides the profile's total rate")
    checkpoint_interval_min: float | Auto = Field("auto", description="minutes between checkpoints; auto = optimum")
    checkpoint_blocking_s: float | Auto = Field("auto", description="training stall per checkpoint; auto = from size and storage")
    restart_min: float = Field(10.0, ge=0, le=10080, description="detect + reschedule + init + reload per interruption")
    trials: Annotated[int, Field(gt=0, le=10_000)] = Field(1000, description="Monte Carlo trials (at most 10,000)")
    seed: int = Field(0, ge=0, description="random seed")
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
        top = _RELIABILITY_MAX[info.field_name]
        if v != "auto" and v > top[0]:
            raise ValueError(f"at most {top[0]:g} ({top[1]}); got {v:g}")
        return v

    @field_validator("local_checkpoint_interval_min")
    @classmethod
    def _local_interval(cls, v: Any) -> Any:
        if v not in ("none", "auto") and not 0 < v <= 525_600:
            raise ValueError("must be 'none', 'auto' or a number of minutes > 0 and at most a year (525600)")
        return v


class Economics(_Section):
    cloud_usd_per_gpu_hour: float = Field(3.0, gt=0, le=1000, description="rental price to compare against")
    electricity_usd_per_kwh: float = Field(0.08, ge=0, le=10, description="energy price")
    pue: float | Auto = Field("auto", description="power usage effectiveness; auto = from the cooling design")
    depreciation_years: float = Field(4.0, gt=0, le=100, description="straight-line life of IT equipment")
    facility: Literal["auto", "build", "lease"] = Field("auto", description="build the facility (capex) or lease colocation (opex); auto = lease when the design fits an existing facility, else build")
    wasted_fraction: float | Auto = Field("auto", description="extra GPU-hours lost to failures and checkpoints over a failure-free run (0.3 = +30%); auto = from reliability")
    costs: str = Field("us-2025", description="cost-book catalog id (facility, colocation, staff, maintenance)")

    @field_validator("pue")
    @classmethod
    def _pue(cls, v: Any) -> Any:
        if v != "auto" and not 1.0 <= v <= 5.0:
            raise ValueError(f"PUE is at least 1.0 and at most 5.0 (got {v:g})")
        return v

    @field_validator("wasted_fraction")
    @classmethod
    def _wasted(cls, v: Any) -> Any:
        if v != "auto" and not 0 <= v <= 100:
            raise ValueError("must be 'auto' or a number from 0 to 100 (0.3 = 30% extra GPU-hours)")
        return v


class Buildout(_Section):
    profile: Literal["auto", "new-build", "existing-facility", "small-order", "fast-track"] = Field(
        "auto", description="auto = existing-facility when the design fits one, else new-build")
    start_date: _dt.date = Field(_dt.date(2027, 1, 5), ge=_dt.date(1970, 1, 1), le=_dt.date(2200, 12, 31),
                                 description="day the program starts (ISO date, 1970 to 2200)")


class ScenarioFile(_Section):
    """The document as the user writes it (before catalog resolution)."""

    schema_version: Literal[1] = Field(1, description="scenario schema version")
    name: str = Field("scenario", description="free text, used in report titles")
    model: ModelSection | None = Field(None, description="absent (with training) = a design-only plan")
    training: Training | None = Field(None, description="absent (with model) = a design-only plan")
    cluster: Cluster
    reliability: Reliability = Field(default_factory=Reliability)
    economics: Economics = Field(default_factory=Economics)
    buildout: Buildout = Field(default_factory=Buildout)


class Scenario(_Section):
    """A validated scenario with catalog ids resolved (``model`` fully specified)."""

    schema_version: Literal[1] = 1
    name: str
    model: ResolvedModel | None  #: None (with training) = a design-only scenario
    training: Training | None
    cluster: Cluster
    reliability: Reliability
    economics: Economics
    buildout: Buildout
    source: str = Field("<memory>", description="file the scenario came from", exclude=True)

    @property
    def gpus(self) -> int | None:
        return self.cluster.gpus

    @property
    def design_only(self) -> bool:
        """No model or training: plan designs, prices and schedules a shared cluster."""
        return self.training is None


_MODEL_FIELDS = ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "mlp", "moe", "tied_embeddings")


def _resolve_model(doc: ScenarioFile, catalog: Catalog, source: str, problems: list[Problem]) -> ResolvedModel | None:
    """The preset merged with explicit fields; problems appended (None when there are any)."""
    assert doc.model is not None
    merged: dict[str, Any] = {}
    name = doc.model.preset or "custom"
    if doc.model.preset is not None:
        if catalog.has("model", doc.model.preset):
            preset = catalog.get("model", doc.model.preset)
            merged = {k: getattr(preset, k) for k in _MODEL_FIELDS}
        else:
            problems.append(Problem(source, "model.preset", catalog.unknown_message("model", doc.model.preset)))
    for k in _MODEL_FIELDS:
        v = getattr(doc.model, k)
        if v is not None:
            merged[k] = v
    if doc.model.kv_heads is None and "kv_heads" not in merged and doc.model.heads is not None:
        merged["kv_heads"] = doc.model.heads
    model: ResolvedModel | None = None
    if not problems:
        missing = [k for k in _MODEL_FIELDS if k not in merged and k not in ("moe", "tied_embeddings")]
        for k in missing:
            problems.append(Problem(source, f"model.{k}", "required (no preset gives it)"))
        if not missing:
            try:  # a preset from a user catalog is bounded like explicit fields
                model = ResolvedModel(name=name, **merged)
            except ValidationError as exc:
                problems.extend(pydantic_problems(exc, source, "model"))
                return None
            problems.extend(_check_model(model, source))
    return model


#: GPUs in one host of a rack-scale system: a GB200 NVL72 compute tray holds 2 Grace + 4 Blackwell
#: (NVIDIA DGX GB200 user guide, as cited in catalog/data/nodes.yaml); a job takes whole trays
RACK_SCALE_HOST_GPUS = 4


def job_unit_gpus(node: Any) -> int:
    """Granularity of a training job's GPU count: whole nodes, or whole compute trays of a
    rack-scale system (a job may use part of an NVL72 rack; the rest idles)."""
    if getattr(node, "rack_scale", False) and node.gpus % RACK_SCALE_HOST_GPUS == 0:
        return RACK_SCALE_HOST_GPUS
    return int(node.gpus)


def _check_sizes(doc: ScenarioFile, node: Any, source: str) -> list[Problem]:
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
        if t.gpus % unit:
            lo = t.gpus // unit * unit
            what = "compute trays" if unit != node.gpus else f"{node.id} nodes"
            out.append(Problem(source, "training.gpus", f"{t.gpus} is not a whole number of "
                               f"{unit}-GPU {what}; try {lo or unit} or auto"))
    if t.global_batch_tokens is not None and t.global_batch_tokens < t.seq_len:
        out.append(Problem(source, "training.global_batch_tokens", f"smaller than one sequence ({t.seq_len} tokens)"))
    return out


#: Most Monte Carlo trials x installed GPUs: the reliability simulation costs trials x
#: interruptions per run, ~10 s on one core at this product (1,000 trials x 524,288 GPUs: 9 s);
#: trials alone are at most 10,000 (100,000 trials took 31 s on 1,024 GPUs; issue 15)
MAX_TRIAL_GPUS = 2**29
#: GPUs past which a run's interruptions no longer add simulation work: the reliability stage
#: simulates about reliability.stage.MAIN_FAILURES (1,000) per trial and stretches the totals,
#: which a 54-day run reaches near 40,000 H100 (issue 11: 1,000,000 GPUs x 1,000 trials, 1.3 s)
STRETCH_GPUS = 2**16


def _check_budget(doc: ScenarioFile, source: str) -> list[Problem]:
    gpus = doc.cluster.gpus
    if gpus is None or doc.reliability.trials * min(gpus, STRETCH_GPUS) <= MAX_TRIAL_GPUS:
        return []
    most = max(1, MAX_TRIAL_GPUS // min(gpus, STRETCH_GPUS))
    return [Problem(source, "reliability.trials", f"{doc.reliability.trials:,} trials on {gpus:,} GPUs "
                    f"would take minutes (trials x GPUs at most {MAX_TRIAL_GPUS:,}); use at most {most:,} trials")]


def _resolve(doc: ScenarioFile, catalog: Catalog, source: str) -> Scenario:
    problems: list[Problem] = []
    model = _resolve_model(doc, catalog, source, problems) if doc.model is not None else None
    cl = doc.cluster
    gpu_ok = catalog.has("gpu", cl.gpu)
    if not gpu_ok:
        problems.append(Problem(source, "cluster.gpu", catalog.unknown_message("gpu", cl.gpu)))
    if not catalog.has("node", cl.node):
        problems.append(Problem(source, "cluster.node", catalog.unknown_message("node", cl.node)))
    else:
        node = catalog.get("node", cl.node)
        if gpu_ok and node.gpu != cl.gpu:
            fits = [n.id for n in catalog.all("node") if n.gpu == cl.gpu]
            hint = (f"nodes built on it: {', '.join(fits)}" if fits else
                    f"the catalog has no node built on {cl.gpu!r}; add one with --catalog DIR")
            problems.append(Problem(source, "cluster.node",
                                    f"node {cl.node!r} holds {node.gpu!r}, not {cl.gpu!r}; {hint}"))
        unit = job_unit_gpus(node)  # whole nodes; a rack-scale system's last rack may be partly filled
        if cl.gpus is not None and cl.gpus % unit:
            lo = cl.gpus // unit * unit
            hint = f"{lo} or {lo + unit}" if lo else f"{unit}"
            what = f"GPUs per {cl.node}" if unit == node.gpus else f"GPUs per compute tray of {cl.node}"
            problems.append(Problem(source, "cluster.gpus",
                                    f"{cl.gpus} is not a multiple of the {unit} {what}; try {hint}"))
        problems.extend(_check_sizes(doc, node, source))
    problems.extend(_check_budget(doc, source))
    if gpu_ok and doc.training is not None:
        gpu = catalog.get("gpu", cl.gpu)
        if doc.training.precision not in gpu.peak_tflops:
            have = ", ".join(p for p in ("fp8", "bf16", "fp16") if p in gpu.peak_tflops)
            problems.append(Problem(source, "training.precision",
                                    f"{cl.gpu} has no {doc.training.precision} tensor-core peak; it supports {have}"))
    for key in ("leaf_switch", "spine_switch"):
        sw = getattr(cl.fabric, key, None)
        if sw is not None and not catalog.has("switch", sw):
            problems.append(Problem(source, f"cluster.fabric.{key}", catalog.unknown_message("switch", sw)))
    if doc.training is not None:
        from clustertwin.perf.stacks import find_stack, unknown_stack

        if find_stack(catalog, doc.training.stack) is None:
            problems.append(unknown_stack(catalog, doc.training.stack, source, "training.stack"))
    if not catalog.has("fabric", cl.fabric.technology):
        problems.append(Problem(source, "cluster.fabric.technology", catalog.unknown_message("fabric", cl.fabric.technology)))
    reliability = doc.reliability
    if reliability.failure_profile == "auto" and catalog.has("gpu", cl.gpu):
        from clustertwin.reliability.profiles import default_profile_id

        reliability = reliability.model_copy(
            update={"failure_profile": default_profile_id(catalog, cl.gpu)})
    if not catalog.has("failure_profile", reliability.failure_profile):
        problems.append(Problem(source, "reliability.failure_profile",
                                catalog.unknown_message("failure_profile", reliability.failure_profile)))
    if not catalog.has("costs", doc.economics.costs):
        problems.append(Problem(source, "economics.costs", catalog.unknown_message("costs", doc.economics.costs)))
    if problems:
        raise ScenarioError(problems)
    return Scenario(name=doc.name, model=model, training=doc.training, cluster=doc.cluster,
                    reliability=reliability, economics=doc.economics, buildout=doc.buildout,
                    source=source)


def _check_model(m: ResolvedModel, source: str) -> list[Problem]:
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


def scenario_from_dict(data: Any, source: str = "<memory>", catalog: Catalog | None = None) -> Scenario:
    """Validate a parsed document and resolve it against the catalog."""
    if not isinstance(data, dict):
        raise ScenarioError([Problem(source, "", "a scenario is a mapping with model, training and cluster sections")])
    try:
        doc = ScenarioFile.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(pydantic_problems(exc, source)) from None
    return _resolve(doc, catalog or load_catalog(), source)


def load_scenario(path: str | Path | None = None, catalog: Catalog | None = None) -> Scenario:
    """Load a scenario file; ``None`` loads the built-in default scenario."""
    if path is None:
        path = DEFAULT_SCENARIO
    doc, bad = read_document(path, numbers="collect")
    if not bad:
        return scenario_from_dict(doc, str(path), catalog)
    # non-finite or out-of-range numbers: report them with every schema problem, in one pass
    seen = {p.path for p in bad}
    try:
        scenario_from_dict(doc, str(path), catalog)
        more: list[Problem] = []
    except UserError as exc:
        more = [p for p in exc.problems if p.path not in seen]
    except Exception:  # noqa: BLE001 - the bad numbers are the answer; the rest is a consequence
        more = []
    raise ScenarioError(bad + more)


DEFAULT_SCENARIO = Path(__file__).parent / "data" / "default.yaml"


def with_updates(s: Scenario, **section_updates: dict[str, Any]) -> Scenario:
    """A copy of ``s`` with some section fields replaced and re-validated (used by sweeps,
    what-ifs and the deadline solver). ``with_updates(s, cluster={"gpus": 8192})``."""
    data = s.model_dump(mode="python")
    if data["model"] is not None:
        data["model"] = {k: v for k, v in data["model"].items() if k != "name"}
        data["model"]["preset"] = None
    for section, upd in section_updates.items():
        data[section] = {**(data[section] or {}), **upd}
    if "cluster" in section_updates and section_updates["cluster"].get("gpus") is not None:
        data["cluster"]["deadline_days"] = None
    t = data["training"]
    if t is not None and t["global_batch_tokens"] is not None and t["global_batch_seqs"] is not None:
        data["training"]["global_batch_tokens"] = None
    out = scenario_from_dict(data, s.source)
    return out.model_copy(update={"model": s.model})
