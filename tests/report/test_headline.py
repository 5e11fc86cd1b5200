"""plan.html answers first: the headline from the plan JSON, with and without the decision block
(contract section 5), above the warnings, with the options side by side."""

from __future__ import annotations

import copy

import pytest

from clustertwin.fmt import usd
from clustertwin.report.headline import OPTION_COLUMNS, headline
from clustertwin.report.html import drawings_section, render_page

OPTIONS = [
    {"mode": "build", "gpus": 16384, "ready_date": "2028-09-18", "start_date": "2028-09-20",
     "trained_by_p50": "2028-11-28", "trained_by_p90": "2028-12-04", "cost_usd": 1.2e9,
     "npv_usd": 1.0e9, "cash_peak_usd": 9.9e8, "meets_target": False},
    {"mode": "colo", "gpus": 16384, "ready_date": "2027-10-01", "start_date": "2027-10-03",
     "trained_by_p50": "2027-12-12", "trained_by_p90": "2027-12-19", "cost_usd": 2.5e8,
     "npv_usd": 2.3e8, "cash_peak_usd": 6.1e8, "meets_target": True},
    {"mode": "cloud", "gpus": 16384, "ready_date": "2027-03-01", "start_date": "2027-03-01",
     "trained_by_p50": "2027-05-10", "trained_by_p90": "2027-05-14", "cost_usd": 8.5e8,
     "npv_usd": 8.4e8, "cash_peak_usd": 8.5e7, "meets_target": True},
]


@pytest.fixture(scope="module")
def plain_doc(default_plan):
    """The default plan's JSON without its decision block (the shape before the decision stage,
    and of a plan whose decision stage was not run)."""
    return {k: v for k, v in default_plan.to_dict().items() if k != "decision"}


def test_default_plan_headline_is_its_decision(default_plan):
    doc = default_plan.to_dict()
    dec = doc["decision"]
    best = next(o for o in dec["options"] if o["mode"] == dec["best"])
    h = headline(doc)
    assert h["title"].startswith(f"Trained by {best['trained_by_p90']} (P90) via ")
    assert f"for {usd(best['cost_usd'])}" in h["title"] and h["title"] == dec["headline"]
    assert len(h["options"]["rows"]) == len(dec["options"])
    # the tiles beside it describe the recommended route, not the scenario's owned cluster
    tiles = {t["key"]: t["value"] for t in h["tiles"]}
    assert tiles["decision.options.gpus"] == f"{best['gpus']:,}"
    assert tiles["decision.options.usd_per_gpu_hour"] == f"${best['usd_per_gpu_hour']:.2f}"
    assert "reliability.effective_days" not in tiles


def with_decision(doc, best="colo", confidence=None):
    """The plan dict of the default scenario with a decision block added (contract section 5)."""
    d = copy.deepcopy(doc)
    d["decision"] = {"best": best, "options": copy.deepcopy(OPTIONS)}
    if confidence:
        d["scenario"]["decision"] = {"confidence": confidence}
    return d


def test_plain_headline_states_days_cost_and_go_live(plain_doc):
    h = headline(plain_doc)
    wall, ideal = plain_doc["reliability"]["effective_days"], plain_doc["training"]["days"]
    assert h["title"].startswith(f"{wall:,.0f} wall-clock days to train ({ideal:,.0f} without failures)")
    assert usd(plain_doc["economics"]["run_cost_owned_usd"]) in h["title"]
    assert plain_doc["buildout"]["go_live_date_p90"] in h["title"]
    assert h["options"] is None
    keys = [t["key"] for t in h["tiles"]]
    assert keys[:2] == ["reliability.effective_days", "training.days"]


def test_decision_headline_names_date_route_and_cost(plain_doc):
    h = headline(with_decision(plain_doc))
    assert h["title"] == "Trained by 2027-12-19 (P90) via Colocation for $250.0M"
    assert len(h["options"]["rows"]) == 3
    assert [r["best"] for r in h["options"]["rows"]] == [False, True, False]
    assert len(h["options"]["header"]) == len(OPTION_COLUMNS)
    assert h["options"]["rows"][0]["cells"][OPTION_COLUMNS.index("meets_target")] == "no"


def test_decision_headline_follows_the_scenario_confidence(plain_doc):
    h = headline(with_decision(plain_doc, confidence="p50"))
    assert h["title"].startswith("Trained by 2027-12-12 (P50) via Colocation")


def test_no_route_meets_the_target_names_the_earliest(plain_doc):
    h = headline(with_decision(plain_doc, best=None))
    assert h["title"].startswith("No route meets the target date; earliest: trained by 2027-05-14")
    assert "Cloud" in h["title"]
    d = with_decision(plain_doc, best=None)
    d["decision"]["target_date"] = "2027-04-01"
    assert headline(d)["title"].startswith("No route trains by 2027-04-01; earliest: trained by 2027-05-14")


def test_design_only_headline(plain_doc):
    d = {k: v for k, v in plain_doc.items() if k != "training"}
    h = headline(d)
    assert h["title"].startswith("Cluster design: capital cost $")
    assert "MW facility" in h["title"]


def _page(doc, warnings):
    return render_page("t", [{"title": "Training", "rows": [("a", "b")]}], "", warnings,
                       headline=headline(doc))


def test_page_puts_the_answer_before_the_warnings_and_a_contents(plain_doc):
    page = _page(with_decision(plain_doc), ["economics: something unpriced"])
    answer, warn = page.index('id="answer"'), page.index('class="warn"')
    assert answer < warn < page.index('id="sec-training"')
    assert 'href="#sec-training"' in page and 'href="#warnings"' in page
    assert page.count("<tr class=\"best\">") == 1
    assert 'data-key="decision.options.gpus"' in page  # the recommended route's tiles


def test_headline_strings_are_escaped(plain_doc):
    d = with_decision(plain_doc)
    d["decision"]["options"][1]["mode"] = "<script>alert(1)</script>"
    d["decision"]["best"] = "<script>alert(1)</script>"
    page = _page(d, ["<img src=x onerror=alert(1)>"])
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)" in page


def test_drawings_slot_renders_nothing_without_drawings(plain_doc):
    assert drawings_section(None) == [] and drawings_section({}) == []
    page = render_page("t", [{"title": "Design"}], headline=headline(plain_doc), drawings={})
    assert 'id="drawings"' not in page and 'href="#drawings"' not in page
    page = render_page("t", [{"title": "Design"}], headline=headline(plain_doc),
                       drawings={"Compute fabric": "<svg id='topo'></svg>"})
    assert 'id="drawings"' in page and "<svg id='topo'>" in page and 'href="#drawings"' in page
