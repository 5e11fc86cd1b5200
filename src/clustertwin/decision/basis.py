"""The two cost bases every route is priced on (``decision.basis``).

*usage* (the industry TCO view: "the cost to train model X"): each route pays for the
capacity-time the run uses. Owned hardware and facility are charged a capital-recovery charge,
``capex x CRF(rate, life)`` per year of use, where ``CRF = r / (1 - (1 + r) ** -n)`` is the
annuity that repays ``capex`` with interest at ``r`` over ``n`` years (``1 / n`` at r = 0), plus
their O&M and rent for the days used; rented capacity is charged at its rate for the time used.

*exit* (the run is the reason for the purchase): every commitment is paid (a lease's and a
colocation contract's minimum term) and owned hardware is sold after the run at its market value
by product age (the generation's price-by-age curve, :mod:`clustertwin.catalog.pricing`), less a
bulk-disposal haircut.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

DAYS_PER_YEAR = 365.25


def crf(rate: float, years: float) -> float:
    """Capital-recovery factor: the yearly payment that repays 1 over ``years`` at ``rate``."""
    years = max(years, 1e-9)
    if rate <= 0:
        return 1.0 / years
    return rate / (1.0 - (1.0 + rate) ** -years)


def recovery_usd(capex: float, rate: float, life_years: float, days: float) -> float:
    """The capital-recovery charge of ``capex`` for ``days`` of use."""
    return capex * crf(rate, life_years) * max(days, 0.0) / DAYS_PER_YEAR


def market_fraction(catalog: Any, generation: str, bought: _dt.date, sold: _dt.date,
                    haircut: float, holding_curve: Sequence[float] | None = None) -> float:
    """What owned hardware bought on ``bought`` fetches on ``sold``, as a fraction of its price:
    the generation's price-by-age curve at the product's age at sale over its age at purchase
    (a user's ``decision.residual_frac_per_year`` replaces it with a curve by years held), less
    the disposal haircut. Without a curve for the generation, the value holds (less the haircut).
    Remembered per arguments: the route Monte Carlo prices each route a dozen times over the
    same purchase and sale dates."""
    curve = tuple(holding_curve) if holding_curve is not None else None
    return _market_fraction(catalog, generation, bought, sold, haircut, curve)


@lru_cache(maxsize=4096)
def _market_fraction(catalog: Any, generation: str, bought: _dt.date, sold: _dt.date,
                     haircut: float, holding_curve: tuple[float, ...] | None) -> float:
    from clustertwin.catalog.pricing import age_years, curve_for, fraction

    if holding_curve is not None:
        import numpy as np

        held = max((sold - bought).days, 0) / DAYS_PER_YEAR
        frac = float(np.interp(held, np.arange(len(holding_curve), dtype=float), holding_curve))
        return frac * (1.0 - haircut)
    curve = curve_for(catalog, generation)
    if curve is None:
        return 1.0 - haircut
    at_sale = fraction(curve.points, age_years(curve.launch, sold))
    at_purchase = fraction(curve.points, age_years(curve.launch, bought))
    return min(1.0, at_sale / at_purchase) * (1.0 - haircut)
