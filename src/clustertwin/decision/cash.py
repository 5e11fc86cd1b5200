"""Monthly cash flows: bucketing dated payments, net present value and peak cash out.

Conventions: days count from the decision date (``buildout.start_date``); month ``m`` holds the
payments of days ``[m * DAYS_PER_MONTH, (m + 1) * DAYS_PER_MONTH)``; outflows are positive, the
resale of owned hardware at the end of the run is a negative (incoming) payment. A month's
flow is discounted as if paid at its end: ``(1 + rate) ** ((m + 1) / 12)``.
"""

from __future__ import annotations

import math

import numpy as np

DAYS_PER_MONTH = 365.25 / 12


def month_of(day: float) -> int:
    return max(0, math.floor(day / DAYS_PER_MONTH))


def add(flows: np.ndarray, day: float, usd: float) -> np.ndarray:
    """``flows`` with ``usd`` paid on ``day`` (grown to reach that month)."""
    m = month_of(day)
    if m >= len(flows):
        flows = np.concatenate([flows, np.zeros(m + 1 - len(flows))])
    flows[m] += usd
    return flows


def spread(flows: np.ndarray, day0: float, day1: float, usd_per_day: float) -> np.ndarray:
    """``flows`` with a steady ``usd_per_day`` paid from ``day0`` to ``day1``, split by month."""
    if day1 <= day0 or usd_per_day == 0:
        return flows
    m0, m1 = month_of(day0), month_of(day1)
    if m1 >= len(flows):
        flows = np.concatenate([flows, np.zeros(m1 + 1 - len(flows))])
    edges = np.arange(m0, m1 + 2) * DAYS_PER_MONTH
    lo = np.maximum(edges[:-1], day0)
    hi = np.minimum(edges[1:], day1)
    flows[m0:m1 + 1] += np.maximum(hi - lo, 0.0) * usd_per_day     # clip's wrapper costs more
    return flows


def npv(flows: np.ndarray, annual_rate: float) -> float:
    """Net present value of monthly flows at ``annual_rate`` (at rate 0: their sum)."""
    months = np.arange(1, len(flows) + 1, dtype=float)
    return float(np.sum(flows / (1.0 + annual_rate) ** (months / 12.0)))


def peak(flows: np.ndarray) -> float:
    """Largest cumulative cash out at any month end (0 if never out of pocket)."""
    return float(max(0.0, np.max(np.cumsum(flows)))) if len(flows) else 0.0
