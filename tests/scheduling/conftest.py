"""Fixtures for scheduling tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# the helpers module sits next to this file; make it importable under any import mode
sys.path.insert(0, str(Path(__file__).parent))

from clustertwin.scheduling.traces.locate import traces_dir


@pytest.fixture
def traces():
    d = traces_dir()
    if d is None:
        pytest.skip("shared/traces not found (set CLUSTERTWIN_TRACES); CI provides it")
    return d
