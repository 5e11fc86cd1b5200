import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from buildout_fakes import FakeCatalog, scenario  # noqa: E402


@pytest.fixture
def catalog():
    return FakeCatalog()


@pytest.fixture
def make_scenario():
    return scenario
