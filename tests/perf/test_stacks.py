"""Software stacks (catalog kind ``stack``, scenario key ``training.stack``) and the
per-operator costs they select: FP8 only on the GEMMs a recipe quantizes, GEMM efficiency by
matrix size, FSDP prefetch, pipeline schedules, MoE grouped GEMMs and dispatch."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import yaml

from clustertwin.errors import ScenarioError
from clustertwin.perf import ops
from clustertwin.perf.costmodel import PLAN_KEYS, Job, evaluate
from clustertwin.perf.flops import Shape
from clustertwin.perf.stacks import NEUTRAL, find_stack, profile_of
from clustertwin.perf.system import default_node, system_from_catalog

LLAMA8B = Shape(layers=32, hidden=4096, ffn=14336, heads=32, kv_heads=8, vocab=128256, swiglu=True)
MOE = Shape(
    layers=24, hidden=4096, ffn=14336, heads=32, kv_heads=8, vocab=128256, swiglu=True,
    experts=64, active_experts=8, shared_experts=1, expert_ffn=1536, dense_layers=1,
)


def _sys(catalog, gpu: str = "h100-sxm-80gb"):
    return system_from_catalog(catalog, gpu, default_node(catalog, gpu), "ib-ndr")


def _plan(**kw: int) -> dict[str, np.ndarray]:
    base = dict(tp=1, pp=1, cp=1, ep=1, dp=8, micro_batch=1, virtual_stages=1, recompute=0)
    base.update(sequence_parallel=0, zero=1)
    base.update(kw)
    return {k: np.array([base[k]]) for k in PLAN_KEYS}


def _step(job: Job, sys, **kw: int) -> float:
    return float(evaluate(job, sys, _plan(**kw))["step_time_s"][0])


def test_every_stack_is_sourced_and_resolves(catalog):
    stacks = catalog.all("stack")
    assert {"megatron", "megatron-lm-2021", "torchtitan", "fsdp", "deepspeed"} <= {
        s.id for s in stacks
    }
    for s in stacks:
        assert s.source and s.as_of and "default" in s.attention_efficiency, s.id
        for alias in s.aliases:
            assert find_stack(catalog, alias.upper()).id == s.id
    assert profile_of(catalog, "nemo", "hopper").id == "megatron"
    assert profile_of(catalog, "megatron-lm-2021", "ampere").flash_attention is False
    with pytest.raises(ScenarioError, match="unknown software stack"):
        profile_of(catalog, "no-such-stack", "hopper")


def test_validate_rejects_unknown_stack_in_one_line(tmp_path, default_doc):
    from typer.testing import CliRunner

    from clustertwin.cli import app

    doc = {**default_doc, "training": {**default_doc["training"], "stack": "torchtitn"}}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    r = CliRunner().invoke(app, ["validate", str(bad)])
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if "training.stack" in ln]
    assert len(lines) == 1 and "did you mean torchtitan" in lines[0]
    doc["training"]["stack"] = "torchtitan"
    bad.write_text(yaml.safe_dump(doc))
    assert CliRunner().invoke(app, ["validate", str(bad)]).exit_code == 0


def test_gemm_efficiency_falls_with_small_dimensions(catalog):
    sys = _sys(catalog)
    c = ops.Ctx(sys, NEUTRAL, LLAMA8B, "bf16", 8192.0, *(np.array([1.0]),) * 3,
                np.array([8192.0]), np.array([1.0]))

    def tflops(m: float, k: float, n: float) -> float:
        f, _ = ops.gemm(c, "mlp", (m, k, n))
        return 2 * m * k * n / float(np.asarray(f).ravel()[0]) / 1e12

    big, thin = tflops(8192, 4096, 14336), tflops(64, 4096, 14336)
    assert thin < 0.6 * big < big <= sys.peak("bf16") / 1e12


def test_fp8_speeds_up_only_the_quantized_gemms(catalog):
    """End-to-end FP8 speed-ups published for small and mid dense models are ~1.2-1.4x
    (torchtitan Llama 3.1 8B: 6,667 -> 8,532 tokens/s/GPU, 1.28x; llm-foundry MPT-3B on 8
    H100: 1.27x): GEMMs run at the FP8 peak, attention, element-wise work and the loss do not.
    A recipe that quantizes nothing gives the BF16 time."""
    sys = _sys(catalog)
    stack = profile_of(catalog, "megatron", "hopper")
    bf16 = _step(Job(LLAMA8B, 8192, 64, "bf16", stack=stack), sys, micro_batch=2)
    fp8 = _step(Job(LLAMA8B, 8192, 64, "fp8", stack=stack), sys, micro_batch=2)
    assert 1.15 <= bf16 / fp8 <= 1.5
    none = replace(stack, fp8_gemms=frozenset())
    assert _step(Job(LLAMA8B, 8192, 64, "fp8", stack=none), sys, micro_batch=2) == pytest.approx(
        bf16, rel=1e-9
    )
    dearer = replace(stack, fp8_cast_bytes=stack.fp8_cast_bytes * 4)
    assert _step(Job(LLAMA8B, 8192, 64, "fp8", stack=dearer), sys, micro_batch=2) > fp8


def test_eager_stack_slower_than_fused(catalog):
    sys = _sys(catalog)
    meg = _step(Job(LLAMA8B, 8192, 16, stack=profile_of(catalog, "megatron", "hopper")), sys)
    titan = _step(Job(LLAMA8B, 8192, 16, stack=profile_of(catalog, "torchtitan", "hopper")), sys)
    comp = profile_of(catalog, "torchtitan-compile", "hopper")
    assert meg < _step(Job(LLAMA8B, 8192, 16, stack=comp), sys) < titan


def test_fsdp_prefetch_hides_layer_gathers(catalog):
    sys = _sys(catalog)
    st = profile_of(catalog, "fsdp", "hopper")
    kw = dict(dp=64, zero=3)
    with_pf = evaluate(Job(LLAMA8B, 4096, 64, stack=st), sys, _plan(**kw))
    no_pf = evaluate(Job(LLAMA8B, 4096, 64, stack=replace(st, zero3_prefetch=0)), sys, _plan(**kw))
    assert no_pf["zero3_exposed_s"][0] > 2 * with_pf["zero3_exposed_s"][0] > 0
    # the prefetched layer is held in memory
    assert with_pf["memory_bytes"][0] > no_pf["memory_bytes"][0]


def test_stack_without_interleaving_rejects_virtual_stages(catalog):
    sys = _sys(catalog)
    kw = dict(tp=8, pp=4, dp=2, virtual_stages=2, zero=1)
    ds = Job(LLAMA8B, 4096, 64, stack=profile_of(catalog, "deepspeed", "hopper"))
    meg = Job(LLAMA8B, 4096, 64, stack=profile_of(catalog, "megatron", "hopper"))
    assert not evaluate(ds, sys, _plan(**kw))["fits"][0]
    assert evaluate(meg, sys, _plan(**kw))["fits"][0]


def test_moe_grouped_gemms_and_dispatch_are_priced(catalog):
    sys = _sys(catalog)
    st = profile_of(catalog, "megatron", "hopper")
    kw = dict(ep=8, dp=8)
    base = _step(Job(MOE, 4096, 64, stack=st), sys, **kw)
    slow_gemm = _step(Job(MOE, 4096, 64, stack=replace(st, grouped_gemm_efficiency=0.3)), sys, **kw)
    slow_a2a = _step(Job(MOE, 4096, 64, stack=replace(st, moe_dispatch_efficiency=0.3)), sys, **kw)
    assert slow_gemm > 1.05 * base
    assert slow_a2a > base


def test_scenario_stack_reaches_the_estimate(catalog, default_doc):
    from clustertwin.perf.stage import estimate
    from clustertwin.scenario import scenario_from_dict

    doc = {**default_doc, "cluster": {**default_doc["cluster"], "gpus": 1024}}
    meg = estimate(scenario_from_dict(doc, "meg", catalog), catalog)
    doc["training"] = {**default_doc["training"], "stack": "fsdp"}
    fsdp = estimate(scenario_from_dict(doc, "fsdp", catalog), catalog)
    assert fsdp.step_time_s > meg.step_time_s
    assert (meg.stack, fsdp.stack) == ("megatron", "fsdp")  # echoed in the plan's training block
    # FSDP's stack runs no interleaved pipeline
    assert fsdp.parallelism["virtual_stages"] == 1


def test_table_spellings_of_stacks_and_precisions(catalog):
    from clustertwin.perf.calibration import precision_of, stack_name

    assert [precision_of(p) for p in ("FP8-CS", "MXFP8", "amp_bf16", "", "fp16")] == [
        "fp8", "fp8", "bf16", "bf16", "fp16"
    ]
    assert stack_name(catalog, "NeMo 24.09") == "megatron"
    assert stack_name(catalog, "MosaicML llm-foundry") == "llm-foundry"
    assert stack_name(catalog, "TorchTitan") == "torchtitan"
    assert stack_name(catalog, "PyTorch FSDP") == "fsdp"


def test_calibration_csv_search_and_classes(catalog, tmp_path):
    """``calibration --csv --search`` on two published rows: each gets its class, and the plan
    the search picks is compared with the published one (never slower under the model)."""
    import json

    import typer
    from typer.testing import CliRunner

    from clustertwin.cli.perf import register
    from tests.validation.test_perf_published import DATA

    lines = DATA.read_text().splitlines()
    keep = [ln for ln in lines[1:] if ln.startswith(("torchtitan-8b-fsdp-8,", "nemotron4-340b-1536"))]
    csv_path = tmp_path / "rows.csv"
    csv_path.write_text("\n".join([lines[0], *keep]) + "\n")
    app = typer.Typer()
    register(app)
    r = CliRunner().invoke(app, ["calibration", "--csv", str(csv_path), "--search", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    by_id = {row["id"]: row for row in out["rows"]}
    assert by_id["torchtitan-8b-fsdp-8"]["class"] == "FSDP"
    assert by_id["nemotron4-340b-1536"]["class"] == "large dense"
    for row in out["rows"]:
        assert row["search"]["speedup"] >= 1 - 1e-9
    assert out["classes"]["all"]["rows"] == 2
    missing = CliRunner().invoke(app, ["calibration", "--csv", str(tmp_path / "nope.csv")])
    assert missing.exit_code == 2 and "file not found" in missing.output


def test_head_size_wider_than_hidden_over_heads():
    """Qwen3-style attention: 32 heads of 128 on a 2,048 hidden size have a 4,096-wide query,
    so projections, scores and stored queries follow heads x head size, not the hidden size."""
    from clustertwin.perf.flops import attn_core_flops, attn_proj_flops

    plain = Shape(layers=48, hidden=2048, ffn=6144, heads=32, kv_heads=4, vocab=151936, swiglu=True)
    qwen = replace(plain, head_size=128)
    assert (plain.q_dim, qwen.q_dim, qwen.kv_dim) == (2048, 4096, 512)
    assert attn_core_flops(qwen, 4096) == 2 * attn_core_flops(plain, 4096)
    assert attn_proj_flops(qwen) == 2 * 2048 * (2 * 4096 + 2 * 512)


def test_published_plan_within_memory_tolerance_is_not_refused(catalog):
    """A published run whose predicted peak is a few percent above the GPU's memory ran in
    reality: calibration counts it as fitting within the memory model's 5% and flags it."""
    from clustertwin.perf import calibration as cal
    from tests.validation.test_perf_published import ROWS

    row = next(r for r in ROWS if r.id == "llmfoundry-mpt7b-h100-2k-8")
    base, _ = cal.run_row(catalog, row)
    assert base.fits and not base.tight
    need = base.memory_gib * 2**30
    sys = cal.row_system(catalog, row)
    tight, _ = cal.run_row(catalog, row, system=replace(sys, hbm_bytes=need / 1.03))
    assert tight.fits and tight.tight
    over, _ = cal.run_row(catalog, row, system=replace(sys, hbm_bytes=need / 1.2))
    assert not over.fits


def test_estimate_reports_the_published_plan_for_the_same_job(catalog):
    """The default scenario is Llama 3 405B on 16,384 H100 (Table 4 row 2): `estimate` prices
    Meta's published plan with the same model and says how far the search's plan is from it."""
    from clustertwin.cli.perf import top_plans
    from clustertwin.scenario import load_scenario

    out = top_plans(load_scenario(None, catalog), catalog, 3)
    pub = [p for p in out["published"] if p["id"] == "llama3-405b-8k-16384"]
    assert len(pub) == 1 and pub[0]["fits"]
    assert (pub[0]["plan"]["tp"], pub[0]["plan"]["pp"], pub[0]["plan"]["dp"]) == (8, 16, 128)
    assert 1.0 <= pub[0]["search_speedup"] <= 1.25
    assert pub[0]["plans_ahead"] >= 0


def test_table_gpu_names_and_unreadable_rows(catalog, tmp_path):
    from clustertwin.perf import calibration as cal
    from tests.validation.test_perf_published import DATA

    assert cal.gpu_name(catalog, "H100 SXM 80GB") == "h100-sxm-80gb"
    assert cal.gpu_name(catalog, "A100 40GB") == "a100-sxm-40gb"
    assert cal.gpu_name(catalog, "DGX-GB200") == "gb200"
    lines = DATA.read_text().splitlines()
    good = next(ln for ln in lines if ln.startswith("torchtitan-8b-fsdp-8,"))
    bad = next(ln for ln in lines if ln.startswith("nemotron4-340b-1536,"))
    bad = bad.replace("seconds per iteration", "furlongs").replace(",10.3,,", ",,,")
    path = tmp_path / "t.csv"
    path.write_text("\n".join([lines[0], good.replace("h100-sxm-80gb", "H100 80GB"), bad]) + "\n")
    results, skipped = cal.run_table(catalog, path)
    assert [r.row.id for r in results] == ["torchtitan-8b-fsdp-8"]
    assert len(skipped) == 1 and "nemotron4-340b-1536" in skipped[0] and "furlongs" in skipped[0]


def test_unbuildable_published_details_are_left_to_the_search(catalog):
    """A published detail the search cannot build (a micro-batch of 5 does not divide the 32
    sequences per replica) is left to the search; tp, pp and dp stay as published."""
    from clustertwin.perf import calibration as cal
    from tests.validation.test_perf_published import ROWS

    row = next(r for r in ROWS if r.id == "torchtitan-405b-3d-512-interleaved")
    odd = replace(row, pinned={**row.pinned, "micro_batch": 5})
    res, _ = cal.run_row(catalog, odd)
    assert (res.plan["tp"], res.plan["pp"], res.plan["dp"]) == (8, 8, 8)
    assert 32 % res.plan["micro_batch"] == 0


def test_fit_sets_stack_and_generation_constants_jointly(catalog):
    """perf.fitting: a stack key changes only that stack's rows; a fit never ends worse than
    where it started."""
    from clustertwin.perf import fitting
    from tests.validation.test_perf_published import ROWS

    titan = [r for r in ROWS if r.id in ("torchtitan-8b-fsdp-8", "torchtitan-8b-fsdp-128")]
    meg = [r for r in ROWS if r.id == "nemo2511-llama3-8b-h100-8"]
    key = "stack:torchtitan:elementwise_passes"
    assert fitting.objective(catalog, titan, {key: 1.0}) != fitting.objective(
        catalog, titan, {key: 6.0}
    )
    assert fitting.objective(catalog, meg, {key: 1.0}) == fitting.objective(catalog, meg, {key: 6.0})
    start = {key: (1.0, 8.0, 1.0)}
    best, obj = fitting.fit(catalog, titan, start, sweeps=1, steps=3)
    assert obj <= fitting.objective(catalog, titan, {key: 1.0})
    assert 1.0 <= best[key] <= 8.0


def test_mla_attention_core_uses_its_head_sizes():
    """DeepSeek-V3's MLA runs the attention core on 128 heads of 192 (query/key) and 128
    (value), 2.9x the core FLOPs of 128 heads of 56 that the hidden size alone suggests."""
    from clustertwin.perf.calibration import mla_heads
    from clustertwin.perf.flops import attn_core_flops

    ds = Shape(layers=61, hidden=7168, ffn=18432, heads=128, kv_heads=128, vocab=129280, swiglu=True)
    mla = replace(ds, **mla_heads("MoE ...; MLA attention"))
    assert (mla.qk_head, mla.v_head) == (192, 128)
    assert attn_core_flops(mla, 4096) == pytest.approx(attn_core_flops(ds, 4096) * 160 / 56)
    assert mla_heads("MLA, qk head 96, v head 64") == {"qk_head": 96, "v_head": 64}
    assert mla_heads("grouped-query attention") == {}


def test_fsdp_with_pipeline_parallelism_is_expressible(catalog):
    """ZeRO-3/FSDP with pipeline stages (torchtitan's FSDP + PP) is built when the scenario
    pins zero 3; the layer gathers are priced per stage and micro-batch."""
    from clustertwin.perf.search import search

    sys = _sys(catalog)
    job = Job(LLAMA8B, 4096, 256, stack=profile_of(catalog, "torchtitan", "hopper"))
    res = search(job, sys, 64, {"pp": 4, "zero": 3})
    best = res.plan(int(res.ranked()[0]))
    assert (best["pp"], best["zero"]) == (4, 3)
    assert res.row(int(res.ranked()[0]))["zero3_exposed_s"] > 0
    free = search(job, sys, 64, {"pp": 4})
    assert not np.any(free.plans["zero"] == 3)
