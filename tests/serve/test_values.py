"""Values as the compare and sweep pages show them (serve/values.py): units from the naming
table, rounded, and a difference only where the rounded texts differ."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("key, value, text", [
    ("economics.capex_usd", 8.404e7, "$84.0M"),
    ("training.mfu", 0.3988, "39.9%"),  # a fraction shown as a percentage
    ("training.days", 61.234, "61.2 days"),
    ("design.power.facility_kw", 24_300.5, "24.3 MW"),
    ("design.power.it_kw", 950.4, "950 kW"),
    ("scenario.cluster.gpus", 8192, "8,192"),
    ("training.step_time_s", 12.3456, "12.3 s"),
    ("training.tokens_per_s", 2.3e6, "2,300,000 tokens/s"),
    ("scenario.training.tokens", 15.6e12, "15,600,000,000,000"),
    ("decision.meets_target", True, "yes"),
    ("decision.mode", "colo", "colo"),
    ("some.ratio", 1.23e-5, "< 0.001"),
])
def test_shown_values_carry_units_and_no_raw_float(key, value, text):
    from clustertwin.serve.values import shown

    assert shown(key, value) == text


def test_compare_highlights_only_differences_beyond_rounding():
    from clustertwin.serve.compare import compare_rows

    a = {"training": {"mfu": 0.39881, "days": 61.0}, "decision": {"mode": "build"}}
    b = {"training": {"mfu": 0.39884, "days": 75.0}, "decision": {"mode": "cloud"}}
    rows = {r["key"]: r for r in compare_rows([a, b], show_all=True)}
    assert rows["training.mfu"]["diff"] is False and rows["training.mfu"]["cells"] == ["39.9%", "39.9%"]
    assert rows["training.days"]["diff"] is True
    assert list(rows)[0] == "decision.mode" and rows["training.mfu"]["label"].startswith("Model FLOPs")
