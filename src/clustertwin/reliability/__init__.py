"""Reliability stage: Young/Daly checkpoint intervals and a vectorized Monte Carlo of whole
runs. The failure rates of a profile (:mod:`clustertwin.design.failure_rates`), the spare-node
rule (:mod:`clustertwin.design.spares`) and the checkpoint size and write times
(:mod:`clustertwin.perf.checkpoint`) live in the earlier layers that also read them.
Entry point: :func:`analyze`.

Names are imported lazily so that loading ``clustertwin.cli.reliability`` for the command line
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
