"""A stack is a framework x a kernel generation (issue 20): training.stack FRAMEWORK+KERNELS,
attention priced by kernel generation (materialised, FA1, FA2, FA3), table names mapped."""

from __future__ import annotations

import pytest

from clustertwin.errors import ScenarioError
from clustertwin.perf import estimate
from clustertwin.perf.csvrows import stack_name
from clustertwin.perf.stacks import profile_of
from clustertwin.scenario import scenario_from_dict


def scen(stack, seq=8192, catalog=None):
    d = {"name": "k", "model": {"layers": 24, "hidden": 2048, "ffn_hidden": 8192, "heads": 16,
                                "kv_heads": 16, "vocab": 50304, "mlp": "gelu"},
         "training": {"tokens": 1e10, "seq_len": seq, "global_batch_tokens": 2**20, "stack": stack},
         "cluster": {"gpu": "a100-sxm-80gb", "node": "dgx-a100", "gpus": 8}}
    return scenario_from_dict(d, catalog=catalog)


def test_composed_stack_keeps_the_framework_and_takes_the_kernels(catalog):
    fw, k = profile_of(catalog, "fsdp", "ampere"), profile_of(catalog, "fsdp+fa1", "ampere")
    assert k.id == "fsdp+fa1" and k.zero3_overlap == fw.zero3_overlap
    assert k.optimizer_bytes == fw.optimizer_bytes
    assert k.attention_efficiency == catalog.get("kernels", "fa1").attention_efficiency["ampere"]


def test_attention_by_kernel_generation_at_8k(catalog):
    """Older kernels are slower at long sequence: materialised < FA1 < FA2 < FA3 throughput."""
    tps = [estimate(scen(f"fsdp+{k}", catalog=catalog), catalog).tokens_per_s
           for k in ("eager-materialised", "fa1", "fa2", "fa3")]
    assert tps == sorted(tps) and tps[2] / tps[1] > 1.1


def test_plan_reports_the_composed_stack(catalog):
    est = estimate(scen("megatron-lm-2021+fa2", catalog=catalog), catalog)
    assert est.stack == "megatron-lm-2021+fa2"


def test_unknown_kernels_are_one_line(catalog):
    with pytest.raises(ScenarioError) as ei:
        scen("fsdp+fa9", catalog=catalog)
    (line,) = ei.value.lines()
    assert "training.stack" in line and "fsdp+fa9" in line


@pytest.mark.parametrize("text, want", [
    ("Megatron-DeepSpeed + FlashAttention-1", "megatron-lm-2021+fa1"),
    ("PyTorch FSDP with flash-attn 2", "fsdp+fa2"),
    ("fsdp + fa3", "fsdp+fa3"),
    ("llm-foundry", "llm-foundry"),
])
def test_table_names_with_kernels(text, want, catalog):
    assert stack_name(catalog, text) == want
