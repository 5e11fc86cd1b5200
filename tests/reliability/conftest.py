"""Fixtures of the reliability tests (test hardware under ids no built-in entry uses)."""

from __future__ import annotations

import pytest
import reliability_support as rs


@pytest.fixture(scope="module")
def rcat():
    return rs.catalog()
