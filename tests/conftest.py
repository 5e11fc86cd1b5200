"""Shared fixtures: the built-in catalog (loaded once) and a scenario-document factory."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def pytest_configure(config):  # noqa: ARG001
    """The parse cache of packaged YAML (clustertwin.datacache) in a folder of this run, not
    the user's ~/.cache (the CLI runs the tests start inherit it)."""
    import os
    import tempfile

    os.environ.setdefault("CLUSTERTWIN_CACHE_DIR", tempfile.mkdtemp(prefix="clustertwin-test-cache-"))


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


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    """One clear closing line on what was skipped and why (pytest's -ra lists each test;
    this groups them), so an absent optional tool never hides a part of the suite."""
    from collections import Counter

    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons: Counter[str] = Counter()
    for rep in skipped:
        longrepr = getattr(rep, "longrepr", None)
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reasons[reason.removeprefix("Skipped: ").strip()] += 1
    terminalreporter.write_sep("-", f"{len(skipped)} tests skipped, by reason (an absent optional "
                               "tool: see README 'make test'; .ci/run installs them)")
    for reason, n in reasons.most_common():
        terminalreporter.write_line(f"  {n:3d} x {reason}")
