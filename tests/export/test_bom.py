"""The vendor bill of materials (issue 22): every line priced, extended prices summing to
``economics.capex_usd`` (within 1 %), ``bom.xlsx`` holding the same lines with formula totals,
power / cooling / facility as separate lines, and no internal reference notes."""

from __future__ import annotations

import csv
import io

import pytest

from clustertwin.economics import economics
from clustertwin.economics.bom import COLUMNS, vendor_text
from clustertwin.export.bom_files import bom_files, bom_lines
from clustertwin.export.stage import make_context
from export.helpers import catalog, scenario

CASES = [("1024-h100", 1024, {}), ("16k-h100", 16_384, {}),
         ("1008-gb200", 1008, {"node": "gb200-nvl72", "gpu": "gb200"}),
         ("16-h100-lease", 16, {})]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def ctx(request):
    _, gpus, cluster = request.param
    return make_context(scenario(gpus, **cluster), catalog())


def test_csv_lines_are_priced_and_sum_to_capex(ctx):
    files, warnings = bom_files(ctx)
    assert warnings == []
    rows = list(csv.DictReader(io.StringIO(files["bom.csv"])))
    assert tuple(rows[0]) == COLUMNS
    for r in rows:
        assert r["unit_usd"] and r["total_usd"] and r["source"] and r["unit"]
        assert float(r["total_usd"]) == pytest.approx(float(r["quantity"]) * float(r["unit_usd"]),
                                                      rel=1e-6, abs=0.02)
    eco = economics(ctx.scenario, ctx.catalog, None, ctx.design)
    assert sum(float(r["total_usd"]) for r in rows) == pytest.approx(eco.capex_usd, rel=0.01)
    assert all(float(r["unit_usd"]) > 0 for r in rows)


def test_power_and_cooling_are_lines_not_one_number(ctx):
    lines, eco = bom_lines(ctx)
    cats = {ln.category for ln in lines}
    if eco.facility == "build":
        power = [ln.description for ln in lines if ln.category == "power"]
        assert any("UPS" in d for d in power) and any("switchgear" in d for d in power)
        assert any("busway" in d for d in power)
        assert {"cooling", "facility"} <= cats
    else:                                     # leased: the tenant fit-out the design prices
        assert any("rack PDU" in ln.description for ln in lines)


def test_xlsx_opens_with_the_same_lines(ctx):
    openpyxl = pytest.importorskip("openpyxl")
    files, _ = bom_files(ctx)
    wb = openpyxl.load_workbook(io.BytesIO(files["bom.xlsx"]))
    rows = list(csv.DictReader(io.StringIO(files["bom.csv"])))
    seen = []
    for ws in wb.worksheets[1:]:
        body = list(ws.iter_rows(min_row=2, values_only=True))
        assert body[-1][0] == "total" and str(body[-1][7]).startswith("=SUM(")
        for i, r in enumerate(body[:-1], start=2):
            assert r[7] == f"=E{i}*G{i}"            # extended price is a formula
            seen.append((ws.title, r[3], float(r[4])))
    assert sorted(seen) == sorted((r["category"], r["description"], float(r["quantity"]))
                                  for r in rows)
    summary = [r for r in wb["summary"].iter_rows(values_only=True)]
    assert summary[-1][0] == "capex_usd" and summary[-1][1].startswith("=SUM(")


def test_vendor_text_drops_internal_notes():
    s = "derived [C] from X (Aug 2024, datacenter-anchors.md section 5); seed 003 step 4"
    out = vendor_text(s)
    assert "[C]" not in out and "datacenter-anchors" not in out and "seed 003" not in out
    assert out.startswith("derived from X")


def test_bom_csv_has_no_internal_notes(ctx):
    text = bom_files(ctx)[0]["bom.csv"]
    for tag in ("[C]", "[S", "[P", "datacenter-anchors", "DC 4", "unpriced"):
        assert tag not in text


def test_without_openpyxl_the_csv_is_written_and_the_gap_named(monkeypatch):
    import clustertwin.export.bom_files as bf

    def missing(lines):
        raise ImportError("No module named 'openpyxl'")

    monkeypatch.setattr(bf, "bom_xlsx", missing)
    files, warnings = bf.bom_files(make_context(scenario(16), catalog()))
    assert set(files) == {"bom.csv"}
    assert len(warnings) == 1 and "clustertwin[xlsx]" in warnings[0]


def test_bom_xlsx_is_the_same_bytes_for_the_same_design():
    """No export time inside the workbook: its document dates and zip member times are fixed,
    so two exports of one design are byte-identical, and it still opens with its sheets."""
    pytest.importorskip("openpyxl")
    import zipfile

    import openpyxl

    from clustertwin.export import bom_files as bf

    lines, _ = bf.bom_lines(make_context(scenario(256), catalog()))
    first = bf.bom_xlsx(lines)
    assert bf.bom_xlsx(lines) == first
    with zipfile.ZipFile(io.BytesIO(first)) as z:
        assert {i.date_time for i in z.infolist()} == {bf.FIXED_TIME}
    wb = openpyxl.load_workbook(io.BytesIO(first))
    assert wb.sheetnames[0] == "summary"
    assert (wb.properties.created.year, wb.properties.modified.year) == (1980, 1980)
