"""Price by purchase date (issue 37): a GPU generation's new-part price by product age, from
sourced curves (catalog/data/price_curves.yaml), and the BOM's GPU servers priced with it."""

from __future__ import annotations

import datetime as dt

import pytest

from clustertwin.catalog.pricing import age_years, as_date, curve_for, fraction, price_at
from clustertwin.design import design
from clustertwin.scenario import with_updates
from design.helpers import scenario


@pytest.mark.parametrize("gen", ["ampere", "hopper", "blackwell"])
def test_each_generation_has_a_sourced_non_increasing_curve(catalog, gen):
    c = curve_for(catalog, gen)
    assert c is not None and c.source and c.as_of and c.launch
    fr = [f for _, f in c.points]
    assert fr[0] == 1.0 and all(b <= a for a, b in zip(fr, fr[1:], strict=False))


def test_fraction_holds_steps_and_stays_flat():
    pts = [(0, 1.0), (2.0, 1.0), (2.5, 0.75), (4.0, 0.5)]
    assert fraction(pts, -1.0) == 1.0                   # not cheaper before it ships
    assert fraction(pts, 1.0) == 1.0
    assert fraction(pts, 2.25) == pytest.approx(0.875)  # linear inside the step
    assert fraction(pts, 10.0) == 0.5                   # flat past the last point


def test_dates_read_as_documented():
    assert as_date("2024") == dt.date(2024, 7, 1)
    assert as_date("2024-08") == dt.date(2024, 8, 15)
    assert age_years("2022-09", "2023-09") == pytest.approx(1.0, abs=0.01)


def test_price_moves_by_the_ratio_of_the_curve(catalog):
    """Hopper: quoted at age 0.7 (full list), bought at age 4.3 -> the curve's 4.3-year value."""
    c = curve_for(catalog, "hopper")
    p = price_at(catalog, "hopper", 100_000.0, "2023-05", dt.date(2027, 1, 5))
    expect = fraction(c.points, age_years(c.launch, "2027-01-05"))
    assert p.factor == pytest.approx(expect) and p.usd == pytest.approx(100_000 * expect)
    assert p.as_of == "2027-01-05" and "hopper-new-price" in p.note
    same = price_at(catalog, "hopper", 100_000.0, "2024-08", "2024-08")
    assert same.usd == 100_000.0


def test_a_part_without_a_curve_keeps_its_quote(catalog):
    p = price_at(catalog, "cdna3", 50_000.0, "2025", dt.date(2030, 1, 1))
    assert (p.usd, p.as_of, p.note) == (50_000.0, "2025", "")


def test_bom_prices_gpu_servers_at_the_purchase_date(catalog):
    """The default's DGX H100 list ($270k, 2023-05) bought on buildout.start_date."""
    early = with_updates(scenario(catalog, 1024), buildout={"start_date": dt.date(2023, 6, 1)})
    late = with_updates(scenario(catalog, 1024), buildout={"start_date": dt.date(2027, 1, 5)})
    a, b = (design(s, catalog, None).bom[0] for s in (early, late))
    assert a.unit_usd == pytest.approx(270_000.0) and a.as_of == "2023-06-01"
    assert b.unit_usd < 0.6 * a.unit_usd and b.as_of == "2027-01-05"
    assert "hopper-new-price" in b.source
