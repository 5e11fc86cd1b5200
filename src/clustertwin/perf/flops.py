"""FLOP counts of a decoder-only transformer, per token, forward pass (x2 for backward).

One multiply-add is 2 FLOPs. Per layer, for hidden h, query heads a, key/value heads g with
head size d = h/a, MLP width f, sequence s:

* attention projections: Q and output 2*h*h each, K and V 2*h*g*d each (grouped-query
  attention shrinks K and V, not Q or the output);
* attention scores Q.K^T and the weighted sum over V: 2*s*h each per token without a mask;
  a causal mask halves the useful work (each token sees on average s/2 keys). Model FLOPs
  (MFU) count the causal half; an unfused kernel executes the full square;
* MLP: gelu 2 matrices (4*h*f), swiglu 3 matrices (6*h*f);
* MoE layer: router 2*h*E, then every token runs top-k routed experts plus the shared experts,
  each an MLP of width f_e; the leading ``dense_layers`` stay dense;
* LM head 2*h*V per token; the embedding is a lookup (no FLOPs).

Backward is twice the forward (gradients for inputs and weights). Full recompute adds one more
forward of every transformer layer; selective recompute adds the attention scores/softmax/V
part only. Formulas follow Narayanan et al. 2021 (arXiv 2104.04473, eq. 3) and Korthikanti et
al. 2022 (arXiv 2205.05198), generalised to GQA, swiglu and MoE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Shape:
    """Architecture numbers the perf model uses (dense when ``experts == 0``)."""

    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    swiglu: bool
    experts: int = 0
    active_experts: int = 0
    shared_experts: int = 0
    expert_ffn: int = 0
    dense_layers: int = 0
    tied: bool = False
    #: size of one attention head where it is not hidden / heads (Qwen3, GPT-OSS, Gemma: the
    #: query width heads x head_size differs from the hidden size); 0: hidden // heads
    head_size: int = 0
    #: multi-head latent attention (DeepSeek-V2/V3, Kimi K2): the attention core runs on
    #: query/key heads of ``qk_head`` and value heads of ``v_head`` (0: head_dim); projections
    #: are priced as multi-head attention of the hidden size
    qk_head: int = 0
    v_head: int = 0

    @property
    def head_dim(self) -> int:
        return self.head_size or self.hidden // self.heads

    @property
    def core_head(self) -> float:
        """Mean of the query/key and value head sizes the attention core multiplies with."""
        return ((self.qk_head or self.head_dim) + (self.v_head or self.head_dim)) / 2

    @property
    def q_dim(self) -> int:
        """Width of the queries (and of the attention output): heads x head size."""
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.moe else 0

    @property
    def mlp_mats(self) -> int:
        return 3 if self.swiglu else 2


def shape_of(m: Any) -> Shape:
    """A :class:`Shape` from a ResolvedModel / ModelPreset-like object."""
    moe = m.moe
    kw: dict[str, Any] = {}
    if moe is not None:
        kw = dict(
            experts=moe.experts,
            active_experts=moe.active_experts,
            shared_experts=moe.shared_experts,
            expert_ffn=moe.expert_ffn_hidden,
            dense_layers=moe.dense_layers,
        )
    return Shape(
        layers=m.layers,
        hidden=m.hidden,
        ffn=m.ffn_hidden,
        heads=m.heads,
        kv_heads=m.kv_heads,
        vocab=m.vocab,
        swiglu=m.mlp == "swiglu",
        tied=bool(m.tied_embeddings),
        **kw,
    )


def attn_proj_flops(m: Shape) -> float:
    """Q, K, V and output projections, forward FLOPs per token per layer."""
    h = m.hidden
    return 2 * h * (2 * m.q_dim + 2 * m.kv_dim)


def attn_core_flops(m: Shape, seq: float, causal: bool = True) -> float:
    """Scores and weighted sum, forward FLOPs per token per layer (``causal`` halves)."""
    return 4 * seq * m.heads * m.core_head * (0.5 if causal else 1.0)


def mlp_flops(m: Shape, ffn: int) -> float:
    """One MLP of width ``ffn``, forward FLOPs per token."""
    return 2 * m.mlp_mats * m.hidden * ffn


def moe_mlp_flops(m: Shape) -> float:
    """Router plus routed top-k and shared experts, forward FLOPs per token per MoE layer."""
    return 2 * m.hidden * m.experts + (m.active_experts + m.shared_experts) * mlp_flops(
        m, m.expert_ffn
    )


def head_flops(m: Shape) -> float:
    return 2 * m.hidden * m.vocab


def forward_flops_per_token(m: Shape, seq: float, causal: bool = True) -> float:
    """Model forward FLOPs per token: every layer plus the LM head."""
    per_layer = attn_proj_flops(m) + attn_core_flops(m, seq, causal)
    dense = m.layers - m.moe_layers
    total = m.layers * per_layer + dense * mlp_flops(m, m.ffn) + m.moe_layers * moe_mlp_flops(m)
    return total + head_flops(m)


def model_flops_per_token(m: Shape, seq: float) -> float:
    """Training model FLOPs per token (forward + backward, no recompute, causal attention):
    the MFU basis."""
    return 3 * forward_flops_per_token(m, seq, causal=True)


def recompute_flops_per_token(m: Shape, seq: float, recompute: str) -> float:
    """Extra forward FLOPs per token that recomputation re-executes (for HFU)."""
    if recompute == "full":
        return forward_flops_per_token(m, seq) - head_flops(m)
    if recompute == "selective":
        return m.layers * attn_core_flops(m, seq)
    return 0.0


def megatron_eq3_flops(m: Shape, batch_seqs: int, seq: int) -> float:
    """Narayanan et al. 2021 eq. 3: FLOPs per iteration counted with full recompute, no causal
    discount, dense MHA/gelu: 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)). Used only to compare
    with papers that report on this basis."""
    h, L = m.hidden, m.layers
    return 96 * batch_seqs * seq * L * h * h * (1 + seq / (6 * h) + m.vocab / (16 * L * h))
