"""Build-out scales with the cluster (issue 11): one DGX is not planned as a new data center;
8 and 16,384 GPUs do not get nearly the same schedule."""

from __future__ import annotations

import pytest
import yaml

from clustertwin.buildout import plan_buildout
from clustertwin.catalog import load_catalog
from clustertwin.plan import plan_through
from clustertwin.scenario import DEFAULT_SCENARIO, scenario_from_dict


@pytest.fixture(scope="module")
def base():
    return load_catalog([])


def _plan(cat, gpus: int, site: str = "greenfield"):
    """The built-in scenario at ``gpus`` with a model that fits (8B below 1,024 GPUs)."""
    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    doc["cluster"]["gpus"] = gpus
    doc.setdefault("decision", {})["site"] = site
    doc["buildout"]["profile"] = "auto"
    if gpus < 1024:
        doc["model"] = {"preset": "llama3-8b"}
        doc["training"].update(tokens=1e12, global_batch_tokens=2**20)
    sc = scenario_from_dict(doc, "<scale-down>", cat)
    return plan_buildout(sc, cat, plan_through(sc, cat).design, samples=300)  # the design, as plan passes it


def test_one_dgx_is_a_small_order_without_fabric_steps(base):
    p = _plan(base, 8)
    assert p.profile == "small-order"
    assert p.quantities["switches"] == 0 and p.quantities["racks"] <= 4
    fabric = {s.number: s for s in p.steps if s.number in (40, 49, 64)}
    assert all(not s.applicable for s in fabric.values())   # no switches to order or mount
    assert p.go_live_days_p50 < 250


def test_small_and_large_clusters_get_different_schedules(base):
    """The 16,384-GPU new build in an existing shell waits on medium-voltage switchgear (335 d
    likely) and a GPU allocation; on a greenfield site on the site, its permits and the shell
    first; 8 GPUs in an existing facility ship from stock."""
    small, big = _plan(base, 8), _plan(base, 16_384, "existing-building")
    assert big.profile == "new-build"
    assert small.go_live_days_p50 < 0.5 * big.go_live_days_p50
    assert 76 in big.critical_path and 76 not in small.critical_path
    green = _plan(base, 16_384)
    assert green.critical_path[:3] == (196, 197, 198) and green.go_live_days_p50 > big.go_live_days_p50
