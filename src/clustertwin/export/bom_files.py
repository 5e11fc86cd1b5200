"""``bom.csv`` and ``bom.xlsx``: the vendor bill of materials
(:func:`clustertwin.economics.bom.vendor_bom`) as files.

``bom.xlsx`` (openpyxl, the optional ``xlsx`` extra, imported here only) has one sheet per
category with the CSV's columns, each extended price a formula (quantity x unit price) and a
total row (``SUM``), and a ``summary`` sheet whose per-category totals point at those total
cells and add up to the capex. Without openpyxl the export writes ``bom.csv`` and says why
``bom.xlsx`` is missing. The workbook is the same bytes for the same design: its document
dates and its zip members' times are fixed (:data:`FIXED_TIME`), not the time of the export.
"""

from __future__ import annotations

import io
import re
import zipfile

from clustertwin.economics.bom import COLUMNS, bom_csv, vendor_bom

_USD = '"$"#,##0.00'
#: the workbook's created / modified date and its zip members' time (zip's earliest is 1980)
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_CORE_DATES = re.compile(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(</dcterms:)")


def bom_lines(ctx):
    """The vendor BOM of an export context (economics from the same design)."""
    from clustertwin.economics import economics

    eco = economics(ctx.scenario, ctx.catalog, None, ctx.design)
    return vendor_bom(ctx.design, eco, ctx.catalog), eco


def bom_files(ctx) -> tuple[dict[str, str | bytes], list[str]]:
    lines, _ = bom_lines(ctx)
    files: dict[str, str | bytes] = {"bom.csv": bom_csv(lines)}
    try:
        files["bom.xlsx"] = bom_xlsx(lines)
    except ImportError:
        return files, ["bom.xlsx not written: openpyxl is not installed "
                       "(pip install 'clustertwin[xlsx]')"]
    return files, []


def bom_xlsx(lines) -> bytes:
    """The workbook as bytes (see the module docstring)."""
    from openpyxl import Workbook
    from openpyxl.styles import Font

    wb = Workbook()
    summary = wb.active
    summary.title = "summary"
    summary.append(["category", "total_usd"])
    cats = list(dict.fromkeys(ln.category for ln in lines))
    for cat in cats:
        ws = wb.create_sheet(cat[:31])
        ws.append(list(COLUMNS))
        for cell in ws[1]:
            cell.font = Font(bold=True)
        rows = [ln for ln in lines if ln.category == cat]
        for i, ln in enumerate(rows, start=2):
            _data_row(ws, i, ln.row())
            ws.cell(i, 8, f"=E{i}*G{i}")   # our formula over the row's own numbers
            ws.cell(i, 7).number_format = _USD
            ws.cell(i, 8).number_format = _USD
        end = len(rows) + 1
        ws.append(["total"] + [None] * 6 + [f"=SUM(H2:H{end})"])
        ws.cell(end + 1, 8).number_format = _USD
        ws.cell(end + 1, 1).font = Font(bold=True)
        summary.append([cat, f"='{ws.title}'!H{end + 1}"])
    n = len(cats) + 1
    summary.append(["capex_usd", f"=SUM(B2:B{n})"])
    for r in range(2, n + 2):
        summary.cell(r, 2).number_format = _USD
    buf = io.BytesIO()
    wb.save(buf)
    return _reproducible(buf.getvalue())


def _data_row(ws, row: int, values) -> None:
    """One row of catalog and design values: each through the spreadsheet rule
    (:func:`clustertwin.quoting.spreadsheet_cell`); text is stored as a string cell
    (``data_type 's'``), never a formula, whatever it starts with."""
    from clustertwin.quoting import spreadsheet_cell

    for col, value in enumerate(values, start=1):
        v = spreadsheet_cell(value)
        cell = ws.cell(row, col)
        cell.value = v
        if isinstance(v, str):
            cell.data_type = "s"


def _reproducible(xlsx: bytes) -> bytes:
    """The workbook with its dates and member times fixed (same design, same bytes)."""
    out = io.BytesIO()
    stamp = "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}Z".format(*FIXED_TIME).encode()
    with zipfile.ZipFile(io.BytesIO(xlsx)) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "docProps/core.xml":
                data = _CORE_DATES.sub(lambda m: m.group(1) + stamp + m.group(2), data)
            member = zipfile.ZipInfo(info.filename, date_time=FIXED_TIME)
            member.compress_type = zipfile.ZIP_DEFLATED
            member.external_attr = info.external_attr
            dst.writestr(member, data)
    return out.getvalue()
