"""The bill of materials a vendor can quote: one line per orderable part, priced, summing to
``economics.capex_usd``.

``vendor_bom(design, economics, catalog) -> tuple[VendorLine, ...]``:

* every priced IT line of the design's BOM (compute, network, storage, management), with its
  vendor, part number where the catalog has one, unit and extended price, source and date;
* installation and integration (the cost book's share of IT hardware, as economics counts it);
* a built facility (``economics.facility == "build"``): the cost book's $/MW figure split into
  switchgear, UPS, generators, busway/RPPs, chillers, CRAHs, CDUs, piping, shell, site, fire,
  controls and low-voltage lines (``data/facility_split.yaml``: sourced group shares, judged
  line shares; quantities from the design); a leased facility: the tenant fit-out lines the
  design prices (rack PDUs, CDUs, rack enclosures), as economics counts them.

So the extended prices sum to ``economics.capex_usd`` by construction (the same figures, split
into lines; facility unit prices are rounded to cents, so the sum may differ by cents per line). Text meant for a vendor goes through :func:`vendor_text`, which drops the project's
internal reference tags (``[C]``, ``[S R12]``, ``(DC 4.6 ...)``).
"""

from __future__ import annotations

import re
from dataclasses import astuple, dataclass
from functools import lru_cache
from importlib import resources

import yaml

COLUMNS = ("category", "vendor", "part_number", "description", "quantity", "unit", "unit_usd",
           "total_usd", "source", "as_of")
_VENDORS = ("NVIDIA", "Arista", "Broadcom", "DDN", "VAST", "Dell", "Supermicro", "HPE",
            "Meta", "Cisco", "Juniper", "WEKA", "Pure Storage", "Seagate")
_FACILITY_CATS = ("power", "cooling", "facility")
#: a vendor part / model number in a catalog entry's name (MMA4Z00-NS, QM9700, SN4600C)
_PART_RE = re.compile(r"\b[A-Z]{2,}[0-9][A-Z0-9]*(?:-[A-Z0-9]+)+\b|\b[A-Z]{2}[0-9]{4}[A-Z]?\b")


@dataclass(frozen=True)
class VendorLine:
    category: str
    vendor: str
    part_number: str
    description: str
    quantity: float
    unit: str            #: each | kW | m2 | lot
    unit_usd: float
    total_usd: float
    source: str
    as_of: str

    def row(self) -> tuple:
        return astuple(self)


def vendor_text(text: str) -> str:
    """``text`` without internal reference tags and notes, on one line."""
    out = re.sub(r"\[[^\]]*\]", "", str(text))
    out = re.sub(r"\((?:DC|datacenter-anchors|seed)[^)]*\)", "", out)
    out = re.sub(r"[,;]?\s*(?:DC \d|datacenter-anchors|shared/|seed \d)[^,;)]*", "", out)
    out = re.sub(r"\s+([:;,)])", r"\1", re.sub(r"\s+", " ", out.replace("()", "")))
    out = out.strip(" ;,")
    return out


def _split_as_of(source: str) -> tuple[str, str]:
    """(source, as_of) from a design BOM source ``"... (2025-04)"``."""
    m = re.search(r"\(([^()]*\d{4}[^()]*)\)\s*$", source)
    if m:
        return source[: m.start()].strip(), m.group(1)
    return source, ""


def _vendor(text: str) -> str:
    for v in _VENDORS:
        if v.lower() in text.lower():
            return v
    return "open to quote"


def _part_number(catalog, catalog_id) -> tuple[str, str]:
    """(part number, catalog entry name) of a catalog id ("" where unknown)."""
    if catalog is None or not catalog_id:
        return "", ""
    for kind in ("node", "switch", "transceiver", "cable", "storage"):
        if catalog.has(kind, catalog_id):
            entry = catalog.get(kind, catalog_id)
            name = str(getattr(entry, "name", ""))
            m = _PART_RE.search(name)
            return str(getattr(entry, "part_number", "") or (m.group(0) if m else "")), name
    return "", ""


def _design_lines(design, facility: str, catalog) -> list[VendorLine]:
    out = []
    for ln in design.bom:
        if ln.category in _FACILITY_CATS and (facility != "lease" or not ln.priced):
            continue                  # a built facility's plant is in the $/MW split below
        if not ln.quantity:
            continue
        src, as_of = _split_as_of(ln.source)
        unit = float(ln.unit_usd or 0.0)
        total = float(ln.total_usd or 0.0)
        if not ln.priced:
            src = f"no price found: {src} (counted at $0 in capex; ask for a quote)"
        part, entry_name = _part_number(catalog, ln.catalog_id)
        part = getattr(ln, "part_number", "") or part
        out.append(VendorLine(ln.category, _vendor(f"{ln.item} {entry_name}"), part,
                              vendor_text(ln.item), float(ln.quantity),
                              "m2" if "(m2)" in ln.item else "each", unit, total,
                              vendor_text(src), as_of))
    return out


@lru_cache(maxsize=1)
def facility_split() -> dict:
    text = resources.files("clustertwin.economics").joinpath("data/facility_split.yaml")
    return yaml.safe_load(text.read_text())


def _quantity(design, key: str) -> tuple[float, str]:
    p, c = design.power, design.cooling
    table = {"lot": (1.0, "lot"), "ups_modules": (p.ups_modules, "each"),
             "generators": (p.generators, "each"), "it_kw": (round(p.it_kw, 1), "kW"),
             "heat_kw": (round(p.it_kw, 1), "kW"), "crah_units": (c.crah_units, "each"),
             "cdu_units": (c.cdu_units, "each"),
             "area_m2": (round(design.floor.area_m2, 1), "m2")}
    q, unit = table[key]
    return float(q), unit


def _facility_lines(design, facility_usd: float) -> list[VendorLine]:
    """The facility capex split into vendor lines (see ``data/facility_split.yaml``)."""
    split = facility_split()
    total_share = sum(split["groups"].values())
    out = []
    for group, g_share in split["groups"].items():
        lines = [(ln, *_quantity(design, ln["quantity"])) for ln in split["lines"]
                 if ln["group"] == group]
        lines = [x for x in lines if x[1] > 0]
        inner = sum(ln["share"] for ln, _, _ in lines)
        for ln, q, unit in lines:
            total = facility_usd * g_share / total_share * ln["share"] / inner
            src = (f"estimate: facility build cost per MW of critical IT load x {g_share:g} % "
                   f"{group} ({split['source_groups']}) x this line's share of the group "
                   f"({split['source_lines']})")
            each = round(total / q, 2)          # a quote's unit price, in cents
            out.append(VendorLine(ln["category"], "open to quote", "", ln["description"], q, unit,
                                  each, round(each * q, 2), src, str(split["as_of"])))
    return out


def vendor_bom(design, economics, catalog=None) -> tuple[VendorLine, ...]:
    """Priced vendor lines whose ``total_usd`` sum to ``economics.capex_usd``."""
    cap = economics.capex_by_category_usd
    out = _design_lines(design, economics.facility, catalog)
    if cap.get("integration", 0.0):
        out.append(VendorLine("services", "open to quote", "",
                              "installation, racking, cabling, burn-in and acceptance testing",
                              1.0, "lot", cap["integration"], cap["integration"],
                              "estimate: a share of IT hardware capex (cost book integration_frac)",
                              "2025"))
    if economics.facility == "build" and cap.get("facility", 0.0):
        out += _facility_lines(design, cap["facility"])
    return tuple(out)


def bom_csv(lines) -> str:
    """``bom.csv``: a header of :data:`COLUMNS` and one row per line (prices in USD)."""
    import io

    from clustertwin.quoting import csv_writer

    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(COLUMNS)
    for ln in lines:
        r = list(ln.row())
        r[4], r[6], r[7] = _num(r[4]), f"{r[6]:.2f}", f"{r[7]:.2f}"
        w.writerow(r)
    return buf.getvalue()


def _num(q: float) -> str:
    return str(int(q)) if float(q).is_integer() else f"{q:.1f}"
