"""What every stage view shares: the context it reads (:class:`Where`) and the shape of a
view (:class:`View`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clustertwin.catalog import Catalog
    from clustertwin.economics.model import EconomicsResult
    from clustertwin.scenario import Scenario

Rows = list[tuple[str, str]]
Figures = list[tuple[str, Any]]


@dataclass(frozen=True)
class Where:
    """What a view reads beside its result: the scenario planned, the catalog it was planned
    with (None: the built-in catalog) and the plan's economics (the design's bill of materials
    is shown as the one priced BOM that sums to the capex)."""

    scenario: Scenario
    catalog: Catalog | None = None
    economics: EconomicsResult | None = None


def no_html(result: Any, where: Where | None = None) -> str:  # noqa: ARG001 - every view's html signature
    return ""


@dataclass(frozen=True)
class View:
    """How one kind of stage result is shown: ``rows(result)`` (label, value) for the terminal
    and the page's table, ``figures(result, where)`` (title, plotly figure) and
    ``html(result, where)`` (a fragment of our own markup, every user string escaped)."""

    rows: Callable[[Any], Rows]
    figures: Callable[[Any, Where], Figures]
    html: Callable[[Any, Where | None], str] = no_html
