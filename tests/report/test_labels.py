"""report/labels.py: every contract key and figure series of the default plan has words and a
unit a person reads, never a code name."""

from __future__ import annotations

import pytest

from clustertwin.report.labels import (
    KEYS,
    SERIES,
    humanize,
    label,
    label_unit,
    looks_like_code_name,
    unit,
)


def _contract_keys(plan_dict):
    """The numeric/string leaves of the default plan's blocks named in contract section 2."""
    out = []
    for block in ("training", "reliability", "economics", "buildout"):
        for k, v in plan_dict[block].items():
            if isinstance(v, int | float | str) and not isinstance(v, bool):
                out.append(f"{block}.{k}")
    return out


def test_table_covers_the_contract_headline_keys():
    for key in ("training.step_time_s", "training.days", "reliability.effective_days",
                "economics.run_cost_owned_usd", "buildout.go_live_days_p90",
                "decision.options.trained_by_p90", "decision.best"):
        assert key in KEYS, key


def test_every_leaf_of_the_default_plan_reads_as_words(default_plan):
    d = default_plan.to_dict()
    keys = _contract_keys(d)
    assert len(keys) > 40
    bad = [(k, label(k)) for k in keys if looks_like_code_name(label(k))]
    assert not bad


@pytest.mark.parametrize("block, attr", [("training", "time_breakdown_s"),
                                         ("training", "memory_breakdown_gib"),
                                         ("reliability", "lost_gpu_hours_by_category"),
                                         ("economics", "capex_by_category_usd"),
                                         ("economics", "opex_by_category_usd_per_month")])
def test_every_figure_series_is_in_the_table(default_plan, block, attr):
    series = getattr(getattr(default_plan, block), attr)
    assert series
    missing = [k for k in series if k not in SERIES]
    assert not missing


def test_units_from_table_and_suffix():
    assert label_unit("training.step_time_s") == "Step time (s)"
    assert label_unit("reliability.effective_days") == "Wall-clock days"  # the label says the unit
    assert unit("dp_exposed_s") == "s"
    assert label_unit("training.mfu") == "Model FLOPs utilisation (MFU)"  # % is shown on the value
    assert unit("something.odd_usd_per_month") == "$/month"  # not in the table: from the suffix
    assert label("decision.options.2.cost_usd") == "Cost"  # list indices are ignored
    assert label("scenario.economics.cloud_usd_per_gpu_hour") == "Cloud price per GPU-hour"


@pytest.mark.parametrize("raw, words", [("gpu-hbm3-memory", "GPU HBM3 memory"),
                                        ("design.fabric.spine_core_links", "Spine core links"),
                                        ("reliability.checkpoint_write_s", "Checkpoint write"),
                                        ("nccl-watchdog-timeout", "NCCL watchdog timeout")])
def test_humanize_fallback(raw, words):
    assert humanize(raw) == words
    assert not looks_like_code_name(humanize(raw))


@pytest.mark.parametrize("text, code", [("dp_exposed_s", True), ("step_s", True),
                                        ("weights_grads_optimizer", True), ("cost_usd", True),
                                        ("Step time (s)", False), ("GPU HBM3 memory", False),
                                        ("llama3-405b", False)])
def test_code_name_detector(text, code):
    assert looks_like_code_name(text) is code
