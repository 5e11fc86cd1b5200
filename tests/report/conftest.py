"""The default plan, computed once for the report tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def default_plan(catalog):
    from clustertwin.plan import make_plan
    from clustertwin.scenario import load_scenario

    return make_plan(load_scenario(None, catalog), catalog)
