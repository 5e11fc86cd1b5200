"""One bill of materials (issue 37): plan.html's table is bom.csv line by line, the web app
shows the same table, and the lines sum to ``economics.capex_usd``."""

from __future__ import annotations

import csv
import html
import io
import re

from clustertwin.economics.bom import COLUMNS

ROW = re.compile(r"<tr class='bom-line'>(.*?)</tr>", re.S)
CELL = re.compile(r"<td data-col='([a-z_]+)'>(.*?)</td>", re.S)


def _page_rows(page: str) -> list[dict[str, str]]:
    return [{c: html.unescape(v) for c, v in CELL.findall(r)} for r in ROW.findall(page)]


def test_plan_html_bom_is_bom_csv_line_by_line(default_plan, catalog):
    from clustertwin.export.bom_files import bom_files
    from clustertwin.export.stage import make_context
    from clustertwin.report.html import render

    page_rows = _page_rows(render(default_plan, drawings={}))
    files, _ = bom_files(make_context(default_plan.scenario, catalog))
    csv_rows = list(csv.DictReader(io.StringIO(files["bom.csv"])))
    assert len(page_rows) == len(csv_rows) > 20
    for p, c in zip(page_rows, csv_rows, strict=True):
        assert tuple(p) == COLUMNS
        assert p == c
    total = sum(float(r["total_usd"]) for r in csv_rows)
    assert abs(total - default_plan.economics.capex_usd) < 0.01 * len(csv_rows)


def test_web_app_shows_the_same_table(default_plan, catalog):
    from clustertwin.report import views
    from clustertwin.serve.answer import sections

    design = next(s for s in sections(default_plan, catalog) if s["name"] == "design")
    where = views.Where(default_plan.scenario, catalog, default_plan.economics)
    assert views.html(default_plan.design, where) in design["extra"]
