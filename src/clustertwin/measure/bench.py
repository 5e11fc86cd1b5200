"""The standard training benchmark ``clustertwin measure`` runs: a decoder-only transformer of a
given shape trained for a few steps with PyTorch on one device, timed after warm-up.

What it runs is what the ``pytorch`` / ``pytorch-compile`` stacks describe: eager modules,
``scaled_dot_product_attention`` (causal), bf16 autocast over fp32 weights on CUDA (fp32 on
CPU), AdamW (fused on CUDA), optional activation checkpointing per layer and ``torch.compile``.
Tokens are random (throughput does not depend on them). PyTorch is the optional extra ``[gpu]``
and is imported only inside :func:`run_benchmark`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class BenchShape:
    layers: int
    hidden: int
    ffn_hidden: int
    heads: int
    kv_heads: int
    vocab: int
    mlp: str  #: gelu | swiglu
    seq: int
    micro_batch: int
    recompute: bool = False
    compile: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _model(torch: Any, s: BenchShape) -> Any:
    nn, F = torch.nn, torch.nn.functional
    hd = s.hidden // s.heads

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.n1, self.n2 = nn.LayerNorm(s.hidden), nn.LayerNorm(s.hidden)
            self.qkv = nn.Linear(s.hidden, (s.heads + 2 * s.kv_heads) * hd, bias=False)
            self.proj = nn.Linear(s.heads * hd, s.hidden, bias=False)
            width = 2 * s.ffn_hidden if s.mlp == "swiglu" else s.ffn_hidden
            self.up = nn.Linear(s.hidden, width, bias=False)
            self.down = nn.Linear(s.ffn_hidden, s.hidden, bias=False)

        def attn(self, x: Any) -> Any:
            b, t, _ = x.shape
            q, k, v = self.qkv(x).split([s.heads * hd, s.kv_heads * hd, s.kv_heads * hd], dim=-1)
            q = q.view(b, t, s.heads, hd).transpose(1, 2)
            k = k.view(b, t, s.kv_heads, hd).transpose(1, 2)
            v = v.view(b, t, s.kv_heads, hd).transpose(1, 2)
            if s.kv_heads != s.heads:
                rep = s.heads // s.kv_heads
                k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).reshape(b, t, s.heads * hd))

        def mlp(self, x: Any) -> Any:
            u = self.up(x)
            if s.mlp == "swiglu":
                g, u = u.chunk(2, dim=-1)
                return self.down(F.silu(g) * u)
            return self.down(F.gelu(u))

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.n1(x))
            return x + self.mlp(self.n2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(s.vocab, s.hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(s.layers))
            self.norm = nn.LayerNorm(s.hidden)
            self.head = nn.Linear(s.hidden, s.vocab, bias=False)

        def forward(self, idx: Any) -> Any:
            from torch.utils.checkpoint import checkpoint

            x = self.emb(idx)
            for b in self.blocks:
                x = checkpoint(b, x, use_reentrant=False) if s.recompute else b(x)
            return self.head(self.norm(x))

    return GPT()


def run_benchmark(s: BenchShape, steps: int = 10, warmup: int = 3, device: str = "auto") -> dict[str, Any]:
    """Train ``warmup + steps`` steps; tokens/s over the timed ones, and the environment."""
    import torch

    dev = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
    model = _model(torch, s).to(dev)
    if s.compile:
        model = torch.compile(model)
    cuda = dev.startswith("cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=cuda)
    idx = torch.randint(0, s.vocab, (s.micro_batch, s.seq + 1), device=dev)
    x, y = idx[:, :-1], idx[:, 1:]

    def step() -> None:
        with torch.autocast(device_type="cuda" if cuda else "cpu", dtype=torch.bfloat16, enabled=cuda):
            loss = torch.nn.functional.cross_entropy(model(x).float().flatten(0, 1), y.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for _ in range(warmup):
        step()
    sync()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    dt = (time.perf_counter() - t0) / steps
    return {
        "tokens_per_s": s.micro_batch * s.seq / dt,
        "step_time_s": dt,
        "steps": steps,
        "device": dev,
        "device_name": torch.cuda.get_device_name(0) if cuda else "cpu",
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda if cuda else None,
        "precision": "bf16" if cuda else "fp32",
        "params": sum(p.numel() for p in model.parameters()),
        "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
    }
