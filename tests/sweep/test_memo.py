"""The sweep's stage cache (clustertwin.sweep.memo) gives the same plans, byte for byte.

Three checks: (1) every stage, traced while it runs, reads no scenario key outside the keys
its cache entry is keyed on (``memo.reads``), over cases that change keys of every section;
(2) those cases (and random small grids) plan the same with the cache as without, whole plan
JSON, result reprs (timelines and curves included) and sweep tables; (3) the cache does hit
where a stage's keys did not change, and stays within its size.
"""

from __future__ import annotations

import contextlib
import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustertwin import scenario as S
from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict
from clustertwin.sweep.api import run_sweep_table
from clustertwin.sweep.grid import apply, make_points
from clustertwin.sweep.memo import READS, StageMemo, reads
from clustertwin.sweep.run import Runner, cached_catalog
from clustertwin.sweep.study import build
from tests.sweep.conftest import SMALL

#: one case per key, keys of every section (cluster incl. GPUs, fabric and deadline mode;
#: reliability incl. seed, trials, restart, failure profile, two-tier checkpoints)
CASES: list[tuple[str, dict]] = [
    ("base", {}),
    ("model.layers", {"model.layers": 24}),
    ("model.preset", {"model.preset": "llama2-7b"}),
    ("model.preset MoE", {"model.preset": "mixtral-8x7b", "cluster.gpus": 128}),
    ("training.tokens", {"training.tokens": 2e11}),
    ("training.precision", {"training.precision": "fp8"}),
    ("training.parallelism.tp", {"training.parallelism.tp": 2}),
    ("training.stack", {"training.stack": "torchtitan"}),
    ("training.gpus", {"training.gpus": 32}),
    ("training.batch_rounding", {"training.batch_rounding": "exact", "training.parallelism.pp": 2}),
    ("training.global_batch_seqs", {"training.global_batch_seqs": 256}),
    ("cluster.gpus", {"cluster.gpus": 128}),
    ("cluster.spare_nodes", {"cluster.spare_nodes": 2}),
    ("cluster.fabric.oversubscription", {"cluster.fabric.oversubscription": 2.0}),
    ("cluster.fabric.topology", {"cluster.fabric.topology": "fat-tree"}),
    ("cluster.fabric.technology", {"cluster.fabric.technology": "roce-400g"}),
    ("cluster.fabric pods", {"cluster.gpus": 128, "cluster.fabric.pod_gpus": 32,
                             "cluster.fabric.pod_oversubscription": 2.0}),
    ("cluster.fabric.leaf_switch", {"cluster.fabric.leaf_switch": "qm8700"}),
    ("cluster.fabric.dual_tor", {"cluster.fabric.technology": "ib-ndr200", "cluster.fabric.dual_tor": True}),
    ("cluster.node", {"cluster.gpu": "a100-sxm-80gb", "cluster.node": "dgx-a100"}),
    ("deadline wall-clock", {"cluster.deadline_days": 12}),
    ("deadline wall-clock, restart", {"cluster.deadline_days": 12, "reliability.restart_min": 45}),
    ("deadline failure-free", {"cluster.deadline_days": 12, "cluster.deadline_basis": "failure-free"}),
    ("deadline re-solved", {"cluster.deadline_days": 3, "reliability.restart_min": 120}),  # ettr_scale
    ("reliability.seed", {"reliability.seed": 8}),
    ("reliability.trials", {"reliability.trials": 50}),
    ("reliability.restart_min", {"reliability.restart_min": 45}),
    ("reliability.failure_profile", {"reliability.failure_profile": "rsc-a100"}),
    ("reliability.failures_per_1000_node_days", {"reliability.failures_per_1000_node_days": 20}),
    ("reliability.repair_h", {"reliability.repair_h": 72}),
    ("reliability.checkpoint_interval_min", {"reliability.checkpoint_interval_min": 90}),
    ("reliability.include_planned", {"reliability.include_planned": False}),
    ("reliability.checkpoint_blocking_s", {"reliability.checkpoint_blocking_s": 20}),
    ("reliability two-tier", {"reliability.local_checkpoint_interval_min": "auto"}),
    ("reliability two-tier replicas", {"reliability.local_checkpoint_interval_min": 10,
                                       "reliability.local_checkpoint_replicas": 1,
                                       "reliability.local_checkpoint_blocking_s": 2,
                                       "reliability.local_checkpoint_write_s": 30}),
    ("economics.cloud_usd_per_gpu_hour", {"economics.cloud_usd_per_gpu_hour": 2.0}),
    ("economics.pue", {"economics.pue": 1.3}),
    ("economics.electricity_usd_per_kwh", {"economics.electricity_usd_per_kwh": 0.12}),
    ("economics.facility", {"economics.facility": "build"}),
    ("economics.wasted_fraction", {"economics.wasted_fraction": 0.2}),
    ("economics.depreciation_years", {"economics.depreciation_years": 5}),
    ("buildout.profile", {"buildout.profile": "new-build"}),
    ("buildout.profile auto", {"buildout.profile": "auto"}),
    ("buildout.start_date", {"buildout.start_date": "2028-03-01"}),
]
_PATHS = {S.Scenario: "", S.Cluster: "cluster", S.FabricSection: "cluster.fabric",
          S.Training: "training", S.Parallelism: "training.parallelism", S.ResolvedModel: "model",
          S.Reliability: "reliability", S.Economics: "economics", S.Buildout: "buildout"}


@contextlib.contextmanager
def _traced(reads_seen: set[str]):
    """Record every scenario field read by attribute (``cluster.fabric.technology``) while
    active. Reads through ``model_dump`` are not seen: sections read that way are keyed whole."""
    def spy(self, name):  # noqa: ANN001, ANN202
        value = object.__getattribute__(self, name)
        cls = type(self)
        if cls in _PATHS and name in cls.model_fields and not isinstance(value, S.Section):
            reads_seen.add(f"{_PATHS[cls]}.{name}".lstrip("."))
        return value

    S.Section.__getattribute__ = spy
    try:
        yield reads_seen
    finally:
        del S.Section.__getattribute__


class _Tracer:
    """A ``memo`` for make_plan that caches nothing and records what each stage reads."""

    def __init__(self) -> None:
        self.seen: dict[str, set[str]] = {s: set() for s in READS}

    def bind(self, *fns):  # noqa: ANN002, ANN202
        def wrap(stage, fn):  # noqa: ANN001, ANN202
            def call(*args, **kw):  # noqa: ANN002, ANN003, ANN202
                with _traced(self.seen[stage]):
                    return fn(*args, **kw)
            return call
        return tuple(wrap(s, f) for s, f in zip(READS, fns, strict=True))


def _covered(path: str, keys: tuple[str, ...]) -> bool:
    return any(path == k or path.startswith(k + ".") for k in keys)


def _scenario(assignments: dict, base: dict = SMALL):  # noqa: ANN202
    cat = cached_catalog(())
    doc = apply(copy.deepcopy(base), assignments)
    doc["name"] = json.dumps(assignments)  # every point its own name, as in a sweep
    return scenario_from_dict(doc, "memo-test", cat), cat


def _fingerprint(plan) -> str:  # noqa: ANN001
    """The plan as JSON (every contract key) and every result's repr (curves, timelines)."""
    return json.dumps(plan.to_dict(), sort_keys=True, default=str) + repr(plan)


@pytest.fixture(scope="module")
def reference():
    """Each case planned without a cache, with what each of its stages read."""
    out = {}
    for name, a in CASES:
        s, cat = _scenario(a)
        tracer = _Tracer()
        out[name] = (_fingerprint(make_plan(s, cat, memo=tracer)), tracer.seen, s)
    return out


@pytest.mark.parametrize("case", [n for n, _ in CASES])
def test_stage_reads_only_keyed_keys(reference, case):
    """A stage reading a key its cache key leaves out would hand one scenario another's result."""
    _, seen, s = reference[case]
    for stage, got in seen.items():
        extra = sorted(p for p in got if not _covered(p, reads(stage, s)))
        assert extra == [], f"{stage} reads {extra}, not in its memo key ({case})"


def test_every_section_same_plans_with_cache(reference):
    memo = StageMemo()
    for rounds in range(2):  # the second round is all hits
        for name, a in CASES:
            s, cat = _scenario(a)
            assert _fingerprint(make_plan(s, cat, memo=memo)) == reference[name][0], (name, rounds)
    # the whole second round at least (the spares re-estimate runs only where spares take slots)
    assert all(memo.hits[s] >= len(CASES) for s in READS if s != "respare")
    # the first round alone: keys a stage does not read let it hit (price -> training, design)
    first = StageMemo()
    for _, a in CASES[:1] + [c for c in CASES if c[0] == "economics.cloud_usd_per_gpu_hour"]:
        make_plan(*_scenario(a), memo=first)
    # design: the unplaced draft (which tells whether spares take slots) and the full design
    assert first.hits["training"] == 1 and first.hits["design"] == 2
    assert first.misses["reliability"] == 2  # it prices the wasted GPU-hours


def test_deadline_resolve_keys_ettr_scale():
    """The deadline loop solves again with ettr_scale: each solve its own entry, all reused."""
    a = dict(CASES)["deadline re-solved"]
    memo = StageMemo()
    make_plan(*_scenario(a), memo=memo)
    assert memo.misses["training"] > 1 and memo.hits["training"] == 0
    make_plan(*_scenario(a), memo=memo)
    assert memo.hits["training"] == memo.misses["training"]


def test_errors_same_and_not_cached():
    """A stage's error is raised again for every plan that reaches it, the same line."""
    from clustertwin.errors import UserError

    memo = StageMemo()
    for m in (memo, memo, None):
        with pytest.raises(UserError) as err:
            make_plan(*_scenario({"reliability.checkpoint_interval_min": 0.001}), memo=m)
        assert "checkpoint_interval_min" in str(err.value.lines())
    assert memo.misses["reliability"] == 2 and len(memo._results["reliability"]) == 0


def test_seed_reuses_training_and_design_only():
    memo = StageMemo()
    for a in ({}, {"reliability.seed": 8}, {"reliability.seed": 8, "buildout.start_date": "2028-01-04"}):
        make_plan(*_scenario(a), memo=memo)
    # design: twice per plan (the unplaced draft, then the full design), both reused for the
    # seed; a new start date is a new purchase date for the GPU servers (issue 37), so the
    # design and the stages after it run again
    assert memo.hits == {"training": 2, "design": 2, "reliability": 0, "economics": 0, "buildout": 0,
                         "respare": 0}
    assert memo.misses["buildout"] == 3


def test_design_only_plan_same_with_cache():
    base = {k: v for k, v in SMALL.items() if k not in ("model", "training")}
    memo = StageMemo()
    for a in ({}, {"economics.cloud_usd_per_gpu_hour": 2.0}, {}):
        s, cat = _scenario(a, base)
        assert _fingerprint(make_plan(s, cat, memo=memo)) == _fingerprint(make_plan(s, cat))
    assert memo.hits["design"] == 4 and memo.uncached["design"] == 0  # draft + full, twice


def test_cache_stays_within_size():
    memo = StageMemo(size=2)
    for gpus in (64, 128, 192, 64):
        s, cat = _scenario({"cluster.gpus": gpus})
        assert _fingerprint(make_plan(s, cat, memo=memo)) == _fingerprint(make_plan(s, cat))
    assert all(len(c) <= 2 for c in memo._results.values())
    assert memo.hits["training"] == 0 and memo.misses["training"] == 4  # 64 was evicted
    with pytest.raises(ValueError):
        StageMemo(size=0)


def test_sweep_tables_identical_with_and_without_cache():
    sw = build(SMALL, {"economics.cloud_usd_per_gpu_hour": [2.0, 3.5], "reliability.restart_min": [5, 30]},
               [("64 GPUs", {"cluster.gpus": 64}), ("fat-tree, 2 spares",
                 {"cluster.fabric.topology": "fat-tree", "cluster.spare_nodes": 2})])
    off = run_sweep_table(sw, Runner("local", 1, cache=False))
    on = run_sweep_table(sw, Runner("local", 1, cache=True))
    assert off.column("error").to_pylist() == [None] * 8
    assert on.equals(off, check_metadata=True)


#: values each key may take in a random grid (cheap scenarios: 8B model, 100 trials)
POOL = {
    "model.layers": [24, 32],
    "training.seq_len": [4096, 8192],
    "cluster.gpus": [64, 128],
    "cluster.fabric.oversubscription": [1.0, 2.0],
    "cluster.spare_nodes": ["auto", 1],
    "reliability.seed": [1, 2],
    "reliability.trials": [40, 100],
    "reliability.restart_min": [5, 30],
    "reliability.failure_profile": ["llama3-h100", "rsc-a100"],
    "reliability.repair_h": ["auto", 48],
    "economics.cloud_usd_per_gpu_hour": [2.0, 4.0],
    "economics.pue": ["auto", 1.25],
    "buildout.profile": ["existing-facility", "fast-track"],
}


@st.composite
def _grids(draw):  # noqa: ANN001, ANN202
    keys = draw(st.lists(st.sampled_from(sorted(POOL)), min_size=1, max_size=2, unique=True))
    grid = {k: draw(st.lists(st.sampled_from(POOL[k]), min_size=1, max_size=2, unique=True)) for k in keys}
    return grid, draw(st.sampled_from(["per-scenario", "common"]))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_grids())
def test_random_grids_same_plans_with_cache(spec):
    grid, seeds = spec
    cat = cached_catalog(())
    memo = StageMemo()
    for p in make_points(SMALL, grid, seeds=seeds):
        s = scenario_from_dict(p.doc, "memo-test", cat)
        assert _fingerprint(make_plan(s, cat, memo=memo)) == _fingerprint(make_plan(s, cat)), p.label


def test_spares_reestimate_is_cached():
    """Hot spares inside full units leave the job fewer GPUs: the training estimate made again
    on them is a cached stage, so the design, reliability, economics and build-out after it are
    keyed too (before, every stage after it ran uncached). Two points that differ only in a
    price share the re-estimate and the design; the plans equal the uncached ones."""
    base = {**copy.deepcopy(SMALL), "cluster": {**SMALL["cluster"], "gpus": 1024}}
    memo = StageMemo()
    for price in (2.0, 3.0, 2.0):
        s, cat = _scenario({"economics.cloud_usd_per_gpu_hour": price}, base)
        plain = make_plan(s, cat)
        cached = make_plan(s, cat, memo=memo)
        assert _fingerprint(cached) == _fingerprint(plain)
    assert any("hot spares take" in n for n in plain.training.notes)  # the job was re-estimated
    assert memo.misses["respare"] == 1 and memo.hits["respare"] == 2, (memo.hits, memo.misses)
    assert sum(memo.uncached.values()) == 0
    assert memo.hits["reliability"] == 1  # the third point repeats the first
