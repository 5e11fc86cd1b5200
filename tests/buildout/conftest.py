import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from buildout_fakes import PinnedCatalog, scenario  # noqa: E402


@pytest.fixture
def catalog():
    return PinnedCatalog()


@pytest.fixture
def make_scenario():
    return scenario
