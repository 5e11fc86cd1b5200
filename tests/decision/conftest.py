import pytest

from tests.decision.helpers import decision_doc


@pytest.fixture(scope="session")
def plan405(default_doc, catalog):
    """The plan of the shared 405B decision scenario (made once for the decision tests)."""
    from clustertwin.plan import make_plan
    from clustertwin.scenario import scenario_from_dict

    return make_plan(scenario_from_dict(decision_doc(default_doc), "405b.yaml", catalog), catalog)
