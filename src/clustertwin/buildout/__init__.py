"""Build-out planner: the 195-step supply chain of a training cluster as a schedule.

``plan_buildout(scenario, catalog, design=None, what_if=None) -> BuildoutPlan``: CPM with slack
and the critical path on likely durations, vectorized Monte Carlo go-live percentiles and
criticality indices, and what-if shifts. The steps are data (``data/steps.yaml``); profiles
(new-build, existing-facility, fast-track) live in ``data/profiles.yaml``.
"""

from clustertwin._lazy import lazy_exports

__all__ = ["BuildoutPlan", "StepSchedule", "WhatIfShift", "load_profiles", "load_steps",
           "plan_buildout"]
__getattr__ = lazy_exports(__name__, {
    "plan_buildout": "clustertwin.buildout.plan",
    "BuildoutPlan": "clustertwin.buildout.result",
    "StepSchedule": "clustertwin.buildout.result",
    "WhatIfShift": "clustertwin.buildout.result",
    "load_profiles": "clustertwin.buildout.steps",
    "load_steps": "clustertwin.buildout.steps",
})
