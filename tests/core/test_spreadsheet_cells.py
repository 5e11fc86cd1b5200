"""One escaping rule for every spreadsheet cell (issue 31): text that a spreadsheet would run
(a leading ``= + - @``, tab, CR, LF or a full-width lookalike) is written with a leading
``'`` in every CSV and XLSX the product writes; numbers stay numbers; XLSX text cells are
string cells, never formulas. Files are read back with ``csv`` and ``openpyxl``."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustertwin.quoting import FORMULA_START, csv_field, spreadsheet_cell

ROOT = Path(__file__).resolve().parents[2]
#: formula starts and their lookalikes, CSV syntax, controls and ordinary text
BITS = ["=", "+", "-", "@", "\t", "\r", "\n", " ", "\u3000", "\uff1d", "\uff0b", "\uff0d",
        "\uff20", "\ufe66", "\u2212", "HYPERLINK(\"http://evil\",\"x\")", "cmd|' /C calc'!A0",
        "SUM(A1:A9)", ",", '"', "'", "\x00", "\x01", "\x1b", "1", "1.5", "e3", "a", "é",
        "\u202e", ";", "DDE(", "!"]
hostile = st.lists(st.sampled_from(BITS), min_size=1, max_size=8).map("".join)
FAST = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _runs(cell: object) -> bool:
    """Would a spreadsheet read this cell text as a formula (or DDE call)?"""
    if not isinstance(cell, str) or _NUMBER.fullmatch(cell):
        return False
    return cell[:1] in FORMULA_START or cell.lstrip()[:1] in FORMULA_START


@pytest.mark.parametrize(("value", "cell"), [
    ("=1+1", "'=1+1"), (" =1+1", "' =1+1"), ("\n=1", "'\n=1"), ("\uff1dSUM(A1)", "'\uff1dSUM(A1)"),
    ("\u2212cmd", "'\u2212cmd"), ("-inf", "'-inf"), ("-1_0", "'-1_0"), ("-1e5", "-1e5"),
    ("a\x01b", "a\ufffdb"), (1.5, 1.5), (-3, -3), ("plain", "plain"), ("'=x", "'=x")])
def test_the_rule_on_examples(value, cell):
    assert spreadsheet_cell(value) == cell


@FAST
@given(hostile)
def test_no_cell_runs_and_the_text_is_kept(s):
    cell = spreadsheet_cell(s)
    assert not _runs(cell)
    assert spreadsheet_cell(cell) == cell                    # once is enough
    kept = re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f]", "\ufffd", s)
    assert cell in (kept, "'" + kept)


@FAST
@given(st.lists(hostile, min_size=1, max_size=6))
def test_csv_fields_read_back_as_the_cells(row):
    """``csv_field`` (the fast paths' joined rows) reads back with ``csv`` as the cells."""
    text = ",".join(csv_field(v) for v in row) + "\n"
    (back,) = list(csv.reader(io.StringIO(text)))
    assert back == [spreadsheet_cell(v) for v in row]
    assert not any(_runs(c) for c in back)


def _vendor_lines(texts):
    from clustertwin.economics.bom import VendorLine

    return tuple(VendorLine(cat, t, t, t, 2.0, "each", 10.0, 20.0, t, t)
                 for cat, t in zip(("compute", "network", "compute"), texts, strict=False))


#: the workbook's own formulas: extended price, category total, summary links and capex
_OURS = re.compile(r"=E\d+\*G\d+|=SUM\([BH]2:[BH]\d+\)|='[a-z0-9 -]+'!H\d+")


@FAST
@given(st.lists(hostile, min_size=1, max_size=3))
def test_bom_csv_and_xlsx_carry_hostile_text_as_text(texts):
    pytest.importorskip("openpyxl")
    import openpyxl

    from clustertwin.economics.bom import bom_csv
    from clustertwin.export.bom_files import bom_xlsx

    lines = _vendor_lines(texts)
    rows = list(csv.reader(io.StringIO(bom_csv(lines))))[1:]
    assert len(rows) == len(lines)
    for r, t in zip(rows, texts, strict=True):
        assert r[2] == spreadsheet_cell(t) and not any(_runs(c) for c in r)
        assert float(r[7]) == 20.0                             # numbers stay numbers
    wb = openpyxl.load_workbook(io.BytesIO(bom_xlsx(lines)))
    for ws in wb.worksheets:
        for cells in ws.iter_rows():
            for c in cells:
                if c.data_type == "f":
                    assert _OURS.fullmatch(c.value), (ws.title, c.coordinate, c.value)
                elif isinstance(c.value, str):
                    assert c.data_type == "s" and not _runs(c.value)


def test_sweep_csv_escapes_text_and_the_header():
    pa = pytest.importorskip("pyarrow")
    from clustertwin.sweep.table import csv_text

    table = pa.table({"=name": ["=1+2", "@x", "-y", "ok"], "gpus": [8, 16, -4, 2],
                      "cost": [1.5, -2.5, 0.0, 3.0]})
    rows = list(csv.reader(io.StringIO(csv_text(table))))
    assert rows[0][0] == "'=name"
    assert [r[0] for r in rows[1:]] == ["'=1+2", "'@x", "'-y", "ok"]
    assert [r[1] for r in rows[1:]] == ["8", "16", "-4", "2"]
    assert [r[2] for r in rows[1:]] == ["1.5", "-2.5", "0.0", "3.0"]


def test_no_module_makes_its_own_csv_writer():
    """House rule: every CSV the product writes goes through quoting.csv_writer (the one
    spreadsheet rule); a bare csv.writer / DictWriter elsewhere would be a second rule."""
    bad = []
    for p in (ROOT / "src" / "clustertwin").rglob("*.py"):
        if p.name == "quoting.py":
            continue
        text = p.read_text(encoding="utf-8")
        if re.search(r"\bcsv\.(writer|DictWriter)\(", text):
            bad.append(str(p.relative_to(ROOT)))
    assert bad == []


def test_export_bom_with_a_hostile_user_catalog(tmp_path):
    """``export bom`` end to end: a --catalog node whose name, part number and source are
    formulas; bom.csv and bom.xlsx hold them as text."""
    openpyxl = pytest.importorskip("openpyxl")
    cat = tmp_path / "cat"
    cat.mkdir()
    import yaml

    nodes = yaml.safe_load((ROOT / "src/clustertwin/catalog/data/nodes.yaml").read_text())["node"]
    node = dict(next(n for n in nodes if n["id"] == "dgx-h100"))
    node.update(id="evil-node", name='=HYPERLINK("http://evil","NVIDIA DGX")',
                source="+cmd|' /C calc'!A0 (2024)", price_source="@SUM(1+1)*cmd")
    (cat / "nodes.yaml").write_text(yaml.safe_dump({"node": [node]}))
    scen = tmp_path / "s.yaml"
    scen.write_text("schema_version: 1\nname: evil\ncluster:\n  gpu: h100-sxm-80gb\n"
                    "  node: evil-node\n  gpus: 64\n  spare_nodes: 0\n")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "clustertwin.cli", "export", "bom", str(scen),
                        "--catalog", str(cat), "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    text = (out / "bom.csv").read_text()
    rows = list(csv.reader(io.StringIO(text)))
    assert not any(_runs(c) for r in rows for c in r)
    assert any("HYPERLINK" in c for r in rows for c in r)
    wb = openpyxl.load_workbook(out / "bom.xlsx")
    seen = set()
    for ws in wb.worksheets:
        for cells in ws.iter_rows():
            for c in cells:
                if c.data_type == "f":
                    assert _OURS.fullmatch(c.value), c.value
                elif isinstance(c.value, str):
                    seen.add(c.value)
                    assert not _runs(c.value)
    assert any(c.startswith("'=HYPERLINK") for c in seen), sorted(seen)
