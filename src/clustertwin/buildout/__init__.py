"""Build-out planner: the 195-step supply chain of a training cluster as a schedule.

``plan_buildout(scenario, catalog, design=None, what_if=None) -> BuildoutPlan``: CPM with slack
and the critical path on likely durations, vectorized Monte Carlo go-live percentiles and
criticality indices, and what-if shifts. The steps are data (``data/steps.yaml``); profiles
(new-build, existing-facility, fast-track) live in ``data/profiles.yaml``.
"""

from clustertwin.buildout.plan import plan_buildout
from clustertwin.buildout.result import BuildoutPlan, StepSchedule, WhatIfShift
from clustertwin.buildout.steps import load_profiles, load_steps

__all__ = [
    "BuildoutPlan",
    "StepSchedule",
    "WhatIfShift",
    "load_profiles",
    "load_steps",
    "plan_buildout",
]
