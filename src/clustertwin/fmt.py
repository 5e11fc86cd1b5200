"""Plain-text number formatting shared by the stage results' views and the reports (a result
object formats its own rows without importing the report layer above it)."""

from __future__ import annotations


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
