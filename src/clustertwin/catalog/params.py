"""Parameter counts of a transformer from its architecture (shared by perf, reliability, design).

Counts weights only (no optimizer state). Biases and norm weights are included as 2 vectors of
``hidden`` per norm, which is below 0.1% for any model in the catalog. Multi-head latent
attention (DeepSeek-V3) is approximated by grouped-query attention with the given kv_heads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ParamCount:
    """A model's parameter counts (total, active per token, embeddings, per layer)."""

    total: float            #: every weight
    active: float           #: weights a token touches (routed top-k experts only)
    embedding: float        #: input embedding + LM head (once if tied)
    per_dense_layer: float  #: one dense transformer block
    per_moe_layer: float    #: one MoE block, all experts (0 for dense models)
    expert: float           #: one routed expert's MLP (0 for dense models)


def _mlp_weights(hidden: int, ffn: int, mlp: str) -> float:
    return (3 if mlp == "swiglu" else 2) * hidden * ffn


def param_count(m: Any) -> ParamCount:
    """``m`` has layers, hidden, ffn_hidden, heads, kv_heads, vocab, mlp, moe, tied_embeddings."""
    h = m.hidden
    head_dim = h // m.heads
    attn = 2 * h * h + 2 * h * m.kv_heads * head_dim
    norms = 4 * h
    dense_layer = attn + _mlp_weights(h, m.ffn_hidden, m.mlp) + norms
    emb = m.vocab * h * (1 if m.tied_embeddings else 2)
    moe = m.moe
    if moe is None:
        total = m.layers * dense_layer + emb
        return ParamCount(total, total, emb, dense_layer, 0.0, 0.0)
    expert = _mlp_weights(h, moe.expert_ffn_hidden, m.mlp)
    router = h * moe.experts
    moe_layer = attn + norms + router + (moe.experts + moe.shared_experts) * expert
    moe_active = attn + norms + router + (moe.active_experts + moe.shared_experts) * expert
    n_moe = m.layers - moe.dense_layers
    total = moe.dense_layers * dense_layer + n_moe * moe_layer + emb
    active = moe.dense_layers * dense_layer + n_moe * moe_active + emb
    return ParamCount(total, active, emb, dense_layer, moe_layer, expert)
