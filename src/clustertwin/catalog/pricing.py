"""A part's price at a purchase date, from a sourced price-by-age curve of its GPU generation.

The catalog records a price with the date it was quoted (``price_usd`` at ``price_as_of``). A
server of a GPU generation is cheaper when bought late in its life: the list price holds while
the generation is current, steps down when the next one ships and then follows the secondary
market (catalog kind ``price_curve``, ``data/price_curves.yaml``, one curve per generation with
its launch date). This module moves a quoted price to a purchase date::

    price(P) = price(Q) x f(age at P) / f(age at Q)

where ``f`` is the curve (fraction of the launch-era list price, linear between its points,
flat past the last one and 1.0 before launch) and ages are years since the curve's ``launch``.
A part without a curve (switches, optics, facility plant) keeps its quoted price.

Used by the design's bill of materials (purchase date = ``buildout.start_date``) and meant to
be reused by any stage that prices hardware at another date (the decision's resale, for one):
:func:`price_at` is the whole interface; :func:`curve_for` and :func:`fraction` are its parts.
Pure, no I/O; dates are ``datetime.date`` or catalog ``as_of`` text (YYYY, YYYY-MM, YYYY-MM-DD;
a year reads as its 1 July, a month as its 15th).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

DAYS_PER_YEAR = 365.25


@dataclass(frozen=True)
class DatedPrice:
    """A price moved to a purchase date."""

    usd: float
    as_of: str          #: the purchase date (ISO), or the quote's date when no curve applies
    factor: float       #: usd / quoted price
    note: str           #: how the price was moved ("" when it was not)


def as_date(value: Any) -> dt.date:
    """A ``date`` from a date or catalog ``as_of`` text; a year is its 1 July, a month its 15th."""
    if isinstance(value, dt.date):
        return value
    text = str(value).strip()
    parts = [int(p) for p in text.split("-")]
    if len(parts) == 1:
        return dt.date(parts[0], 7, 1)
    if len(parts) == 2:
        return dt.date(parts[0], parts[1], 15)
    return dt.date(parts[0], parts[1], parts[2])


def age_years(launch: Any, when: Any) -> float:
    """Years from ``launch`` to ``when`` (negative before launch)."""
    return (as_date(when) - as_date(launch)).days / DAYS_PER_YEAR


def fraction(points: list[tuple[float, float]], age: float) -> float:
    """The curve's price fraction at ``age`` years: linear between points, flat past the last,
    1.0 before launch (a part is not cheaper before it ships)."""
    import numpy as np

    if age <= 0:
        return 1.0
    ages = np.array([0.0] + [a for a, _ in points if a > 0])
    fr = np.array([1.0] + [f for a, f in points if a > 0])
    return float(np.interp(age, ages, fr))


def curve_for(catalog: Any, generation: str | None) -> Any | None:
    """The ``price_curve`` entry of a GPU generation (lowest id first), else None."""
    if not generation or "price_curve" not in catalog.kinds():
        return None
    return next((c for c in catalog.all("price_curve") if c.generation == generation), None)


def price_at(catalog: Any, generation: str | None, usd: float, quoted: str,
             purchase: Any) -> DatedPrice:
    """``usd`` quoted at ``quoted`` moved to the ``purchase`` date along the generation's
    curve; unchanged (with the quote's date) when there is no curve or no quote date."""
    curve = curve_for(catalog, generation)
    if curve is None or not quoted or purchase is None:
        return DatedPrice(float(usd), str(quoted or ""), 1.0, "")
    a_q, a_p = age_years(curve.launch, quoted), age_years(curve.launch, purchase)
    factor = fraction(curve.points, a_p) / fraction(curve.points, a_q)
    when = as_date(purchase).isoformat()
    note = (f"quoted {quoted} (age {max(a_q, 0):.1f} y), bought {when} (age {max(a_p, 0):.1f} y):"
            f" x{factor:.2f} along {curve.id}")
    return DatedPrice(float(usd) * factor, when, factor, note)
