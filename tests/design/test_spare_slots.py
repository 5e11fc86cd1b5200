"""Hot spares inside the scalable units (issue 22): a spare takes a free slot of a unit the job
already fills and never opens one; ``spare_placement: outside`` opens units and says what it adds.

Reference counts: NVIDIA DGX SuperPOD RA-11333-001 (DGX H100) Tables 3 and 4 (leaf / spine /
core / leaf-spine cables: 4 SU = 32 / 16 / - / 1,024; 64 SU = 512 / 512 / 256 / 16,384), exact.
"""

from __future__ import annotations

import pytest

from clustertwin.design import design
from design.helpers import scenario

REFERENCE = [(1024, 32, 16, 0, 1024), (16_384, 512, 512, 256, 16_384)]


@pytest.mark.parametrize("gpus,leaf,spine,core,isl", REFERENCE,
                         ids=["R1-4SU-1024-exact", "R1-64SU-16384-exact"])
def test_default_spares_keep_the_reference_fabric(catalog, gpus, leaf, spine, core, isl):
    d = design(scenario(catalog, gpus, spare_nodes="auto"), catalog, None)
    f = d.fabric
    assert (f.leaf, f.spine, f.core, f.leaf_spine_links) == (leaf, spine, core, isl)
    assert d.scalable_units == gpus // 256


def test_spares_take_free_slots_then_installed_nodes(catalog):
    # 2,000 DGX: 63 SUs of 32 slots = 2,016; one UFM slot; 15 free slots hold 15 spares
    d = design(scenario(catalog, 16_000, spare_nodes=15), catalog, None)
    assert d.scalable_units == 63 and d.spare_nodes == 15 and d.nodes == 2015
    assert d.fabric.managers_attached and d.job_nodes == 2000
    # 20 spares: the units are full, so 20 of the 2,016 slots' nodes are the spares
    d = design(scenario(catalog, 16_000, spare_nodes=20), catalog, None)
    assert d.scalable_units == 63 and d.spare_nodes == 20 and d.nodes == 2016
    assert d.job_nodes == 1996 and d.fabric.leaf == 63 * 8


def test_the_plan_runs_the_job_on_the_nodes_left(catalog):
    from clustertwin.plan import make_plan

    s = scenario(catalog, 1024, spare_nodes=2)
    plan = make_plan(s, catalog, stages=("training", "design"))
    d, t = plan.design, plan.training
    assert (d.fabric.leaf, d.fabric.spine, d.fabric.leaf_spine_links) == (32, 16, 1024)
    assert d.spare_nodes == 2 and d.nodes == 128 and d.job_gpus_limit is None
    assert t.installed_gpus == 126 * 8 and t.gpus <= 126 * 8
    assert any("the job is estimated on the other 1,008" in w for w in plan.warnings)
    # the JSON says "installed" once: every GPU installed (spares included) in both blocks,
    # the job's GPUs under training.gpus, and no idle GPUs counted for the spares
    doc = plan.to_dict()
    assert doc["training"]["installed_gpus"] == doc["design"]["gpus"] == 128 * 8
    assert doc["training"]["gpus"] == t.gpus and doc["training"]["idle_gpus"] == t.idle_gpus


def test_outside_spares_open_units_and_say_what_they_add(catalog):
    inside = design(scenario(catalog, 1024, spare_nodes=1), catalog, None)
    outside = design(scenario(catalog, 1024, spare_nodes=1, spare_placement="outside"),
                     catalog, None)
    assert inside.spare_nodes == 1 and inside.fabric.leaf == 32 and inside.nodes == 128
    assert outside.spare_nodes == 1 and outside.scalable_units == 5
    added = outside.fabric.leaf - inside.fabric.leaf
    assert added == 8
    note = next(n for n in outside.notes if "spare_placement: outside" in n)
    assert f"{added} leaf" in note and "$" in note


def test_bad_placement_is_a_scenario_error(catalog):
    from clustertwin.errors import ScenarioError

    with pytest.raises(ScenarioError, match="spare_placement"):
        scenario(catalog, 1024, spare_placement="beside")
