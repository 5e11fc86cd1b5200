"""With the real catalog and the built-in scenario (skipped until both load)."""

import pytest

from clustertwin.buildout import plan_buildout
from clustertwin.errors import UserError


@pytest.fixture(scope="module")
def inputs():
    from clustertwin.cli.common import load_inputs

    try:
        return load_inputs(None)
    except (UserError, FileNotFoundError, RuntimeError) as exc:
        pytest.skip(f"built-in scenario/catalog not loadable yet: {exc}")


def test_default_scenario_plans(inputs):
    sc, cat = inputs
    p = plan_buildout(sc, cat, samples=2000)
    assert p.quantities["gpus"] >= 1 and p.quantities["servers"] >= 1
    c = p.to_contract()
    assert c["go_live_days_p50"] <= c["go_live_days_p90"]
    assert c["critical_path"][-1] == 195
