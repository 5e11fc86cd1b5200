"""plan.html opened in headless Chromium as a reader would: no console message, every figure
drawn with data in it, no visible label that is a code name, and on the default plan's first
screen (1400x900) the answer above any warning (compare.html and sweep.html get the same checks
in tests/sweep/test_html_chromium.py). Skipped with a printed reason when the Debian
``chromium`` package is absent."""

from __future__ import annotations

import re

import pytest

from tests.conftest import EXAMPLES
from tests.report import chromium
from tests.report.test_headline import with_decision

pytestmark = chromium.needs_chromium

#: writes where the answer box and the first warning are on the first screen into the DOM
POSITIONS = ("<script>window.addEventListener('load', function () { setTimeout(function () {"
             " var a = document.getElementById('answer'), w = document.querySelector('.warn');"
             " var e = document.documentElement;"
             " e.setAttribute('data-answer-top', a ? a.getBoundingClientRect().top : -1);"
             " e.setAttribute('data-answer-bottom', a ? a.getBoundingClientRect().bottom : -1);"
             " e.setAttribute('data-warn-top', w ? w.getBoundingClientRect().top : -1);"
             " }, 0); });</script>")


@pytest.fixture(scope="module")
def plan_page(default_plan):
    from clustertwin.report.html import render

    return render(default_plan)


def check_page(dom: str, console: list[str], figures: int) -> None:
    """No console message, ``figures`` plots each drawn with data, no code name in sight."""
    assert console == []
    plots = chromium.plots(dom)
    assert len(plots) == figures
    assert all(chromium.drawn(p) for p in plots)
    assert chromium.code_names(dom) == []


def test_default_plan_page_answer_first_in_words_every_figure_drawn(plan_page, default_plan, tmp_path):
    dom, console = chromium.dom(plan_page.replace("</body>", POSITIONS + "</body>"), tmp_path)
    # training 2, design 2 (power flow, fabric), reliability 2, economics 3, build-out 2,
    # decision 2 (cash by route, what moves the answer)
    check_page(dom, console, figures=13)
    for title in ("Where a ", "Memory per GPU", "Interruptions per week", "Power at maximum draw"):
        assert title in dom
    assert "sankey-node" in dom
    # on the first screen (1400x900) the whole answer, above the first warning
    assert default_plan.warnings  # the default plan does warn (unpriced BOM lines)
    pos = {k: float(v) for k, v in re.findall(r'data-(answer-top|answer-bottom|warn-top)="([-\d.]+)"', dom)}
    assert 0 <= pos["answer-top"] < pos["answer-bottom"] <= 900
    assert pos["warn-top"] >= pos["answer-bottom"]
    # the drawings section holds the clustertwin.drawings SVGs, drawn with content
    for slug, cls in (("floor-plan", 'class="rack"'), ("fabric-topology", "<line"),
                      ("rack-elevations", "<rect")):
        start = dom.index(f'id="drawing-{slug}"')
        svg = dom[dom.index("<svg", start):dom.index("</svg>", start)]
        assert svg.count(cls) > 0, slug
    racks = dom[dom.index('id="drawing-floor-plan"'):].count('class="rack"')
    assert racks >= default_plan.design.racks


def test_decision_headline_page_in_chromium(default_plan, tmp_path):
    from clustertwin.report.headline import headline
    from clustertwin.report.html import render_page

    doc = with_decision(default_plan.to_dict())
    page = render_page("plan", [{"title": "Training", "rows": [("GPUs", "16,384")]}], "",
                       ["economics: a warning"], headline=headline(doc))
    dom, console = chromium.dom(page.replace("</body>", POSITIONS + "</body>"), tmp_path)
    assert console == []
    assert "Trained by 2027-12-19 (P90) via Colocation for $250.0M" in dom
    assert chromium.code_names(dom) == []
    pos = {k: float(v) for k, v in re.findall(r'data-(answer-bottom|warn-top)="([-\d.]+)"', dom)}
    assert pos["warn-top"] >= pos["answer-bottom"]


def test_design_only_plan_page(catalog, tmp_path):
    from clustertwin.plan import make_plan
    from clustertwin.report.html import render
    from clustertwin.scenario import scenario_from_dict

    s = scenario_from_dict({"name": "shared", "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100",
                                                          "gpus": 1024}}, "shared.yaml", catalog)
    plan = make_plan(s, catalog)
    dom, console = chromium.dom(render(plan), tmp_path)
    assert "Cluster design: capital cost $" in dom
    # design 2, node-level reliability 1, economics 2 (no run to price), build-out 2
    check_page(dom, console, figures=7)


def test_a_scenario_name_with_tags_shows_as_written_in_the_figures(tmp_path):
    import yaml

    from clustertwin.sweep.compare import compare_plans, render_compare

    doc = yaml.safe_load((EXAMPLES / "gpt3-175b-1024-a100.yaml").read_text())
    doc["name"] = "<b>bold</b> & <i>x</i>"
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(yaml.safe_dump(doc))
    plans = compare_plans([hostile, EXAMPLES / "gpt3-175b-1024-a100.yaml"], [])
    dom, console = chromium.dom(render_compare(plans), tmp_path)
    assert console == []
    legend = re.findall(r'<text class="legendtext"[^>]*>([^<]*)</text>', dom)
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;i&gt;x&lt;/i&gt;" in legend  # the text, not markup
    assert "<b>bold" not in dom
