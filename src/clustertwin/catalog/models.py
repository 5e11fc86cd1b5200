"""Typed models of catalog entries.

Every entry carries ``source`` and ``as_of``: where its figures come from and when they were
true. Prices carry their own ``price_source``/``price_as_of`` because they come from other
places and age faster than specs. Units are in field names and are SI or decimal-giga unless a
suffix says otherwise (``_gib`` for memory capacity).

The registry :data:`KINDS` maps the key used in catalog YAML files to the model of that kind.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Annotated, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from clustertwin.checked import CheckedModel
from clustertwin.quoting import IDENT_PATTERN, check_identifier

#: Upper bounds far above any part shipped or announced (a 1e308 W GPU or a 1e308 TFLOP/s peak
#: in a user's --catalog folder used to flow quietly into every figure): typos, not hardware.
_Tflops = Annotated[float, Field(gt=0, le=1e6)]
#: Largest model sizes the stages compute in seconds (searches loop over divisors of layers,
#: batch and GPU counts); far past any published model: Llama 3 405B has 126 layers, width
#: 16,384, vocabulary 128,256 (issue 15). The scenario's ``model`` keys share them.
MODEL_SIZE_MAX = {"layers": 1024, "hidden": 262_144, "ffn_hidden": 1_048_576, "heads": 4096,
                  "kv_heads": 4096, "vocab": 16_777_216}
#: Physical bounds of the network and storage parts (issue 31), each far past anything shipped:
#: a port of 100 Tb/s (1.6 Tb/s ships, 2025), a module or NIC of 10 kW (an 800G module draws
#: ~15-20 W), a switch or storage block of 1 MW (a modular chassis ~20 kW), 1,000 km of reach
#: (ZR optics: ~120 km), 10,000 ports, cages or U.
_Gbps = Annotated[float, Field(gt=0, le=1e5)]
_PartW = Annotated[float, Field(gt=0, le=1e4)]
_SystemKw = Annotated[float, Field(gt=0, le=1e3)]
_ReachM = Annotated[float, Field(gt=0, le=1e6)]
_Count = Annotated[int, Field(gt=0, le=10_000)]
_Tb = Annotated[float, Field(gt=0, le=1e7)]
_GBps = Annotated[float, Field(gt=0, le=1e6)]
#: Most a unit of each kind may cost: ten times the dearest priced part of that kind in the
#: built-in catalog (see its ``price_source``); a price past it is a typo (1e300 used to flow
#: into every cost). GPU: H200 $35,000; node: GB200 NVL72 rack $3.1M; switch: Arista 7808R3
#: $161,280; transceiver: 1.6T twin DR4 $2,200; cable: 800G twin DAC $300; storage: an
#: all-flash PFS building block $225,000; NIC (none priced): ten times a $10,000 dual-port 400G
#: adapter; equipment (facility.yaml): the dearest line, $3.42M.
PRICE_MAX_USD = {"gpu": 350_000.0, "node": 31_000_000.0, "switch": 1_612_800.0,
                 "transceiver": 22_000.0, "cable": 3_000.0, "storage": 2_250_000.0,
                 "nic": 100_000.0, "equipment": 34_200_000.0}
#: Largest figure a cost book or route table may hold: ~100x its largest built-in figure
#: (facility build cost, $11.7M per MW of critical IT load; costs.yaml).
VALUE_MAX = 1e9

_AS_OF = re.compile(r"\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?")


def _date_text(v: object) -> object:
    """An unquoted YAML date or year (``as_of: 2024-10-01``, ``as_of: 2024``) as text."""
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return v.isoformat() if isinstance(v, _dt.date) else v


def _as_of(v: str) -> str:
    if not _AS_OF.fullmatch(v):
        raise ValueError(f"a date: YYYY, YYYY-MM or YYYY-MM-DD (got {v[:40]!r})")
    return v


#: when a figure was true: YYYY, YYYY-MM or YYYY-MM-DD (``OptAsOf``: or empty)
AsOf = Annotated[str, BeforeValidator(_date_text), AfterValidator(_as_of)]
OptAsOf = Annotated[str, BeforeValidator(_date_text), AfterValidator(lambda v: v and _as_of(v))]


class _Frozen(CheckedModel):
    """Catalog figures reach every model: strict like the scenario (:mod:`clustertwin.checked`).
    ``defer_build``: a kind builds its validator when it first validates, which the built-in
    catalog read from :mod:`clustertwin.modelcache` never makes it do (the scenario's sections,
    validated on every run, build theirs at import, where a parent reuses a child's)."""

    model_config = ConfigDict(defer_build=True)


def _reference(cls: type, v: str, info: ValidationInfo) -> str:
    """A field naming another catalog entry: an identifier, as every id is."""
    return check_identifier(v, f"{info.field_name} (a catalog id)")


class Entry(_Frozen):
    """Fields every catalog entry has."""

    id: str = Field(description="catalog id, lower-case with dashes; what scenarios refer to "
                    f"and exports name things by, so an identifier: {IDENT_PATTERN}")
    name: str = Field(description="human-readable name")
    source: str = Field(description="where the figures of this entry come from")
    as_of: AsOf = Field(description="date (YYYY or YYYY-MM or YYYY-MM-DD) the figures were true")
    notes: str = Field("", description="caveats, derivations")

    @field_validator("id", mode="after")
    @classmethod
    def _id_is_identifier(cls, v: str) -> str:
        """Ids reach Slurm, Kubernetes and shell files unquoted (clustertwin.quoting)."""
        return check_identifier(v, "catalog id")


class Priced(_Frozen):
    price_usd: float | None = Field(None, ge=0, description="unit price, USD; at most ten times the "
                                    "dearest built-in part of the kind (catalog.models.PRICE_MAX_USD)")
    price_source: str = Field("", description="where the price comes from")
    price_as_of: OptAsOf = Field("", description="when the price was quoted (YYYY[-MM[-DD]])")
    part_number: str = Field("", description="the manufacturer's part number, or a named "
                             "configuration (a DGX/HGX SKU, an appliance and its building block)")
    part_number_reason: str = Field("", description="why there is no public part number (a "
                                    "configured-to-order system, a site-built plant item)")
    _price_kind: ClassVar[str] = ""

    @field_validator("price_usd")
    @classmethod
    def _plausible_price(cls, v: float | None) -> float | None:
        top = PRICE_MAX_USD.get(cls._price_kind)
        if v is not None and top is not None and v > top:
            raise ValueError(f"at most ${top:,.0f} for one {cls._price_kind} (ten times the dearest "
                             f"in the built-in catalog); got {v:,.6g}")
        return v


class GPU(Entry, Priced):
    _price_kind: ClassVar[str] = "gpu"
    vendor: str
    generation: str = Field(description="architecture family used to key calibration: ampere, hopper, blackwell, cdna3")
    form: Literal["sxm", "pcie", "superchip", "oam"]
    peak_tflops: dict[str, _Tflops] = Field(
        description="dense (non-sparse) peak tensor TFLOP/s per precision: tf32, bf16, fp16, fp8, fp4")
    hbm_gib: float = Field(gt=0, le=1e5, description="HBM capacity, GiB as marketed in GB (80 GB -> 80)")
    hbm_tb_per_s: float = Field(gt=0, le=1e3, description="HBM bandwidth, TB/s (1e12 B/s)")
    nvlink_gb_per_s: float = Field(gt=0, le=1e5, description="NVLink bandwidth per GPU, GB/s, both directions summed as marketed")
    tdp_w: float = Field(gt=0, le=1e5, description="board power, W")
    gfd_product: str | None = Field(
        None, max_length=63, pattern=r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$",
        description="the nvidia.com/gpu.product node label NVIDIA GPU Feature Discovery sets "
                    "(the NVML device name, spaces as '-'); a Kubernetes label value")
    gfd_product_source: str = Field("", description="where gfd_product comes from")
    achieved_tflops: dict[str, _Tflops] = Field(
        default_factory=dict, description="measured dense GEMM TFLOP/s per precision (bf16, fp8) of large "
        "shapes at the sustained clock under load: a hardware fact, whatever the training software")
    achieved_hbm_tb_per_s: float | None = Field(
        None, gt=0, le=1e3, description="measured HBM copy bandwidth, TB/s (a STREAM-like copy kernel)")
    achieved_source: str = Field("", description="where the achieved_* figures were measured")
    achieved_as_of: OptAsOf = Field("", description="when the achieved_* figures were measured")
    variant_of: str = Field("", description="catalog id of the part this one is a variant of (same die, "
                            "other memory, power or clocks)")


class Node(Entry, Priced):
    _price_kind: ClassVar[str] = "node"
    gpu: str = Field(description="GPU catalog id")
    gpus: int = Field(gt=0, le=10_000, description="GPUs per node (or per rack-scale system)")
    nvlink_domain_gpus: _Count = Field(description="GPUs that share one NVLink/NVSwitch domain")
    compute_nics: _Count = Field(description="scale-out (east-west) NIC ports per node, one per rail")
    compute_nic_gbps: float = Field(gt=0, le=1e5, description="speed of one compute NIC port, Gb/s")
    compute_cages: _Count = Field(description="physical OSFP/QSFP cages those ports use (twin-port cages carry 2)")
    compute_adapters: list[str] | None = Field(
        None, description="device names of the compute NICs in rail order as the OS shows them "
                          "(e.g. DGX H100 mlx5_0,3,4,5,6,9,10,11); None = mlx5_0..N-1")
    compute_adapters_source: str = Field("", description="where compute_adapters comes from")
    storage_nics: int = Field(0, ge=0, le=10_000, description="storage/in-band NIC ports")
    storage_nic_gbps: float = Field(0, ge=0, le=1e5)
    cpu: str = ""
    cpu_cores: int = Field(0, ge=0, le=10_000_000)
    ram_gib: float = Field(0, ge=0, le=1e9)
    local_nvme_tb: float = Field(0, ge=0, le=1e6, description="local NVMe capacity, TB (1e12 B)")
    local_nvme_write_gb_per_s: float = Field(0, ge=0, le=1e6, description="aggregate local NVMe write bandwidth, GB/s")
    max_power_kw: float = Field(gt=0, le=1e4, description="maximum system power, kW")
    typical_power_kw: float | None = Field(None, gt=0, le=1e4, description="typical training draw, kW (defaults to 0.85 x max if absent)")
    rack_units: int | None = Field(None, gt=0, le=100, description="height in U; None for a rack-scale system")
    rack_scale: bool = Field(False, description="True when one 'node' is a whole rack (GB200 NVL72)")
    ships_assembled: bool = Field(False, description="integrated system (DGX, OEM HGX server, NVL72 rack): arrives with CPUs, memory, GPUs and NICs fitted, so the build-out skips the assembly steps")
    cooling: Literal["air", "liquid"] = "air"
    weight_kg: float | None = Field(None, gt=0, le=1e5)
    airflow_cfm: float | None = Field(None, gt=0, le=1e6)

    _gpu_is_identifier = field_validator("gpu", mode="after")(_reference)


class Switch(Entry, Priced):
    _price_kind: ClassVar[str] = "switch"
    technology: Literal["infiniband", "ethernet"]
    ports: _Count = Field(description="ports at port_gbps")
    port_gbps: _Gbps
    cages: _Count = Field(description="physical cages (twin-port OSFP carries 2 ports)")
    rack_units: _Count
    power_kw_typical: _SystemKw
    power_kw_max: _SystemKw


class NIC(Entry, Priced):
    _price_kind: ClassVar[str] = "nic"
    gbps: _Gbps
    ports: _Count = 1
    power_w: _PartW


class Transceiver(Entry, Priced):
    _price_kind: ClassVar[str] = "transceiver"
    gbps: _Gbps = Field(description="aggregate speed of the module")
    switch_ports: _Count = Field(1, description="switch ports one module carries (twin-port = 2)")
    reach_m: _ReachM
    power_w: _PartW


class Cable(Entry, Priced):
    _price_kind: ClassVar[str] = "cable"
    medium: Literal["copper", "fiber"]
    gbps: _Gbps
    reach_m: _ReachM


class Fabric(Entry):
    """A compute-fabric family: which switch, NIC, optics and cables it is built from."""

    technology: Literal["infiniband", "ethernet"]
    link_gbps: _Gbps = Field(description="endpoint port speed, Gb/s")
    switch: str = Field(description="switch catalog id used at every tier")
    nic: str = Field(description="NIC catalog id")
    switch_transceiver: str = Field(description="transceiver id for switch-side optical ends")
    node_transceiver: str = Field(description="transceiver id for node-side optical ends")
    copper_cable: str = Field(description="cable id for in-rack copper links")
    fiber_cable: str = Field(description="cable id for optical links")
    hop_latency_us: float = Field(gt=0, le=1e6, description="switch port-to-port latency, microseconds")
    reserved_ports_per_su: int = Field(0, ge=0, le=10_000, description="node slots per SU taken by fabric managers (UFM)")
    per_gpu_gbps: float | None = Field(None, gt=0, le=1e5, description="scale-out bandwidth per GPU where it is below what the node's NICs and the link give (a cloud instance's network), Gb/s")

    _ids_are_identifiers = field_validator("switch", "nic", "switch_transceiver",
                                           "node_transceiver", "copper_cable", "fiber_cable",
                                           mode="after")(_reference)


class StorageSystem(Entry, Priced):
    _price_kind: ClassVar[str] = "storage"
    tier: Literal["nvme", "pfs", "object"]
    capacity_tb: _Tb = Field(description="usable capacity of one building block, TB")
    write_gb_per_s: _GBps = Field(description="sustained write of one block, GB/s")
    read_gb_per_s: _GBps = Field(description="sustained read of one block, GB/s")
    rack_units: _Count
    power_kw: _SystemKw
    usd_per_usable_pb_range: tuple[float, float] | None = Field(
        None, description="published range of a whole system's price per usable PB of this tier "
                          "(USD), that the block's price_usd / capacity_tb must lie in")
    range_source: str = Field("", description="where usd_per_usable_pb_range comes from")


class MoESpec(_Frozen):
    """Bounds as the dense sizes' (scenario.base): far past any published model (DeepSeek-V3:
    256 routed experts, 8 active, 1 shared, expert width 2,048, 3 dense layers of 61)."""

    experts: int = Field(gt=0, le=65_536, description="routed experts per MoE layer, at most 65,536")
    active_experts: int = Field(gt=0, le=65_536, description="routed experts each token visits (top-k)")
    shared_experts: int = Field(0, ge=0, le=65_536, description="always-on experts per MoE layer")
    expert_ffn_hidden: int = Field(gt=0, le=1_048_576, description="hidden size of one expert's MLP, at most 1,048,576")
    dense_layers: int = Field(0, ge=0, le=1024, description="leading layers that stay dense, at most 1,024")


class ModelPreset(Entry):
    layers: Annotated[int, Field(gt=0, le=MODEL_SIZE_MAX["layers"])]
    hidden: Annotated[int, Field(gt=0, le=MODEL_SIZE_MAX["hidden"])]
    ffn_hidden: Annotated[int, Field(gt=0, le=MODEL_SIZE_MAX["ffn_hidden"])]
    heads: Annotated[int, Field(gt=0, le=MODEL_SIZE_MAX["heads"])]
    kv_heads: Annotated[int, Field(gt=0, le=MODEL_SIZE_MAX["kv_heads"])]
    vocab: Annotated[int, Field(gt=0, le=MODEL_SIZE_MAX["vocab"])]
    mlp: Literal["gelu", "swiglu"]
    moe: MoESpec | None = None
    tied_embeddings: bool = False
    params_b_published: float | None = Field(None, gt=0, le=1e6, description="parameter count the authors state, billions")


class FailureCause(_Frozen):
    """One root cause of unexpected interruptions; ``count`` or ``share`` gives its weight."""

    count: float | None = Field(None, ge=0, description="interruptions observed in the basis run")
    share: float | None = Field(None, ge=0, le=1, description="share of all unexpected interruptions")
    category: str = Field("hardware", description="hardware | software | network | host | unknown ...")
    scales_with: Literal["gpus", "nodes"] = Field(
        "gpus", description="gpus: rate per basis node-equivalent of GPUs; nodes: per job node")
    needs_repair: bool = Field(True, description="True if the failed component must be swapped before reuse")


class FailureProfile(Entry):
    """A failure-rate profile: total rate, split by cause. Owned by the reliability stage.

    Rates are per node of the basis run (``gpus_per_node`` GPUs); a job with ``g`` GPUs has
    ``g / gpus_per_node`` node-equivalents for causes that scale with GPUs."""

    total_per_1000_node_days: float = Field(ge=1e-3, le=1e3, description="interruptions per 1,000 "
                                            "node-days, 0.001 to 1,000 (Llama 3: ~3.8)")
    basis_gpus: int | None = Field(None, gt=0, le=10_000_000)
    basis_days: float | None = Field(None, gt=0, le=36_500)
    gpus_per_node: _Count = 8
    causes: dict[str, FailureCause] = Field(default_factory=dict)
    planned_interruptions: float | None = Field(None, ge=0, le=1e9, description="planned interruptions in the basis run")
    repair_h: float = Field(8.0, ge=0, le=720, description="hours to diagnose, swap and return a failed node (at most 30 days)")
    default_for: list[str] = Field(default_factory=list, description="GPU generations (gpus.yaml "
                                   "`generation`) whose clusters get this profile under failure_profile: auto")
    era_for: list[str] = Field(default_factory=list, description="GPU generations whose runs of the "
                               "years era_years get this profile instead of the default_for one "
                               "(whole-run calibration rows; clustertwin.catalog.lookup.era_profile_id)")
    era_years: list[int] = Field(default_factory=list, description="[first, last] year of the era "
                                 "this profile describes")
    lost_hours_per_interruption: float | None = Field(
        None, gt=0, le=720, description="wall-clock hours a run of this era lost per interruption, all in "
        "(detection, diagnosis, node swap, checkpoint reload, rolled-back work), as its logbook "
        "gives them; None: priced from restart time and checkpoint interval")

    @model_validator(mode="after")
    def _weights(self) -> FailureProfile:
        for name, c in self.causes.items():
            if c.count is None and c.share is None:
                raise ValueError(f"cause {name!r} needs a count or a share")
        if self.planned_interruptions and not self.basis_days:
            raise ValueError("planned_interruptions needs basis_days")
        return self

    def cause_shares(self) -> dict[str, float]:
        """Share of the total rate per cause (counts normalised; shares used as given when no
        counts). A profile without causes is one cause, ``unattributed``."""
        if not self.causes:
            return {"unattributed": 1.0}
        use_counts = all(c.count is not None for c in self.causes.values())
        w = {k: float(c.count if use_counts else (c.share or 0.0)) for k, c in self.causes.items()}
        tot = sum(w.values())
        return {k: (v / tot if tot > 0 else 1.0 / len(w)) for k, v in w.items()}

    @property
    def planned_per_day(self) -> float:
        """Planned interruptions per job-day (maintenance does not scale with node count)."""
        if not self.planned_interruptions or not self.basis_days:
            return 0.0
        return self.planned_interruptions / self.basis_days


class SourcedValue(_Frozen):
    value: float = Field(ge=0, le=VALUE_MAX, description="a cost, rate or count; never negative, at most 1e9")
    unit: str
    source: str
    as_of: AsOf
    notes: str = ""


class CostBook(Entry):
    """Named economic figures (facility cost per MW, colocation rates, staff, maintenance ...)."""

    items: dict[str, SourcedValue]

    def value(self, key: str) -> float:
        return self.items[key].value


class Route(Entry):
    """A procurement route's sourced figures (build, colo, lease, cloud) or the figures the
    routes share (hardware lead times, resale curve). Keys with a GPU generation suffix
    (``_hopper``) are looked up per generation. Owned by the decision stage."""

    mode: Literal["build", "colo", "lease", "cloud", "hardware", "residual", "uncertainty"] = Field(
        description="the route these figures price, or a shared table (hardware, residual, uncertainty)")
    items: dict[str, SourcedValue]

    def value(self, key: str) -> float:
        return self.items[key].value


class PerfCalibration(Entry):
    """Constants of the training-time model for one GPU generation or one fabric technology
    (achievable GEMM/HBM/NVLink efficiencies, collective efficiencies and latencies), each
    file entry naming the published runs it was fitted to. Owned by the perf stage."""

    scope: Literal["gpu-generation", "fabric"] = Field(
        description="gpu-generation: keyed by GPU.generation; fabric: keyed by Fabric.technology")
    applies_to: str = Field(description="generation (ampere, hopper, ...) or fabric technology; 'default' = fallback")
    constants: dict[str, float] = Field(description="named constants; the perf stage lists the keys it needs")
    fitted_to: list[str] = Field(default_factory=list, description="calibration-CSV row ids the constants were fitted to")


#: a pass over a materialised attention score matrix (clustertwin.perf.ops.SCORE_PASSES)
ScorePass = Literal["scale", "mask", "softmax", "softmax-fp32", "scale-mask-softmax"]
#: one op of an eager element-wise chain (clustertwin.perf.ops.ELEMENTWISE_OPS)
ElementwiseOp = Literal[
    "layernorm-fp32", "cast-hidden", "cast-ffn", "head-copies", "merge-heads", "bias-grad-qkv",
    "bias-grad-hidden", "bias-grad-ffn", "dropout", "residual-add-fp32", "gelu-tanh-eager",
    "weight-cast",
]


class Stack(Entry):
    """A training software stack (Megatron-core, torchtitan, PyTorch FSDP, DeepSpeed, ...): which
    kernels and behaviours it has, as the perf stage prices them. Scenario key
    ``training.stack``. Owned by the perf stage."""

    aliases: list[str] = Field(default_factory=list, description="other names that select this stack (lower case)")
    flash_attention: bool = Field(description="fused (flash) attention kernel; False: scores materialised, Megatron's fused softmax")
    attention_efficiency: dict[str, float] = Field(
        description="achievable fraction of the 16-bit peak of the stack's attention kernel per GPU generation ('default' = fallback)")
    dropout: bool = Field(False, description="the stack's pre-training recipes train with dropout (masks stored per layer)")
    fused_glu: bool = Field(description="gated-MLP kernel keeps only the two first-GEMM outputs (recomputes the product in backward)")
    elementwise_passes: float = Field(ge=1, le=100, description="HBM traffic of norms, rotary, activations and residual adds relative to fully fused kernels")
    logit_bytes: float = Field(8.0, gt=0, le=64, description="bytes per logit held at the loss (fp32 logits and their gradient: 8; a fused in-place kernel on 16-bit logits: 4)")
    cross_entropy_bytes: float = Field(gt=0, le=1e3, description="HBM bytes per logit of the loss forward + backward")
    optimizer_bytes: float = Field(gt=0, le=1e3, description="HBM bytes per parameter of one Adam step (master weights, moments, gradient, clip)")
    kernel_gap_us: float = Field(ge=0, le=1e6, description="idle time between consecutive kernels (launch latency not hidden)")
    kernels_per_layer: float = Field(ge=0, le=1e6, description="kernels one transformer layer launches in forward (backward: twice as many)")
    fp8_gemms: list[Literal["qkv", "proj", "mlp", "experts", "router", "head"]] = Field(
        description="GEMMs the FP8 recipe runs in FP8 (others stay 16-bit)")
    fp8_cast_bytes: float = Field(ge=0, le=100, description="extra HBM bytes per operand element of an FP8 GEMM: amax, scale and cast of activations and weights")
    ep_overlap: float | None = Field(None, ge=0, le=1, description="share of MoE all-to-all hidden behind compute; None = the GPU generation's")
    tp_overlap: float | None = Field(None, ge=0, le=1, description="share of tensor-parallel communication hidden behind GEMMs; None = the GPU generation's")
    param_gather_overlap: float = Field(0.0, ge=0, le=1, description="share of the next step's first forward that the ZeRO-1 weight all-gather can hide behind (Megatron overlap_param_gather)")
    pp_overlap: float = Field(0.0, ge=0, le=1, description="share of pipeline sends hidden behind compute under the interleaved schedule (Megatron overlap_p2p_comm)")
    zero3_prefetch: int = Field(1, ge=0, le=1024, description="FSDP/ZeRO-3 layers whose all-gather is issued ahead of compute (0: none)")
    zero3_overlap: float = Field(1.0, ge=0, le=1, description="share of a prefetched FSDP/ZeRO-3 collective that can hide behind compute")
    gemm_efficiency_scale: float = Field(1.0, gt=0, le=1.5, description="the stack's GEMM efficiency relative to the GPU generation's (older cuBLAS, fp16 loss scaling, framework overheads between GEMMs)")
    grouped_gemm_efficiency: float = Field(1.0, gt=0, le=1, description="MoE grouped-GEMM efficiency relative to a dense GEMM of the same dimensions")
    moe_dispatch_efficiency: float = Field(1.0, gt=0, le=1, description="achieved share of the fabric's all-to-all efficiency by the stack's token dispatcher")
    pipeline_schedules: list[Literal["1f1b", "interleaved"]] = Field(description="pipeline schedules the stack runs")
    selective_activation_factor: float = Field(1.0, gt=0, le=1, description="share of a layer's no-recompute activations that selective checkpointing keeps (Megatron: 1, only the attention core is recomputed)")
    fp8_activation_factor: float = Field(0.6, gt=0, le=1, description="stored activations under FP8 relative to 16-bit (Transformer Engine keeps FP8 copies of GEMM inputs: 0.6; recipes that keep the 16-bit inputs: 1)")
    selective_gemm_recompute: float = Field(0.0, ge=0, le=1, description="share of the forward GEMMs (and all element-wise work when > 0) that selective checkpointing recomputes")
    score_passes: list[ScorePass] = Field(
        default_factory=lambda: ["scale-mask-softmax"],
        description="passes over a materialised score matrix before dropout (flash_attention false): "
                    "scale, mask, softmax, or Megatron's fused scale-mask-softmax")
    days_band_low: float = Field(0.0, ge=-1, le=0, description="low end of the training-days band, as a fraction of the predicted days (leave-one-source-out residuals of the stack's calibration rows; clustertwin calibration --cv)")
    days_band_high: float = Field(0.0, ge=0, le=10, description="high end of the training-days band, as a fraction of the predicted days")
    expert_tp_folding: bool = Field(False, description="MoE parallel folding: experts run without tensor parallelism (expert TP 1) and the expert-parallel group is laid over the tensor x context x data-parallel ranks, so ep need only divide tp*cp*dp")


class Kernels(Entry):
    """A kernel generation (materialised attention, FlashAttention-1/2/3, eager or compiled
    element-wise work): the per-operator half of a software stack. ``training.stack:
    FRAMEWORK+KERNELS`` (``fsdp+fa1``) prices the framework's parallelism and overlap with these
    kernels. Owned by the perf stage."""

    aliases: list[str] = Field(default_factory=list, description="other names that select these kernels (lower case)")
    flash_attention: bool = Field(description="fused (flash) attention; False: scores materialised in HBM")
    attention_efficiency: dict[str, float] = Field(
        description="achievable fraction of the 16-bit peak of the attention kernel per GPU generation ('default' = fallback)")
    fused_glu: bool = Field(description="gated-MLP kernel keeps only the two first-GEMM outputs")
    elementwise_passes: float = Field(ge=1, le=100, description="HBM traffic of norms, rotary, activations and residual adds relative to fully fused kernels")
    kernel_gap_us: float = Field(ge=0, le=1e6, description="idle time between consecutive kernels")
    kernels_per_layer: float = Field(ge=0, le=1e6, description="kernels one transformer layer launches in forward")
    dropout: bool | None = Field(None, description="recipes of this era train with dropout (None: the framework's)")
    gemm_efficiency_scale: float | None = Field(None, gt=0, le=1.5, description="GEMM library efficiency against the generation's (None: the framework's)")
    score_passes: list[ScorePass] | None = Field(
        None, description="passes over a materialised score matrix before dropout (None: the framework's)")
    elementwise_ops: list[ElementwiseOp] | None = Field(
        None, max_length=200,
        description="one layer's element-wise kernels op by op (eager code; each priced by its bytes and one "
                    "launch per kernel; replaces elementwise_passes for norms, residual adds and activations)")
    host_launch_us: float | None = Field(
        None, ge=0, le=1e4,
        description="host time to issue one kernel from eager Python (a layer takes the longer of its GPU "
                    "time and its kernels x this); None: launches never bound")


class GoodputProfile(Entry):
    """Sourced defaults of the whole-run goodput parts the perf stage charges besides the
    reliability stage's ETTR (failures, restarts, checkpoint stalls): evaluation passes,
    data-loader stalls and the batch-size ramp-up. Scenario ``training.goodput`` overrides
    each. Owned by the perf stage (perf.goodput)."""

    eval_interval_steps: int = Field(gt=0, le=10**12, description="optimizer steps between evaluation passes")
    eval_steps: int = Field(ge=0, le=10**9, description="forward-only batches per evaluation pass (0 = no evaluation)")
    data_stall_fraction: float = Field(ge=0, lt=1, description="share of wall-clock time the GPUs wait on the data loader")
    rampup_start_fraction: float = Field(gt=0, le=1, description="first global batch as a share of the full batch")
    rampup_tokens: float = Field(ge=0, le=1e18, description="tokens over which the batch grows linearly to full (0 = no ramp-up)")


class Equipment(Entry, Priced):
    """A unit of facility plant the design sizes (transformer, switchgear, UPS module, battery,
    generator, RPP, CRAH, in-row cooler, CDU, chiller) or a facility line priced by a design
    quantity (shell per MW, fire protection per m2). ``price_usd`` is per ``price_per`` (kW of
    rating, kVA, kWh, m2, MW of critical IT load, or each); ``rating`` is one unit's size in that
    measure (0 for a line priced by quantity alone)."""

    _price_kind: ClassVar[str] = "equipment"
    category: Literal["power", "cooling", "facility"]
    vendor: str = Field("", description="a maker whose product this unit price describes")
    price_per: Literal["each", "kW", "kVA", "kWh", "m", "m2", "MW"] = Field(
        description="what price_usd buys: one unit, or one kW / kVA / kWh / m / m2 / MW of it")
    rating: float = Field(0.0, ge=0, le=1e6,
                          description="one unit's size in price_per units (0: none)")
    width_m: float = Field(0.0, ge=0, le=100,
                           description="footprint along a wall or row, m (0: off the floor)")
    depth_m: float = Field(0.0, ge=0, le=100, description="footprint depth, m")


class PriceCurve(Entry):
    """New-part price of a GPU generation by product age: (years since launch, fraction of the
    launch-era list price) points, linear between them and flat past the last
    (:mod:`clustertwin.catalog.pricing`)."""

    generation: str = Field(description="GPU generation (gpus.yaml ``generation``) it prices")
    launch: AsOf = Field(description="volume-shipment date the ages count from")
    points: list[tuple[float, float]] = Field(min_length=1, description="(age in years >= 0, "
                                              "price as a fraction of the launch-era list, > 0)")

    @field_validator("points", mode="after")
    @classmethod
    def _points_ordered(cls, v: list[tuple[float, float]]) -> list[tuple[float, float]]:
        ages = [a for a, _ in v]
        if any(a < 0 for a in ages) or ages != sorted(set(ages)):
            raise ValueError("ages must be >= 0 and strictly increasing")
        if any(f <= 0 for _, f in v):
            raise ValueError("price fractions must be > 0")
        return v


#: days a region's utility or colocation market may take (20 years: past any published queue,
#: the longest 12 years, DA 1.4) and MW a load or block may have (100 GW)
_RegionDays = Annotated[float, Field(ge=0, le=7305)]
_RegionMw = Annotated[float, Field(gt=0, le=1e5)]


class GridPoint(_Frozen):
    """The utility's time from request to energisation of a facility load of ``mw`` (P50, P90)."""

    mw: _RegionMw = Field(description="facility load (IT x PUE), MW")
    p50_days: _RegionDays = Field(description="median days from request to energisation")
    p90_days: _RegionDays = Field(description="90th-percentile days (at least the P50)")
    source: str
    as_of: AsOf
    notes: str = ""

    @model_validator(mode="after")
    def _p90_not_before_p50(self) -> GridPoint:
        if self.p90_days < self.p50_days:
            raise ValueError(f"p90_days ({self.p90_days:g}) is below p50_days ({self.p50_days:g})")
        return self


class ColoMarket(_Frozen):
    """A region's colocation availability: a block up to ``small_block_mw`` of IT load is found
    in existing powered space within weeks; the chance falls linearly to 0 at
    ``largest_block_mw`` (one site's largest hand-over); the rest is preleased, delivering in
    ``prelease_days``. A lease provider installing GPUs needs the same powered space."""

    small_block_mw: _RegionMw
    largest_block_mw: _RegionMw
    prelease_days_p50: _RegionDays
    prelease_days_p90: _RegionDays
    source: str
    as_of: AsOf
    notes: str = ""

    @model_validator(mode="after")
    def _ordered(self) -> ColoMarket:
        if self.largest_block_mw <= self.small_block_mw:
            raise ValueError("largest_block_mw must exceed small_block_mw")
        if self.prelease_days_p90 < self.prelease_days_p50:
            raise ValueError("prelease_days_p90 is below prelease_days_p50")
        return self


class Region(Entry):
    """A siting region for the decision's build and colocation routes (``decision.region``):
    the utility's interconnection time as a distribution rising with the facility's MW
    (P50/P90 points, linear between them, flat past the last, prorated below the first) and
    its colocation market's availability."""

    grid: list[GridPoint] = Field(min_length=1, max_length=64)
    colo: ColoMarket

    @field_validator("grid", mode="after")
    @classmethod
    def _rising(cls, v: list[GridPoint]) -> list[GridPoint]:
        mws = [p.mw for p in v]
        if mws != sorted(set(mws)):
            raise ValueError("grid points must be in strictly increasing mw")
        for a, b in zip(v, v[1:], strict=False):
            if b.p50_days < a.p50_days or b.p90_days < a.p90_days:
                raise ValueError(f"the wait must not fall as the load rises ({a.mw:g} -> {b.mw:g} MW)")
        return v


KINDS: dict[str, type[Entry]] = {
    "gpu": GPU,
    "node": Node,
    "switch": Switch,
    "nic": NIC,
    "transceiver": Transceiver,
    "cable": Cable,
    "fabric": Fabric,
    "storage": StorageSystem,
    "model": ModelPreset,
    "failure_profile": FailureProfile,
    "costs": CostBook,
    "perf_calibration": PerfCalibration,
    "stack": Stack,
    "kernels": Kernels,
    "route": Route,
    "goodput": GoodputProfile,
    "equipment": Equipment,
    "price_curve": PriceCurve,
    "region": Region,
}


def register_kind(name: str, model: type[Entry]) -> None:
    """Add a catalog kind (used by stages that own data of their own). Duplicates raise."""
    if name in KINDS:
        raise ValueError(f"catalog kind {name!r} is already registered")
    KINDS[name] = model
