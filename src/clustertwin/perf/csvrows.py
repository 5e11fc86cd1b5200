"""Reading rows of published-run tables: the MoE layout in a row's notes, how tables spell
precisions and software stacks, and which stack the shared calibration CSV's rows ran on."""

from __future__ import annotations

import re
from typing import Any

#: MoE layout in a row's notes, e.g. "256 routed experts + 1 shared, 8 active, expert ffn 2048,
#: first 3 layers dense"; each piece found on its own (shared experts and dense layers default 0)
_MOE_PARTS = {
    "experts": r"(\d+)\s*(?:routed\s+)?experts",
    "shared_experts": r"(\d+)\s*shared",
    "active_experts": r"(\d+)\s*active",
    "expert_ffn": r"expert\s*ffn\s*(?:hidden\s*)?(\d+)",
    "dense_layers": r"first\s*(\d+)\s*(?:layers\s*)?dense",
}


def moe_layout(notes: str) -> dict[str, int] | None:
    """Experts, shared experts, active experts, expert width and leading dense layers."""
    found = {k: re.search(rx, notes, re.IGNORECASE) for k, rx in _MOE_PARTS.items()}
    if not (found["experts"] and found["active_experts"] and found["expert_ffn"]):
        return None
    return {k: int(m.group(1)) if m else 0 for k, m in found.items()}


#: software stack of the rows of the shared calibration CSV, which has no ``stack`` column, by
#: row-id prefix, as each source describes its run: Megatron-LM 2021 (arXiv 2104.04473) and
#: Korthikanti et al. 2022 ran Megatron-LM without flash attention; BLOOM-176B ran
#: Megatron-DeepSpeed (2022, no flash attention); Llama 3 and DeepSeek-V3 ran in-house stacks
#: with fused attention and FP8/BF16 kernels comparable to Megatron-core's; Llama 2 (2023) ran
#: Meta's FSDP-based stack with memory-efficient attention (closest catalog stack: fsdp).
ROW_STACKS = {
    "megatron21": "megatron-lm-2021",
    "korthikanti22": "megatron-lm-2021",
    "bloom": "megatron-lm-2021",
    "mtnlg": "megatron-lm-2021",
    "llama3": "megatron",
    "deepseek": "deepseek-hai",
    "llama2": "fsdp",
}


def precision_of(text: str) -> str:
    """bf16 / fp16 / fp8 from how tables spell it (FP8-CS, MXFP8, amp_bf16, BF16 ...)."""
    t = (text or "").strip().lower()
    for p in ("fp8", "bf16", "fp16"):
        if p in t:
            return p
    return t or "bf16"


#: substrings of stack names as tables spell them -> catalog stack ids (first match wins)
STACK_WORDS = (
    ("titan-compile", "torchtitan-compile"),
    ("titan compile", "torchtitan-compile"),
    ("titan", "torchtitan"),
    ("foundry", "llm-foundry"),
    ("mosaic", "llm-foundry"),
    ("composer", "llm-foundry"),
    ("deepspeed", "deepspeed"),
    ("nanotron", "nanotron"),
    ("fsdp", "fsdp"),
    ("nemo", "megatron"),
    ("megatron", "megatron"),
    ("compile", "pytorch-compile"),
    ("eager", "pytorch"),
    ("sdpa", "pytorch"),
    ("pytorch", "pytorch"),
)


#: how tables name an attention kernel generation -> catalog kernels ids (first match wins)
KERNEL_WORDS = (
    (r"flash[- _]?attn?(?:ention)?[- _]?(?:v|version ?)?([123])\b|\bfa([123])\b", "fa{}"),
    (r"materiali[sz]ed|no[- ]flash|without flash", "fused-materialised"),
)


def kernel_word(text: str) -> str | None:
    """The kernels id a stack name mentions (``+ FlashAttention-1`` -> fa1), else None."""
    for rx, kid in KERNEL_WORDS:
        mo = re.search(rx, text)
        if mo:
            return kid.format(next((g for g in mo.groups() if g), ""))
    return None


def stack_name(catalog: Any, text: str) -> str:
    """A catalog stack id for a table's stack name: the id or an alias (``fsdp+fa1`` too), else
    a known word in it (``NeMo 24.09`` -> megatron, ``Megatron-DeepSpeed + FlashAttention-1`` ->
    megatron-lm-2021+fa1), else :data:`DEFAULT_STACK`."""
    from clustertwin.catalog.lookup import find_kernels
    from clustertwin.perf.stacks import DEFAULT_STACK, find_stack

    t = (text or "").strip().lower()
    if not t:
        return DEFAULT_STACK
    for cand in (t, t.replace(" ", "-").replace("_", "-")):
        e = find_stack(catalog, cand)
        if e is not None:
            tail = cand.partition("+")[2]
            return e.id + (f"+{find_kernels(catalog, tail).id}" if tail else "")
    base = next((sid for word, sid in STACK_WORDS if word in t), DEFAULT_STACK)
    k = kernel_word(t)
    return f"{base}+{k}" if k and find_stack(catalog, f"{base}+{k}") is not None else base


def row_stack(r: dict[str, str]) -> str:
    """The row's ``stack`` column, else :data:`ROW_STACKS` by id prefix, else megatron."""
    given = (r.get("stack") or "").strip()
    if given:
        return given
    for prefix, stack in ROW_STACKS.items():
        if r["id"].startswith(prefix):
            return stack
    return "megatron"


#: words in how tables name a GPU -> catalog GPU ids (first match wins; checked after exact ids)
GPU_WORDS = (
    (("a100", "40"), "a100-sxm-40gb"),
    (("a100",), "a100-sxm-80gb"),
    (("h100", "pcie"), "h100-pcie-80gb"),
    (("h100", "nvl"), "h100-pcie-80gb"),
    (("h100",), "h100-sxm-80gb"),
    (("h800",), "h800"),
    (("h200",), "h200"),
    (("gb200",), "gb200"),
    (("b200",), "b200"),
    (("mi300",), "mi300x"),
)


def gpu_name(catalog: Any, text: str) -> str:
    """A catalog GPU id for a table's GPU name (``H100 80GB`` -> h100-sxm-80gb); the text
    itself when nothing matches (the catalog lookup then names the problem)."""
    t = (text or "").strip().lower()
    if catalog.has("gpu", t):
        return t
    for words, gid in GPU_WORDS:
        if all(w in t for w in words) and catalog.has("gpu", gid):
            return gid
    return t


#: multi-head latent attention as DeepSeek-V2/V3 (and Kimi K2) run it: 128 + 64 (RoPE) query/key
#: head size, 128 value head size (DeepSeek-V3 report, arXiv 2412.19437, section 4.2)
MLA_HEADS = (192, 128)


def mla_heads(notes: str) -> dict[str, int]:
    """``qk_head`` and ``v_head`` of a row whose notes say MLA ("qk head 192, v head 128" where
    given, else :data:`MLA_HEADS`); empty otherwise."""
    if not re.search(r"\bMLA\b|latent attention", notes or "", re.IGNORECASE):
        return {}
    qk = re.search(r"qk\s*head\s*(?:dim\s*)?(\d+)", notes, re.IGNORECASE)
    v = re.search(r"\bv\s*head\s*(?:dim\s*)?(\d+)", notes, re.IGNORECASE)
    return {
        "qk_head": int(qk.group(1)) if qk else MLA_HEADS[0],
        "v_head": int(v.group(1)) if v else MLA_HEADS[1],
    }
