"""One view per stage result: its terminal rows, its figures and its HTML fragment, chosen by
the result's type. The terminal (:mod:`clustertwin.report.text`), plan.html
(:mod:`clustertwin.report.html`), the one-stage commands and the web app all draw a stage
through :func:`view_of`; the results themselves hold only their data and ``to_contract()``.
"""

from __future__ import annotations

from typing import Any

from clustertwin.report.views.base import Figures, Rows, View, Where

__all__ = ["Figures", "Rows", "View", "Where", "figures", "html", "rows", "view_of"]


def view_of(result: Any) -> View:
    """The view of a stage result, by its type (TypeError for anything else)."""
    from clustertwin.buildout.result import BuildoutPlan
    from clustertwin.decision.result import DecisionResult
    from clustertwin.design.result import ClusterDesign
    from clustertwin.economics.model import EconomicsResult
    from clustertwin.perf.stage import TrainingEstimate
    from clustertwin.reliability.cluster import ClusterReliability
    from clustertwin.reliability.result import ReliabilityResult
    from clustertwin.report.views import (
        buildout,
        decision,
        design,
        economics,
        reliability,
        track,
        training,
    )
    from clustertwin.track.core import TrackResult

    views: tuple[tuple[type, View], ...] = (
        (TrainingEstimate, View(training.rows, training.figures)),
        (ClusterDesign, View(design.rows, design.figures, design.html)),
        (ReliabilityResult, View(reliability.rows, reliability.figures)),
        (ClusterReliability, View(reliability.cluster_rows, reliability.cluster_figures)),
        (EconomicsResult, View(economics.rows, economics.figures)),
        (BuildoutPlan, View(buildout.rows, buildout.figures)),
        (DecisionResult, View(decision.rows, decision.figures)),
        (TrackResult, View(track.rows, track.figures)),
    )
    for kind, view in views:
        if isinstance(result, kind):
            return view
    raise TypeError(f"no view for a {type(result).__name__}")


def rows(result: Any) -> Rows:
    """The result's (label, value) rows."""
    return view_of(result).rows(result)


def figures(result: Any, where: Where) -> Figures:
    """The result's (title, figure) pairs."""
    return view_of(result).figures(result, where)


def html(result: Any, where: Where | None = None) -> str:
    """The result's extra HTML (empty for most)."""
    return view_of(result).html(result, where)
