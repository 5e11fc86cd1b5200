"""The bill of materials a vendor can review (issue 37): power and cooling priced by the equipment
the design sizes, every line with a part number (or the reason it has none) and a date, storage
priced as a system per usable PB inside a published range, and the plant's cost per MW inside
the published build-cost range."""

from __future__ import annotations

import math
from itertools import combinations

import pytest

from clustertwin.design import design, load_rules
from clustertwin.design.plant import busway_runs
from clustertwin.economics import economics
from clustertwin.economics.bom import vendor_bom
from design.helpers import scenario

SIZES = [("1024-h100", 1024, {}), ("16k-h100", 16_384, {}), ("100k-h100", 100_000, {}),
         ("1008-gb200", 1008, {"node": "gb200-nvl72", "gpu": "gb200"}),
         ("1024-a100", 1024, {"node": "dgx-a100", "gpu": "a100-sxm-80gb",
                              "fabric": {"technology": "ib-hdr"}})]
FACILITY = ("power", "cooling", "facility")


@pytest.fixture(scope="module", params=SIZES, ids=[s[0] for s in SIZES])
def built(request, catalog):
    _, gpus, cluster = request.param
    s = scenario(catalog, gpus, **dict(cluster))
    d = design(s, catalog, None)
    return s, d, economics(s, catalog, None, d)


def test_every_line_has_a_part_number_or_reason_and_a_date(built):
    _, d, eco = built
    for ln in d.bom:
        assert ln.part_number or ln.part_number_reason, ln.item
        assert ln.as_of, ln.item
    for ln in vendor_bom(d, eco):
        assert ln.part_number or ln.part_number_reason, ln.description
        assert ln.as_of, ln.description


def test_no_two_facility_lines_are_equal_by_construction(built):
    """Each facility line is its own equipment's unit price times the count the design sized,
    not a share of one figure: unit prices differ pairwise, so two totals can only meet by a
    coincidence of counts (the old split gave UPS = generators to the cent in every design)."""
    _, d, _ = built
    lines = [ln for ln in d.bom if ln.category in FACILITY]
    assert len(lines) >= (4 if d.facility == "existing-facility" else 15)
    for a, b in combinations(lines, 2):
        assert round(a.unit_usd, 2) != round(b.unit_usd, 2), (a.item, b.item)
    ups = [ln.total_usd for ln in lines if ln.item.startswith("UPS module")]
    gen = [ln.total_usd for ln in lines if ln.item.startswith("diesel generator")]
    assert ups == gen == [] or round(ups[0], 2) != round(gen[0], 2)


def test_lines_sum_to_capex(built):
    _, d, eco = built
    assert sum(ln.total_usd for ln in vendor_bom(d, eco)) == pytest.approx(eco.capex_usd,
                                                                           rel=1e-9)


def test_ups_is_priced_by_kw_and_redundancy(catalog):
    """2N doubles the UPS modules and batteries; generators and chillers do not move."""
    s = scenario(catalog, 4096)
    n1 = design(s, catalog, None)
    two_n = design(s, catalog, None, rules=load_rules().with_values(ups_redundancy="2N"))

    def line(d, word):
        return next(ln for ln in d.bom if ln.item.startswith(word))

    n = math.ceil(n1.power.it_kw / n1.power.ups_module_kw - 1e-9)
    assert line(n1, "UPS module").quantity == n + 1 and line(two_n, "UPS module").quantity == 2 * n
    ups = catalog.get("equipment", "ups-module-1000kw")
    assert line(n1, "UPS module").unit_usd == pytest.approx(1000 * ups.price_usd)
    assert line(two_n, "Li-ion").total_usd == pytest.approx(
        line(n1, "Li-ion").total_usd * 2 * n / (n + 1))
    for word in ("diesel generator", "water-cooled chiller"):
        assert line(two_n, word).total_usd == line(n1, word).total_usd


def test_generators_and_chillers_scale_with_kw(catalog):
    d = design(scenario(catalog, 16_384), catalog, None)
    gen = next(ln for ln in d.bom if ln.item.startswith("diesel generator"))
    rules = load_rules()
    assert gen.quantity == math.ceil(d.power.facility_kw / rules.num("generator_kw") - 1e-9) + 1
    ch = next(ln for ln in d.bom if ln.item.startswith("water-cooled chiller"))
    assert ch.quantity == math.ceil(d.power.it_kw / rules.num("chiller_kw") - 1e-9) + 1


def test_busway_runs_carry_each_row_on_a_and_b():
    assert busway_runs(800.0, 1, 874.0) == 2           # one run each feed
    assert busway_runs(1600.0, 2, 874.0) == 4          # 800 kW rows: one run a feed
    assert busway_runs(4000.0, 2, 874.0) == 12         # 2,000 kW rows: three runs a feed


@pytest.mark.parametrize("eid,rule", [("crah-fanwall-400kw", "crah_kw"), ("rdhx-75kw", "rdhx_kw"),
                                      ("chiller-1000ton", "chiller_kw"),
                                      ("ups-module-1000kw", "ups_module_kw"),
                                      ("generator-2500kw", "generator_kw"),
                                      ("transformer-2500kva", "transformer_kva"),
                                      ("cdu-row-1500kw", "cdu_kw")])
def test_equipment_rating_is_the_rule_the_design_sizes_by(catalog, eid, rule):
    assert catalog.get("equipment", eid).rating == load_rules().num(rule)


def test_storage_system_price_per_usable_pb_in_its_sourced_range(catalog):
    """PFS: flash media floor ($0.15/GB, 2026) .. Caltech's all-flash 5-year chargeback;
    object store: HDD media floor .. UCSF's all-in $160/TB (sources in storage.yaml)."""
    checked = 0
    for s in catalog.all("storage"):
        if s.price_usd is None or s.usd_per_usable_pb_range is None:
            continue
        low, high = s.usd_per_usable_pb_range
        assert s.range_source
        assert low <= s.price_usd / (s.capacity_tb / 1000.0) <= high, s.id
        checked += 1
    assert checked >= 2


def test_storage_lines_are_systems_with_building_blocks(catalog):
    d = design(scenario(catalog, 16_384), catalog, None)
    pfs = next(ln for ln in d.bom if ln.item.startswith("all-flash parallel file system"))
    t = d.storage.tier("pfs")
    assert pfs.quantity == t.blocks and f"{t.capacity_tb / 1000:,.2f} PB usable" in pfs.item
    assert pfs.part_number.startswith("DDN AI400X2")


@pytest.mark.parametrize("low,high", [(9.3e6, 15.0e6)],
                         ids=["cushman-wakefield-2025-9.3-15M-per-MW"])
def test_built_plant_per_mw_in_published_range(catalog, low, high):
    """Cushman & Wakefield Data Center Development Cost Guide 2025: $9.3M (San Antonio) to $15M
    (Reno) per MW of critical load (DC 4.6 [R25]); the equipment-priced plant of a 16K H100
    build (plant and fit-out lines) lands inside it."""
    s = scenario(catalog, 16_384)
    d = design(s, catalog, None)
    eco = economics(s, catalog, None, d)
    per_mw = (eco.capex_plant_usd + eco.capex_fitout_usd) / (d.power.it_kw / 1000.0)
    assert low <= per_mw <= high


def test_lease_buys_fit_out_not_plant(catalog):
    s = scenario(catalog, 16)
    d = design(s, catalog, None)
    eco = economics(s, catalog, None, d)
    assert eco.facility == "lease" and eco.capex_plant_usd == 0.0
    descr = [ln.description for ln in vendor_bom(d, eco)]
    assert any("rack PDU" in x for x in descr) and not any("generator" in x for x in descr)
