"""Bill of materials: one line per item with quantity, unit price and source.

Prices come from the catalog (``price_usd`` with ``price_source``/``price_as_of``), or for parts
the catalog has no entry for (UFM appliance, head nodes, rack PDUs, CDUs, rack enclosures) from
a design rule's estimate (:func:`rule_price`, which says how it was estimated). A line without
a price has ``unit_usd = total_usd = None`` and ``priced = False``; its ``source`` says why.
Facility plant (UPS, generators, CRAHs, floor) is listed with quantities but left unpriced on
purpose: economics prices the facility per MW of critical load from its cost book, which
already includes that plant, and :mod:`clustertwin.economics.bom` splits that figure into
vendor lines.
"""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES = ("compute", "network", "storage", "power", "cooling", "facility", "other")
FACILITY_NOTE = "unpriced: part of facility cost per MW (economics cost book)"


@dataclass(frozen=True)
class BomLine:
    category: str              #: compute | network | storage | power | cooling | facility | other
    item: str
    catalog_id: str | None
    quantity: float
    unit_usd: float | None
    total_usd: float | None
    source: str

    @property
    def priced(self) -> bool:
        return self.total_usd is not None

    def to_dict(self) -> dict:
        return {"category": self.category, "item": self.item, "catalog_id": self.catalog_id,
                "quantity": self.quantity, "unit_usd": self.unit_usd,
                "total_usd": self.total_usd, "priced": self.priced, "source": self.source}


def line(category: str, item: str, quantity: float, entry=None, *, catalog_id: str | None = None,
         note: str | None = None) -> BomLine:
    """A BOM line priced from a catalog entry when it has a price."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown BOM category {category!r}")
    cid = catalog_id if catalog_id is not None else getattr(entry, "id", None)
    price = getattr(entry, "price_usd", None)
    if price is not None and note is None:
        src = f"{entry.price_source} ({entry.price_as_of})".strip()
        return BomLine(category, item, cid, quantity, float(price), float(price) * quantity, src)
    if note is None:
        note = (f"unpriced: no price in catalog entry {cid!r}" if cid
                else "unpriced: no catalog entry")
    return BomLine(category, item, cid, quantity, None, None, note)


def rule_price(rules, key: str):
    """A price from design rule ``key`` as a catalog-like entry (``price_usd``, source, date)."""
    from types import SimpleNamespace

    item = rules.items[key]
    return SimpleNamespace(id=None, price_usd=rules.num(key), price_source=item.source,
                           price_as_of=str(getattr(item, "as_of", "") or ""))


def totals(lines: tuple[BomLine, ...]) -> dict[str, float]:
    """Priced total per category (USD)."""
    out = dict.fromkeys(CATEGORIES, 0.0)
    for ln in lines:
        if ln.total_usd is not None:
            out[ln.category] += ln.total_usd
    return out
