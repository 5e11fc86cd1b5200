"""Plain-text number formatting shared by the stages' views (:mod:`clustertwin.report.views`),
the reports and the stages' own messages, and the two readers of a plan document every
consumer shares (a dotted key; the strict-JSON form)."""

from __future__ import annotations

import math
from typing import Any


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 node``, ``2 nodes``, ``1,024 nodes``."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def usd(v: float | None) -> str:
    """Dollars at a readable scale: $1.23B, $45.6M, $780k, $950 (never "$0.0M")."""
    if v is None:
        return "n/a"
    a = abs(v)
    for div, unit, digits in ((1e9, "B", 2), (1e6, "M", 1), (1e3, "k", 0)):
        if a >= div:
            return f"${v / div:,.{digits}f}{unit}"
    return f"${v:,.0f}"


def dotted(doc: Any, key: str) -> Any:
    """The value at a dotted key (``training.days``) of a nested plan document; None where
    any part is absent."""
    node: Any = doc
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def json_ready(o: Any) -> Any:
    """A plan document in strict-JSON form, as ``--json`` writes it: NaN/inf -> None, tuples ->
    lists, dates -> ISO text, numpy scalars -> Python numbers, keys -> text."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {str(k): json_ready(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [json_ready(v) for v in o]
    if hasattr(o, "isoformat"):
        return o.isoformat()
    if hasattr(o, "item"):  # numpy scalars
        return json_ready(o.item())
    return o
