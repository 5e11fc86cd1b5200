"""Grid construction: dotted keys, values, ranges, seeds, study files, validation before work."""

from __future__ import annotations

import pytest

from clustertwin.errors import UsageError
from clustertwin.sweep.grid import apply, make_points, parse_range, parse_set, point_seed
from clustertwin.sweep.study import build, load_study
from tests.conftest import EXAMPLES


def test_set_parses_values_as_yaml():
    key, values = parse_set("training.tokens=15.6e12,1e12")
    assert key == "training.tokens" and values == [15.6e12, 1e12]
    assert parse_set("reliability.checkpoint_interval_min=auto,30")[1] == ["auto", 30]
    assert parse_set("training.parallelism.sequence_parallel=true,false")[1] == [True, False]


@pytest.mark.parametrize("text", ["cluster.gpu=h100-sxm-80gb", "cluster.fabric.oversubscription=1.0,2.0",
                                  "training.parallelism.tp=1,2", "model.moe.experts=8"])
def test_every_schema_key_is_accepted(text):
    parse_set(text)


@pytest.mark.parametrize("text, expected", [
    ("cluster.gpu_count=8", "did you mean"),
    ("nonsense=1", "unknown scenario key"),
    ("cluster.gpus", "expected KEY=VALUES"),
    ("cluster.gpus=", "empty value"),
])
def test_bad_set_is_one_problem_naming_the_key(text, expected):
    with pytest.raises(UsageError) as exc:
        parse_set(text)
    assert len(exc.value.problems) == 1 and expected in str(exc.value)


def test_range_includes_stop_and_keeps_ints():
    assert parse_range("cluster.gpus=1024:4096:1024") == ("cluster.gpus", [1024, 2048, 3072, 4096])
    assert parse_range("cluster.fabric.oversubscription=1:2:0.5")[1] == [1.0, 1.5, 2.0]
    with pytest.raises(UsageError):
        parse_range("cluster.gpus=10:1:1")


def test_apply_drops_the_exclusive_partner(small_doc):
    small_doc["cluster"]["deadline_days"] = 30
    del small_doc["cluster"]["gpus"]
    out = apply(small_doc, {"cluster.gpus": 128, "training.parallelism.tp": 2})
    assert out["cluster"]["gpus"] == 128 and "deadline_days" not in out["cluster"]
    assert out["training"]["parallelism"] == {"tp": 2}
    assert "gpus" not in small_doc["cluster"]  # the base is not touched


def test_points_are_the_cross_product_and_seeds_follow_coordinates(small_doc):
    grid = {"cluster.gpus": [64, 128], "economics.cloud_usd_per_gpu_hour": [2.0, 3.5]}
    pts = make_points(small_doc, grid)
    assert [p.assignments for p in pts][:2] == [{"cluster.gpus": 64, "economics.cloud_usd_per_gpu_hour": 2.0},
                                                {"cluster.gpus": 64, "economics.cloud_usd_per_gpu_hour": 3.5}]
    seeds = {tuple(sorted(p.assignments.items())): p.doc["reliability"]["seed"] for p in pts}
    assert len(set(seeds.values())) == 4  # every point its own stream
    flipped = make_points(small_doc, {"economics.cloud_usd_per_gpu_hour": [3.5, 2.0], "cluster.gpus": [128, 64]})
    assert {tuple(sorted(p.assignments.items())): p.doc["reliability"]["seed"] for p in flipped} == seeds
    assert point_seed(7, None, pts[0].assignments) != point_seed(8, None, pts[0].assignments)


def test_a_swept_seed_is_used_as_given(small_doc):
    pts = make_points(small_doc, {"reliability.seed": [3, 4]})
    assert [p.doc["reliability"]["seed"] for p in pts] == [3, 4]


def test_builtin_studies_load_and_validate():
    from clustertwin.sweep.api import prepare

    ladder = load_study(EXAMPLES / "ladder.yaml")
    assert [p.doc["cluster"]["gpus"] for p in ladder.points] == [8, 64, 1024, 16384, 100000]
    assert prepare(ladder) == {}
    nvl = load_study(EXAMPLES / "h100-vs-nvl72.yaml")
    assert len(nvl.points) == 4 and prepare(nvl) == {}
    assert {p.doc["cluster"]["node"] for p in nvl.points} == {"dgx-h100", "gb200-nvl72"}


def test_a_value_bad_everywhere_stops_the_sweep(small_doc):
    from clustertwin.sweep.api import prepare

    with pytest.raises(UsageError) as exc:
        prepare(build(small_doc, {"cluster.gpus": [64, 100]}))
    (line,) = exc.value.lines()
    assert "cluster.gpus" in line and "100" in line
    with pytest.raises(UsageError) as exc:
        prepare(build(small_doc, {"cluster.gpu": ["h100-sxm-80gb", "h100-sxmm"]}))
    assert "cluster.gpu" in exc.value.lines()[0]


def test_a_bad_combination_is_a_row_not_the_end(small_doc):
    from clustertwin.sweep.api import prepare

    cases = [("A100", {"cluster.gpu": "a100-sxm-80gb", "cluster.node": "dgx-a100"}),
             ("H100", {"cluster.gpu": "h100-sxm-80gb", "cluster.node": "dgx-h100"})]
    sw = build(small_doc, {"training.precision": ["bf16", "fp8"]}, cases)
    skip = prepare(sw)  # FP8 runs on H100 but A100 has no FP8 tensor cores
    assert sorted(skip) == [1] and "no fp8" in skip[1]


def test_common_seeds_keep_the_base_seed(small_doc):
    pts = make_points(small_doc, {"cluster.gpus": [64, 128]}, seeds="common")
    assert [p.doc["reliability"]["seed"] for p in pts] == [7, 7]
    with pytest.raises(UsageError):
        make_points(small_doc, {"cluster.gpus": [64]}, seeds="random")
