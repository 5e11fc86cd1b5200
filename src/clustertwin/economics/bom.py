"""The bill of materials a vendor can quote: one line per orderable part, priced, summing to
``economics.capex_usd``. It is the one bill every output shows: ``plan.html`` and the web app
(:func:`bom_html`), ``bom.csv`` (:func:`bom_csv`) and ``bom.xlsx``.

``vendor_bom(design, economics, catalog) -> tuple[VendorLine, ...]``:

* every line of the design's bill of materials (:mod:`clustertwin.design.bom`) the facility
  buys: IT and tenant fit-out always, the building and its plant only when it is built
  (``economics.facility == "build"``), each with its vendor, part number (or the reason it has
  none), unit and extended price, source and date;
* installation and integration (the cost book's share of IT hardware, as economics counts it);
* a built facility whose design lists no plant: one line at the cost book's $/MW.

So the extended prices sum to ``economics.capex_usd`` by construction (the same lines and the
same figures). Text meant for a vendor goes through :func:`vendor_text`, which drops the
project's internal reference tags (``[C]``, ``[S R12]``, ``(DC 4.6 ...)``).
"""

from __future__ import annotations

import re
from dataclasses import astuple, dataclass

COLUMNS = ("category", "vendor", "part_number", "description", "quantity", "unit", "unit_usd",
           "total_usd", "source", "as_of", "part_number_reason")
@dataclass(frozen=True)
class VendorLine:
    category: str
    vendor: str
    part_number: str
    description: str
    quantity: float
    unit: str            #: each | lot | MW | m2
    unit_usd: float
    total_usd: float
    source: str
    as_of: str
    part_number_reason: str = ""

    def row(self) -> tuple:
        return astuple(self)


def vendor_text(text: str) -> str:
    """``text`` without internal reference tags and notes, on one line."""
    out = re.sub(r"\[[^\]]*\]", "", str(text))
    out = re.sub(r"\((?:DC|DA|datacenter-anchors|seed)[^)]*\)", "", out)
    out = re.sub(r"[,;]?\s*(?:DC \d|DA \d|datacenter-anchors|shared/|seed \d)[^,;)]*", "", out)
    out = re.sub(r"\s+([:;,)])", r"\1", re.sub(r"\s+", " ", out.replace("()", "")))
    out = re.sub(r"(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])", " ", out)   # our keys, in words
    out = out.strip(" ;,")
    return out


def _design_lines(design, facility: str) -> list[VendorLine]:
    out = []
    for ln in design.bom:
        if not ln.quantity or (ln.scope == "plant" and facility != "build"):
            continue
        src = ln.source
        if not ln.priced:
            src = f"no price found: {src} (counted at $0 in capex; ask for a quote)"
        vendor = ln.vendor or "open to quote"
        out.append(VendorLine(ln.category, vendor, ln.part_number, vendor_text(ln.item),
                              float(ln.quantity), ln.unit, float(ln.unit_usd or 0.0),
                              float(ln.total_usd or 0.0), vendor_text(src), ln.as_of,
                              vendor_text(ln.part_number_reason)))
    return out


def vendor_bom(design, economics, catalog=None) -> tuple[VendorLine, ...]:
    """Priced vendor lines whose ``total_usd`` sum to ``economics.capex_usd`` (``catalog`` is
    accepted for callers that pass it; the lines carry everything they need)."""
    cap = economics.capex_by_category_usd
    out = _design_lines(design, economics.facility)
    if cap.get("integration", 0.0):
        out.append(VendorLine("services", "open to quote", "",
                              "installation, racking, cabling, burn-in and acceptance testing",
                              1.0, "lot", cap["integration"], cap["integration"],
                              "estimate: a share of IT hardware capex (the cost book's integration share)",
                              "2025", "services, not a part"))
    listed = sum(ln.total_usd for ln in out if ln.category != "services")
    rest = economics.capex_usd - cap.get("integration", 0.0) - listed
    if economics.facility == "build" and rest > 1.0:     # more than float rounding
        out.append(VendorLine("facility", "open to quote", "",
                              "facility build (shell, power and cooling plant) at the cost "
                              "book's $ per MW of critical IT load", 1.0, "lot", rest, rest,
                              "estimate: the cost book's facility build cost per MW x critical IT MW "
                              "(Cushman & Wakefield Data Center Development Cost Guide 2025)",
                              "2024-10", "a whole building priced per MW: the design lists no "
                              "plant to price by equipment"))
    return tuple(out)


def bom_html(lines) -> str:
    """The bill of materials as an HTML table (plan.html, the web app): the same lines and
    columns as ``bom.csv``, every text through :func:`clustertwin.quoting.html_text`."""
    from clustertwin.quoting import html_text

    head = "".join(f"<th data-col='{c}'>{html_text(c.replace('_usd', ' (USD)').replace('_', ' '))}"
                   "</th>" for c in COLUMNS)
    body = []
    for ln in lines:
        cells = _cells(ln)
        body.append("<tr class='bom-line'>" + "".join(
            f"<td data-col='{c}'>{html_text(v)}</td>" for c, v in zip(COLUMNS, cells, strict=True))
            + "</tr>")
    total = sum(ln.total_usd for ln in lines)
    return (f"<h3>Bill of materials</h3><p>{len(lines)} lines, "
            f"<span class='bom-total'>${total:,.2f}</span> (equals capex)</p>"
            f"<table class='data bom'><tr>{head}</tr>{''.join(body)}</table>")


def _cells(ln) -> list[str]:
    """A line's CSV cells (text as written to ``bom.csv``)."""
    r = list(ln.row())
    r[4], r[6], r[7] = _num(r[4]), f"{r[6]:.2f}", f"{r[7]:.2f}"
    return [str(v) for v in r]


def bom_csv(lines) -> str:
    """``bom.csv``: a header of :data:`COLUMNS` and one row per line (prices in USD)."""
    import io

    from clustertwin.quoting import csv_writer

    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(COLUMNS)
    for ln in lines:
        w.writerow(_cells(ln))
    return buf.getvalue()


def _num(q: float) -> str:
    """A quantity as written: an integer, else up to three decimals (MW of critical load)."""
    return str(int(q)) if float(q).is_integer() else f"{q:.3f}".rstrip("0").rstrip(".")
