"""Shared fixtures: the built-in catalog (loaded once) and a scenario-document factory."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="session")
def catalog():
    from clustertwin.catalog import load_catalog

    return load_catalog()


@pytest.fixture(scope="session")
def default_doc() -> dict:
    from clustertwin.scenario import DEFAULT_SCENARIO

    return yaml.safe_load(DEFAULT_SCENARIO.read_text())


@pytest.fixture
def doc(default_doc) -> dict:
    """A fresh, mutable copy of the default scenario document."""
    return copy.deepcopy(default_doc)
