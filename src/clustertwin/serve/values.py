"""A plan value as a planner reads it: rounded, with the unit the naming table gives its key
(:mod:`clustertwin.report.labels`), never a raw float (``8.404e+07``, ``0.3988``).

The compare and sweep pages show values through :func:`shown`; two values differ "beyond
rounding" when their shown texts differ.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any


def _number(v: float) -> str:
    """Thousands separated; 3 significant digits below 100; never exponent notation."""
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 1:
        return f"{v:,.3g}" if a < 10 else f"{v:,.1f}"
    if a >= 0.001:
        return f"{v:.3f}".rstrip("0").rstrip(".")
    return "< 0.001" if v > 0 else "> -0.001"


def shown(key: str, v: Any) -> str:
    """``v`` (the value at plan key ``key``) for people: ``$84.0M``, ``39.9%``, ``61.2 days``,
    ``24.3 MW``, ``16,384``; text and dates as they are; '' for none."""
    from clustertwin.fmt import usd
    from clustertwin.report.labels import unit

    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, _dt.date):
        return v.isoformat()
    if not isinstance(v, int | float):
        return str(v)
    u = unit(key)
    if u == "$":
        return usd(float(v))
    if u == "%":
        return f"{100 * v:.1f}%"
    if u == "kW" and abs(v) >= 1000:
        return f"{v / 1000:,.1f} MW"
    if isinstance(v, int):
        text = f"{v:,}"
    else:
        text = _number(float(v))
    if u in ("", "fraction"):
        return text
    return f"{text} {u}"
