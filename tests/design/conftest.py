from __future__ import annotations

import pytest

from .helpers import fixture_catalog


@pytest.fixture(scope="session")
def xcatalog(tmp_path_factory):
    """Built-in catalog plus the design test fixtures (B300, seed server, a bad node)."""
    return fixture_catalog(tmp_path_factory.mktemp("design-catalog"))
