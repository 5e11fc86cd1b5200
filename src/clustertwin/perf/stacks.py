"""Software stacks as the time/memory model sees them (scenario key ``training.stack``).

A stack (Megatron-core with Transformer Engine, torchtitan, PyTorch FSDP, DeepSpeed, ...) is
catalog data (kind ``stack``, ``catalog/data/stacks.yaml``): which attention kernel it has and
how efficient it is per GPU generation, whether its gated MLP and element-wise work are fused,
what its loss and optimizer step move through HBM, the gaps between its kernels, which GEMMs its
FP8 recipe quantizes and at what cast cost, how its FSDP/ZeRO-3 prefetches, and which pipeline
schedules it runs. :func:`profile_of` reduces an entry to the numbers
:mod:`clustertwin.perf.costmodel` reads, for one GPU generation.

:data:`NEUTRAL` is the profile used where no catalog is at hand (a ``Job`` built directly in a
test): Megatron-core's fused kernels, the same figures as the catalog's ``megatron`` entry.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from clustertwin.catalog.lookup import (
    DEFAULT_STACK,
    find_kernels,
    find_stack,
    stack_ids,
    unknown_stack,
)
from clustertwin.errors import ScenarioError

__all__ = ["DEFAULT_STACK", "NEUTRAL", "StackProfile", "find_stack", "profile_of", "stack_ids",
           "unknown_stack"]


@dataclass(frozen=True)
class StackProfile:
    """The numbers of one stack on one GPU generation (see catalog.models.Stack)."""

    id: str = DEFAULT_STACK
    flash_attention: bool = True
    attention_efficiency: float | None = None  #: None: the generation's constant
    fused_glu: bool = True
    dropout: bool = False
    elementwise_passes: float = 1.0
    cross_entropy_bytes: float = 24.0
    logit_bytes: float = 8.0  #: fp32 logits and their gradient
    optimizer_bytes: float = 30.0
    kernel_gap_us: float = 1.0
    kernels_per_layer: float = 20.0
    fp8_gemms: frozenset[str] = frozenset({"qkv", "proj", "mlp", "experts"})
    fp8_cast_bytes: float = 3.0
    tp_overlap: float | None = None  #: None: the generation's constant
    ep_overlap: float | None = None  #: None: the generation's constant
    pp_overlap: float = 0.0
    param_gather_overlap: float = 1.0
    zero3_prefetch: int = 1
    zero3_overlap: float = 1.0
    moe_dispatch_efficiency: float = 1.0
    grouped_gemm_efficiency: float = 1.0
    gemm_efficiency_scale: float = 1.0
    interleaved: bool = True  #: runs the interleaved (virtual-stage) pipeline schedule
    selective_activation_factor: float = 1.0
    selective_gemm_recompute: float = 0.0
    #: stored activations under fp8 training relative to 16-bit: GEMM inputs are cached in fp8
    #: (Transformer Engine; DeepSeek-V3 section 3.3), the rest stays 16-bit
    fp8_activation_factor: float = 0.6
    #: MoE parallel folding (expert TP 1, ep over tp*cp*dp ranks; Megatron-core)
    expert_tp_folding: bool = False
    #: passes over a materialised score matrix before dropout (perf.ops.SCORE_PASSES)
    score_passes: tuple[str, ...] = ("scale-mask-softmax",)
    #: one layer's element-wise kernels op by op (perf.ops.ELEMENTWISE_OPS); empty: priced
    #: by ``elementwise_passes`` over the fused traffic
    elementwise_ops: tuple[str, ...] = ()
    #: host seconds (us) to issue one kernel from eager Python; 0: launches never bound a layer
    host_launch_us: float = 0.0
    #: training-days band as fractions of the predicted days (perf.crossval, catalog data)
    days_band_low: float = 0.0
    days_band_high: float = 0.0

    def fp8(self, gemm: str) -> bool:
        return gemm in self.fp8_gemms


NEUTRAL = StackProfile()
#: profile fields not copied as they are from the catalog entry's field of the same name
_DERIVED = ("attention_efficiency", "fp8_gemms", "interleaved", "score_passes", "elementwise_ops",
            "host_launch_us")


def profile_of(catalog: Any, stack_id: str | None, generation: str) -> StackProfile:
    """The profile of ``stack_id`` (default :data:`DEFAULT_STACK`) on a GPU generation; raises
    ScenarioError for an unknown id. Without stack entries in the catalog: :data:`NEUTRAL`."""
    sid = stack_id or DEFAULT_STACK
    e = find_stack(catalog, sid)
    if e is None:
        if "stack" not in catalog.kinds() and sid == DEFAULT_STACK:
            return NEUTRAL
        raise ScenarioError([unknown_stack(catalog, sid, "scenario", "training.stack")])
    att = e.attention_efficiency
    same = {f.name: getattr(e, f.name) for f in fields(StackProfile) if f.name not in _DERIVED}
    prof = StackProfile(
        **same,
        attention_efficiency=att.get(generation, att.get("default")),
        fp8_gemms=frozenset(e.fp8_gemms),
        interleaved="interleaved" in e.pipeline_schedules,
        score_passes=tuple(e.score_passes),
    )
    _, plus, tail = sid.partition("+")
    return with_kernels(prof, find_kernels(catalog, tail), generation) if plus else prof


#: StackProfile fields a kernel generation (catalog kind ``kernels``) sets
KERNEL_FIELDS = ("flash_attention", "fused_glu", "elementwise_passes", "kernel_gap_us",
                 "kernels_per_layer", "dropout", "gemm_efficiency_scale")


def with_kernels(prof: StackProfile, k: Any, generation: str) -> StackProfile:
    """``prof`` (a framework's profile) with kernel generation ``k``'s per-operator figures:
    the stack ``FRAMEWORK+KERNELS``."""
    from dataclasses import replace

    over = {f: getattr(k, f) for f in KERNEL_FIELDS if getattr(k, f) is not None}
    if k.score_passes is not None:
        over["score_passes"] = tuple(k.score_passes)
    if k.elementwise_ops is not None:
        over["elementwise_ops"] = tuple(k.elementwise_ops)
    if k.host_launch_us is not None:
        over["host_launch_us"] = k.host_launch_us
    att = k.attention_efficiency
    return replace(prof, **over, id=f"{prof.id}+{k.id}",
                   attention_efficiency=att.get(generation, att.get("default")))
