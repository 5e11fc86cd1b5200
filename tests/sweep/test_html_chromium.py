"""sweep.html and compare.html open offline: headless Chromium runs their JS and every plot
is drawn with data in it. Skipped when the Debian ``chromium`` package is absent."""

from __future__ import annotations

import re
import shutil

import pytest

from clustertwin.sweep.api import run_sweep_table
from clustertwin.sweep.choose import choose, parse_requirement
from clustertwin.sweep.run import Runner
from clustertwin.sweep.study import build
from tests.conftest import EXAMPLES
from tests.report import chromium
from tests.sweep.conftest import GRID, SMALL

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


def _rendered_dom(page, tmp_path) -> str:
    """The DOM after plotly.js ran; also checks (issue 26) that the page logged nothing to the
    console and shows no code name (snake_case, unit suffix) as a label."""
    dom, console = chromium.dom(page, tmp_path)
    assert console == []
    assert chromium.code_names(dom) == []
    return dom


def _check_offline_and_drawn(page: str, dom: str, figures: int) -> None:
    assert not re.search(r"<(script|link)[^>]+(src|href)=[\"']?https?:", page)  # nothing fetched
    plots = dom.split('class="plotly-graph-div')[1:]
    assert len(plots) == figures
    for plot in plots:
        assert "main-svg" in plot  # plotly.js ran and drew this figure
        assert len(re.findall(r'class="point"', plot)) > 0  # with bars or markers in it


def test_sweep_html_renders(tmp_path):
    from clustertwin.sweep.html import render_sweep

    sw = build(SMALL, GRID)
    table = run_sweep_table(sw, Runner(executor="local", workers=1))
    ch = choose(table, "run_cost_owned_usd", [parse_requirement("reliability.effective_days<=1000")])
    page = render_sweep(sw, table, ch)
    dom = _rendered_dom(page, tmp_path)
    _check_offline_and_drawn(page, dom, figures=1 + 2)  # Pareto front + one per swept key


def test_compare_html_renders(tmp_path):
    from clustertwin.sweep.compare import compare_plans, render_compare

    plans = compare_plans([EXAMPLES / "llama3-70b-gb200-nvl72.yaml", EXAMPLES / "gpt3-175b-1024-a100.yaml"], [])
    page = render_compare(plans)
    dom = _rendered_dom(page, tmp_path)
    _check_offline_and_drawn(page, dom, figures=4)  # headline bars + step time + capex + opex
