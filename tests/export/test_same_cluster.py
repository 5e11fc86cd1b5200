"""``export`` and ``schedule --cluster SCENARIO`` describe the cluster ``plan`` designs, also when a
deadline solver sizes it with wall-clock rounds (issue 11: one answer per quantity)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clustertwin.export.stage import export_design
from clustertwin.plan import plan_through
from clustertwin.scenario import load_scenario
from clustertwin.scheduling.cluster import from_scenario

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("name", ["deadline-llama3-70b.yaml", "gpt3-175b-1024-a100.yaml"])
def test_export_and_schedule_use_the_plans_design(name, catalog):
    path = EXAMPLES / name
    sc = load_scenario(path, catalog)
    planned = plan_through(sc, catalog).design
    exported = export_design(sc, catalog)
    assert exported.to_contract() == planned.to_contract()
    assert from_scenario(path).nodes == planned.nodes
