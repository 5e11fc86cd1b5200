"""Issue 38: siting regions (catalog kind ``region``, scenario key ``decision.region``).

Sourced figures checked here (catalog regions.yaml, decision-anchors 1.4 and part 2):
- Northern Virginia (Dominion, Bloomberg 2024-08-29): large loads waited 3-4 years before the new
  queue, over 100 MW now 4-7 years; the default region, so the default plan does not move.
- Texas (ERCOT): 24-36+ months to power at a large load (DC Hub on the ERCOT queue report,
  2026-07-01); loads under ERCOT's 75 MW large-load threshold skip the large-load study.
- Norway (Oslo): central Oslo 67 MW at 26 % vacancy (Cushman & Wakefield, 2023-10).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import subprocess
import sys

import numpy as np
import pytest
import yaml

from clustertwin.decision import uncertainty as mc
from clustertwin.decision.routes import colo_ready_chance, grid_wait_days
from clustertwin.plan import make_plan
from clustertwin.scenario import scenario_from_dict

YEAR = 365.25
START, TARGET = dt.date(2027, 1, 5), dt.date(2028, 6, 30)
REGIONS = ("northern-virginia", "texas-ercot", "nordic-oslo")


def _doc(default_doc, **decision):
    d = copy.deepcopy(default_doc)
    d["training"]["tokens"] = 15.6e12
    d["buildout"] = {**d.get("buildout", {}), "start_date": START.isoformat()}
    d["decision"] = {"target_date": TARGET.isoformat(), **decision}
    return d


def _plan(default_doc, catalog, **decision):
    return make_plan(scenario_from_dict(_doc(default_doc, **decision), "r.yaml", catalog), catalog)


def test_regions_are_sourced_and_rise_with_mw(catalog):
    ids = {r.id for r in catalog.all("region")}
    assert set(REGIONS) <= ids
    for r in catalog.all("region"):
        assert r.source.strip() and r.as_of and r.colo.source.strip() and r.colo.as_of
        assert all(p.source.strip() and p.as_of for p in r.grid), r.id
        waits = [grid_wait_days(catalog, r.id, mw) for mw in range(1, 401, 7)]
        assert all(b[0] >= a[0] and b[1] >= a[1] for a, b in zip(waits, waits[1:], strict=False)), r.id
        assert all(p90 >= p50 for p50, p90 in waits), r.id


@pytest.mark.parametrize(("mw", "p50_years", "p90_years"), [(100, 3.5, 4.0), (300, 5.5, 7.0), (600, 5.5, 7.0)],
                         ids=["100MW-Dominion-3-4y", "300MW-Dominion-4-7y", "flat-past-the-last"])
def test_northern_virginia_is_dominions_queue(catalog, mw, p50_years, p90_years):
    """Dominion (Bloomberg 2024-08-29), within a day: midpoint and upper end of each band."""
    p50, p90 = grid_wait_days(catalog, "northern-virginia", mw)
    assert p50 == pytest.approx(p50_years * YEAR, abs=1.0)
    assert p90 == pytest.approx(p90_years * YEAR, abs=1.0)


def test_default_region_is_northern_virginia(default_doc, catalog):
    base = _plan(default_doc, catalog, options=["build", "colo"])
    nova = _plan(default_doc, catalog, options=["build", "colo"], region="northern-virginia")
    assert base.scenario.decision.region == "northern-virginia"
    assert base.decision.model_dump() == nova.decision.model_dump()


def test_region_moves_the_build_date(default_doc, catalog):
    """A 130 MW facility on a greenfield site waits for its region's utility past the
    build-out's go-live: ERCOT 24-36 months at 100 MW (DC Hub), Dominion 3-4 years at 100 MW and
    4-7 past it (Bloomberg), Norway 5-10 years for a major load (HydroSec)."""
    from clustertwin.decision.inputs import gather
    from clustertwin.decision.options import build

    p = _plan(default_doc, catalog, options=["build"])
    inp = gather(p.scenario, catalog, p.training, p.design, p.reliability, p.economics, p.buildout)
    ready = {}
    for r in REGIONS:
        o = build(dataclasses.replace(inp, facility_kw=130_000.0, region=r), catalog, p.scenario.decision)
        g50, _ = grid_wait_days(catalog, r, 130.0)
        assert g50 > inp.go_live_p50 and o.ready[0] == pytest.approx(g50), r
        ready[r] = o.ready[0]
    assert ready["texas-ercot"] < ready["northern-virginia"] < ready["nordic-oslo"]
    assert 24 * 30.44 <= ready["texas-ercot"] <= 48 * 30.44   # between ERCOT's 100 and 300 MW figures


@pytest.mark.parametrize("region", REGIONS)
def test_colo_block_chance_runs_from_small_to_largest(catalog, region):
    c = catalog.get("region", region).colo
    assert colo_ready_chance(catalog, region, c.small_block_mw) == 1.0
    assert colo_ready_chance(catalog, region, c.largest_block_mw) == 0.0
    mid = (c.small_block_mw + c.largest_block_mw) / 2
    assert colo_ready_chance(catalog, region, mid) == pytest.approx(0.5)


def test_oslo_largest_block_is_its_vacant_stock(catalog):
    """Cushman & Wakefield (2023-10): 67 MW in operation at 26 % vacancy."""
    assert catalog.get("region", "nordic-oslo").colo.largest_block_mw == pytest.approx(67 * 0.26, abs=0.5)


def test_lease_provider_installs_in_the_regions_space(default_doc, catalog):
    """A lease past what any provider hands over (16K GPUs > 8,192) waits for the provider to
    install in powered space: the region's preleased colocation space, as the colo route does."""
    from clustertwin.decision.inputs import gather
    from clustertwin.decision.options import colo_space_days, hardware_ready_days, lease

    p = _plan(default_doc, catalog, options=["lease"])
    inp = gather(p.scenario, catalog, p.training, p.design, p.reliability, p.economics, p.buildout)
    contract = catalog.get("route", "lease").value("contract_days")
    hw = hardware_ready_days(catalog, inp.gpu_lead, inp.gpus)
    for region in REGIONS:
        r = dataclasses.replace(inp, region=region)
        space = colo_space_days(r, catalog, [])
        o = lease(r, catalog, p.scenario.decision)
        assert o.ready[0] == pytest.approx(contract + max(hw[0], space[0])), region


def test_unknown_region_is_one_line_exit_2(default_doc, tmp_path):
    doc = _doc(default_doc, region="nordic-olso")
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    r = subprocess.run([sys.executable, "-m", "clustertwin.cli", "plan", str(path)],
                       capture_output=True, text=True, timeout=120)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "decision.region" in lines[0] and "nordic-oslo" in lines[0] and "Traceback" not in r.stderr


def test_absurd_region_figure_is_refused(tmp_path, default_doc):
    from pathlib import Path

    data = Path(__file__).resolve().parents[2] / "src" / "clustertwin" / "catalog" / "data" / "regions.yaml"
    entry = copy.deepcopy(yaml.safe_load(data.read_text())["region"][0])
    entry["id"] = "x-region"
    entry["grid"][1]["p50_days"] = 1e300
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "regions.yaml").write_text(yaml.safe_dump({"region": [entry]}))
    scen = tmp_path / "s.yaml"
    scen.write_text(yaml.safe_dump(_doc(default_doc)))
    r = subprocess.run([sys.executable, "-m", "clustertwin.cli", "validate", str(scen), "--catalog", str(cat)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "region[x-region]" in r.stderr and "p50_days" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_interconnection_draw_hits_the_regions_percentiles():
    """The lognormal through a region's P50/P90: exactly those at z = 0 and z = Z90."""
    out = mc.interconnection(np.array([0.0, mc.Z90, -mc.Z90]), (1000.0, 1400.0))
    assert out[:2].tolist() == pytest.approx([1000.0, 1400.0])
    assert out[2] == pytest.approx(1000.0 ** 2 / 1400.0)
    assert mc.interconnection(np.array([2.0]), (0.0, 0.0)).tolist() == [0.0]


@pytest.mark.parametrize(("target", "expected"), [(1000.0, 0.5), (1400.0, 0.9)], ids=["P50", "P90"])
def test_monte_carlo_draws_the_grid(target, expected):
    """A route ready on its own in 100 days but waiting on a 1,000/1,400-day utility queue
    (P50/P90) meets a target at the queue's P50 half the time and at its P90 90% of the time."""
    k = len(mc.COST_INPUTS)
    flat = np.tile([1.0, 1.0], (k, 1))
    r = mc.RouteSpread("build", 1.0, np.ones(k), np.ones(k), (100.0, 110.0), (1e-6, 1e-6), flat,
                       grid=(1000.0, 1400.0))
    meets, _ = mc.simulate([r], target, "cost", 20_000, 7)
    assert meets.mean() == pytest.approx(expected, abs=0.012)
