"""The build-out's inputs from a scenario: its profile (``auto`` resolved from the design),
quantities, start date, seed and its own lead-time and crew changes, and the profile's step
inputs with those changes applied. :func:`check_buildout` is what ``validate`` runs: every
refusal of :func:`clustertwin.buildout.plan.plan_buildout` without its Monte Carlo."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from clustertwin.buildout.cpm import compile_network
from clustertwin.buildout.durations import effective_steps
from clustertwin.buildout.quantities import Quantities, derive_quantities
from clustertwin.buildout.steps import GO_LIVE, load_profiles, load_steps, site_of
from clustertwin.buildout.whatif import WhatIf, apply_step_changes, scenario_what_if


def check_buildout(scenario: Any, catalog: Any, design: Any = None) -> None:
    """What :func:`plan_buildout` refuses in a scenario (its profile, quantities, lead-time and
    crew changes, a dependency cycle they make), without the Monte Carlo (``validate``)."""
    book, profiles = load_steps(), load_profiles()
    profile, _, _, q, own = scenario_inputs(scenario, catalog, design, profiles)
    steps = base_steps(book, profiles, profile, q, own, site_of(profiles, profile, scenario_site(scenario)))
    compile_network({n: s.after for n, s in steps.items()}, GO_LIVE, source="--what-if", key="")


def scenario_inputs(scenario: Any, catalog: Any, design: Any, profiles: Any) -> tuple:
    """``(profile, start date, seed, quantities, the scenario's own changes)``."""
    profile, start, seed = _scenario_basics(scenario)
    q = derive_quantities(scenario, catalog, design)
    if profile == "auto":
        profile = auto_profile(profiles, design, q.gpus)
    own = scenario_what_if(scenario.buildout)  # buildout.lead_times.*, crews
    own = _catalog_gpu_lead(scenario, catalog, profiles, profile, own)
    return profile, start, seed, q, own


#: the order lead time's optimistic point as a share of its likely one (the step book's 180/270)
GPU_LEAD_OPTIMISTIC = 180.0 / 270.0


def _catalog_gpu_lead(scenario: Any, catalog: Any, profiles: Any, profile: str, own: WhatIf | None) -> WhatIf | None:
    """Step 1 (order GPUs, wait for delivery) at the catalog's lead time of the cluster's GPU
    generation (the one the decision's routes read), unless the profile has its own (servers
    from stock, a standing allocation); the scenario's own changes apply on top of it."""
    import dataclasses

    from clustertwin.buildout.durations import profile_chain
    from clustertwin.buildout.whatif import Change
    from clustertwin.catalog.lookup import gpu_lead_days

    cluster = scenario.cluster
    if "route" not in catalog.kinds():
        return own
    if any(1 in p.steps and p.steps[1].days is not None for p in profile_chain(profiles, profile)):
        return own
    p50, p90, _ = gpu_lead_days(catalog, catalog.gpu(cluster.gpu).generation)
    lead = Change("step.1.days", f"{p50 * GPU_LEAD_OPTIMISTIC:g}/{p50:g}/{p90:g}")
    if own is None:
        return WhatIf("scenario", (), None, 1.0, None, (lead,))
    return dataclasses.replace(own, step_changes=(lead, *own.step_changes))


def _scenario_basics(scenario: Any) -> tuple[str, _dt.date, int]:
    b = scenario.buildout
    return b.profile, b.start_date, int(scenario.reliability.seed)


def auto_profile(profiles: Any, design: Any, gpus: int) -> str:
    """``buildout.profile: auto``: the design says whether the cluster fits an existing
    facility; there, a cluster within a profile's ``auto_max_gpus`` (a few servers from stock)
    takes the smallest such profile."""
    facility = design.facility if design is not None else "new-build"
    if facility != "existing-facility":
        return facility
    fits = [(p.auto_max_gpus, name) for name, p in profiles.items()
            if p.auto_max_gpus is not None and gpus <= p.auto_max_gpus]
    return min(fits)[1] if fits else facility


def scenario_site(scenario: Any) -> str:
    """``decision.site``: what the site has before the build-out starts (default greenfield)."""
    return str(scenario.decision.site or "greenfield")


def base_steps(book: Any, profiles: Any, profile: str, q: Quantities, own: WhatIf | None,
               site: str = "greenfield") -> dict[int, Any]:
    """The profile's step inputs on ``site`` with the scenario's own build-out changes applied."""
    steps = effective_steps(book, profiles, profile, q, crew_multiplier=own.crews if own else 1.0, site=site)
    return apply_step_changes(steps, own.step_changes) if own is not None else steps
