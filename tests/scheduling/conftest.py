"""Fixtures for scheduling tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# the helpers module sits next to this file; make it importable under any import mode
sys.path.insert(0, str(Path(__file__).parent))

from clustertwin.scheduling.traces.locate import PACKAGED


@pytest.fixture
def traces(monkeypatch):
    """The traces packaged with clustertwin (gzip-compressed files); CLUSTERTWIN_TRACES unset
    so that named traces resolve to them."""
    monkeypatch.delenv("CLUSTERTWIN_TRACES", raising=False)
    return PACKAGED
