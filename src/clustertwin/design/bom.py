"""Bill of materials: one line per orderable item with quantity, unit price, part number, source
and date; economics counts these lines and nothing else (``economics.capex_usd`` is their sum
plus the integration services line), and every bill the user sees (``plan.html``, the web app,
``bom.csv``, ``bom.xlsx``) is :func:`clustertwin.economics.bom.vendor_bom` of them.

Prices come from the catalog (``price_usd`` with ``price_source``/``price_as_of``): IT parts from
their entries (GPU servers moved to the purchase date along their generation's price curve,
:mod:`clustertwin.catalog.pricing`), facility plant from ``equipment`` entries sized by the
design (:mod:`clustertwin.design.plant`), or, for parts the catalog has no entry for (UFM
appliance, head nodes), from a design rule's estimate (:func:`rule_price`). A line without a
price has ``unit_usd = total_usd = None``; its ``source`` says why.

``scope`` says who buys a line: ``it`` (the cluster), ``fit-out`` (what a tenant adds to a
hall: rack PDUs, enclosures, rear doors, CDUs) or ``plant`` (the building and its power and
cooling plant, bought only when the facility is built).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

CATEGORIES = ("compute", "network", "storage", "power", "cooling", "facility", "other")
SCOPES = ("it", "fit-out", "plant")
#: makers recognised in an entry's name when it carries no ``vendor``
VENDORS = ("NVIDIA", "Arista", "Broadcom", "DDN", "VAST", "Dell", "Supermicro", "HPE", "Meta",
           "Cisco", "Juniper", "WEKA", "Pure Storage", "Seagate", "Vertiv", "Caterpillar",
           "Motivair", "Raritan", "Schneider", "AMD")
#: a vendor part / model number in a catalog entry's name (MMA4Z00-NS, QM9700, SN4600C)
_PART_RE = re.compile(r"\b[A-Z]{2,}[0-9][A-Z0-9]*(?:-[A-Z0-9]+)+\b|\b[A-Z]{2}[0-9]{4}[A-Z]?\b")


@dataclass(frozen=True)
class BomLine:
    """One line of the bill of materials: a part, its quantity and its price."""

    category: str              #: compute | network | storage | power | cooling | facility | other
    item: str
    catalog_id: str | None
    quantity: float
    unit_usd: float | None
    total_usd: float | None
    source: str
    part_number: str = ""      #: manufacturer part number or named configuration
    as_of: str = ""            #: date of the unit price (the purchase date for a dated price)
    part_number_reason: str = ""   #: why there is no public part number
    vendor: str = ""
    unit: str = "each"         #: each | lot | MW | m2
    scope: str = "it"          #: it | fit-out | plant (see the module docstring)

    @property
    def priced(self) -> bool:
        return self.total_usd is not None

    def to_dict(self) -> dict:
        return {"category": self.category, "item": self.item, "catalog_id": self.catalog_id,
                "quantity": self.quantity, "unit_usd": self.unit_usd,
                "total_usd": self.total_usd, "priced": self.priced, "source": self.source,
                "part_number": self.part_number, "part_number_reason": self.part_number_reason,
                "as_of": self.as_of, "vendor": self.vendor, "unit": self.unit,
                "scope": self.scope}


def part_number(entry) -> tuple[str, str]:
    """(part number, reason there is none) of a catalog entry: its ``part_number``, else a model
    number in its name, else its ``part_number_reason``."""
    pn = str(entry.part_number or "")
    if not pn:
        m = _PART_RE.search(str(entry.name))
        pn = m.group(0) if m else ""
    reason = "" if pn else str(entry.part_number_reason or "")
    return pn, reason


@dataclass(frozen=True)
class Terms:
    """How a BOM line is bought when not simply at its catalog entry's price: a dated or sized
    ``unit_usd`` (and the ``as_of`` date of it) instead of the entry's, who buys it (``scope``:
    it | fit-out | plant) and what one unit is (``unit``)."""

    unit_usd: float | None = None
    as_of: str | None = None
    scope: str = "it"
    unit: str = "each"


def line(category: str, item: str, quantity: float, entry=None, *, catalog_id: str | None = None,
         terms: Terms = Terms()) -> BomLine:
    """A BOM line priced from a catalog entry when it has a price (``terms`` may override it:
    a dated or sized price), with the entry's part number."""
    unit_usd, as_of, scope, unit = terms.unit_usd, terms.as_of, terms.scope, terms.unit
    if category not in CATEGORIES:
        raise ValueError(f"unknown BOM category {category!r}")
    if scope not in SCOPES:
        raise ValueError(f"unknown BOM scope {scope!r}")
    pn, reason = part_number(entry) if entry is not None else ("", "")
    entry = entry if entry is not None else NO_ENTRY
    cid = catalog_id if catalog_id is not None else entry.id
    # only some catalog kinds carry a vendor (GPU, equipment, a rule's price); a switch, cable,
    # node or storage entry names its maker in its name
    vendor = str(getattr(entry, "vendor", "") or "") or vendor_in(f"{entry.name} {item} {pn}")
    price = unit_usd if unit_usd is not None else entry.price_usd
    if price is not None:
        date = as_of if as_of is not None else str(entry.price_as_of or "")
        src = str(entry.price_source or "")
        return BomLine(category, item, cid, quantity, float(price), float(price) * quantity,
                       src, pn, date, reason, vendor, unit, scope)
    note = (f"unpriced: no price in catalog entry {cid!r}" if cid
            else "unpriced: no catalog entry")
    return BomLine(category, item, cid, quantity, None, None, note, pn,
                   str(entry.as_of or ""), reason or "no catalog entry names it",
                   vendor, unit, scope)


def vendor_in(text: str) -> str:
    """The first known maker named in ``text`` ("" when none is)."""
    low = text.lower()
    return next((v for v in VENDORS if v.lower() in low), "")


@dataclass(frozen=True)
class RulePrice:
    """A price that is not a catalog entry's (a design rule's estimate), with the fields of a
    priced catalog entry that :func:`line` reads."""

    id: str | None = None
    name: str = ""
    price_usd: float | None = None
    price_source: str = ""
    price_as_of: str = ""
    as_of: str = ""
    part_number: str = ""
    part_number_reason: str = ""
    vendor: str = ""


#: what :func:`line` reads when a line has no catalog entry
NO_ENTRY = RulePrice()


def rule_price(rules, key: str, *, part_number: str = "", reason: str = "") -> RulePrice:
    """A price from design rule ``key`` as a catalog-like entry (``price_usd``, source, date)."""
    item = rules.items[key]
    date = str(item.as_of or "")
    return RulePrice(price_usd=rules.num(key), price_source=item.source, price_as_of=date,
                     as_of=date, part_number=part_number, part_number_reason=reason)


def totals(lines: tuple[BomLine, ...]) -> dict[str, float]:
    """Priced total per category (USD)."""
    out = dict.fromkeys(CATEGORIES, 0.0)
    for ln in lines:
        if ln.total_usd is not None:
            out[ln.category] += ln.total_usd
    return out


def node_line(catalog, node, nodes: int, purchase) -> BomLine:
    """The GPU servers, priced at the purchase date along their generation's price curve."""
    from clustertwin.catalog.pricing import price_at

    item = f"{node.name} (NICs included)"
    if node.price_usd is None:
        return line("compute", item, nodes, node)
    gen = catalog.gpu(node.gpu).generation if catalog.has("gpu", node.gpu) else None
    dated = price_at(catalog, gen, node.price_usd, node.price_as_of, purchase)
    ln = line("compute", item, nodes, node, terms=Terms(unit_usd=round(dated.usd, 2), as_of=dated.as_of))
    if dated.note:
        ln = replace(ln, source=f"{ln.source}; {dated.note}")
    return ln


def storage_lines(catalog, storage) -> list[BomLine]:
    """Each shared storage tier as a system: its building blocks and usable capacity."""
    names = {"pfs": "all-flash parallel file system", "object": "object store"}
    out = []
    for t in storage.tiers:
        if t.system_id is None:
            continue
        entry = catalog.get("storage", t.system_id) if catalog.has("storage", t.system_id) else None
        label = names.get(t.tier, t.tier)
        out.append(line("storage", f"{label}: {t.blocks:,} building blocks, "
                          f"{t.capacity_tb / 1000:,.2f} PB usable", t.blocks, entry,
                          catalog_id=t.system_id))
    return out
