"""Issue 38: the tornado of ``decision.drivers`` (what moves the answer) is on the web app's
answer page, drawn by the decision view that draws it in plan.html: one chart path
(:func:`clustertwin.report.views.decision.tornado` through ``figure_div``, whose div id is a hash
of the figure, so the same figure has the same id on both pages)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest


def _section(page: str, name: str) -> str:
    m = re.search(rf'<section id="sec-{name}[^"]*">(.*?)</section>', page, re.S)
    assert m, f"no {name} section"
    return m.group(1)


def test_web_answer_shows_the_tornado_plan_html_shows(server):
    from clustertwin.catalog import load_catalog
    from clustertwin.plan import make_plan
    from clustertwin.report.html import figure_div, render
    from clustertwin.report.views.decision import tornado
    from clustertwin.scenario import load_scenario
    from clustertwin.serve.library import examples_dir

    path = examples_dir() / "decision-405b.yaml"
    if not path.exists():
        pytest.skip("examples/decision-405b.yaml is not in this checkout")
    page = server.request("/answer", urlencode({"yaml": path.read_text()}),
                          {"Content-Type": "application/x-www-form-urlencoded"}).body.decode()
    cat = load_catalog()
    plan = make_plan(load_scenario(path, cat), cat)
    d = plan.decision
    assert d.drivers, "the example's route Monte Carlo names its drivers"
    div = figure_div(tornado(d))
    div_id = re.search(r'id="(fig-[0-9a-f]{16})"', div).group(1)
    web = _section(page, "decision")
    assert div_id in web                                  # the same figure, drawn the same way
    assert div_id in _section(render(plan, drawings={}, catalog=cat), "decision")
    assert f"{d.chosen().mode}: cost ($M, {d.basis} basis) as each input moves" in web
    for row in d.drivers:  # every driver is a bar, named with its P10-P90 multipliers
        assert f"{row['input'].replace('_', ' ')} x{row['low']:.2f}-x{row['high']:.2f}" in web
