"""The design (and the results before it) exactly as ``plan`` computes them, for the commands
that show one stage (``design``, ``reliability``, ``buildout``): one source of truth for the
installed GPUs, racks and power, including the deadline solver's wall-clock rounds."""

from __future__ import annotations

from typing import Any


def plan_through(scenario: Any, catalog: Any, last: str = "design") -> Any:
    """``make_plan`` up to ``last`` ("design" or "reliability"). A deadline solved on a
    wall-clock basis needs the reliability stage to confirm its count, so it runs too."""
    from clustertwin.plan import make_plan

    stages = ("design", "reliability")
    if last == "design" and getattr(scenario.cluster, "deadline_days", None) is None:
        stages = ("design",)
    return make_plan(scenario, catalog, stages=stages)


def design_for(scenario: Any, catalog: Any) -> Any:
    """The design stage's answer for a scenario, as ``plan`` computes it (the one source of
    racks, power and links for the ``buildout`` command); None when the design stage cannot
    run (the build-out's coarse rules stand in then)."""
    from clustertwin.errors import UserError

    try:
        return plan_through(scenario, catalog, "design").design
    except UserError:
        raise
    except Exception:  # noqa: BLE001 - a partial scenario (tests, what-ifs) uses the rules
        return None
