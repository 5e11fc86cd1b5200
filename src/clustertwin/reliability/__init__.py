"""Reliability stage: failure profiles, checkpoint sizing, Young/Daly intervals and a
vectorized Monte Carlo of whole runs. Entry point: :func:`analyze`.

Names are imported lazily so that loading ``clustertwin.reliability.cli`` for the command line
does not pull in NumPy."""

from __future__ import annotations

from typing import Any

__all__ = ["analyze", "ReliabilityResult"]


def __getattr__(name: str) -> Any:
    if name == "analyze":
        from clustertwin.reliability.stage import analyze

        return analyze
    if name == "ReliabilityResult":
        from clustertwin.reliability.result import ReliabilityResult

        return ReliabilityResult
    raise AttributeError(name)
