"""Track fixtures: one plan (the GPT-3 175B example on 1,024 A100s) made once per session."""

from __future__ import annotations

import pytest

from track.helpers import SCENARIO


@pytest.fixture(scope="session")
def gpt3_plan(catalog):
    from clustertwin.plan import make_plan
    from clustertwin.scenario import load_scenario

    return make_plan(load_scenario(SCENARIO, catalog), catalog)


@pytest.fixture(scope="session")
def pv(gpt3_plan):
    from clustertwin.track.planview import plan_view

    return plan_view(gpt3_plan)

