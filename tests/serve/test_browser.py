"""The pages in a real Chromium (the system package, driven by Playwright through its path):
no console errors, no request to another host, the answer updates in place, a sweep finishes.
Skipped with the reason when Playwright or Chromium is absent."""

from __future__ import annotations

import shutil

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")



def _figure(pg, key: str) -> str:
    return pg.locator(f'#answer [data-key="{key}"]').first.inner_text()


def _field(pg, key: str):
    """A form field by its scenario key: the end of its accessible name (the label reads the
    naming table's words, then the key)."""
    import re

    return pg.get_by_label(re.compile(r"(^|\s)" + re.escape(key) + "$"))


def test_editor_loads_clean_and_local(page, server):
    page.goto(server.base + "/")
    page.wait_for_selector('[data-key="training.days"]')
    page.wait_for_load_state("networkidle")
    assert page.errors == []
    assert page.hosts == {"127.0.0.1"}
    assert page.locator("#sec-design svg").count() >= 2  # the floor plan and the rack elevations
    assert page.locator("#sec-training .plotly-graph-div").count() >= 1


def test_every_field_is_labelled_in_words_with_its_key(page, server):
    from clustertwin.report.labels import label_unit
    from clustertwin.serve.form import fields

    page.goto(server.base + "/")
    for f in fields():
        assert _field(page, f.key).count() == 1, f.key
        assert page.locator(f'#scenario [data-key="{f.key}"]').count() == 1, f.key
        label = page.locator(f'label[for="{_field(page, f.key).get_attribute("id")}"]').inner_text()
        assert label.startswith(label_unit("scenario." + f.key)), label
    assert _field(page, "cluster.gpus").input_value() == "16384"


def test_changing_gpus_updates_training_days_in_place(page, server):
    page.goto(server.base + "/")
    page.wait_for_selector('[data-key="training.days"]')
    before = _figure(page, "training.days")
    page.evaluate("window.__noReload = 1")
    gpus = _field(page, "cluster.gpus")
    gpus.fill("8192")
    gpus.dispatch_event("change")
    page.wait_for_function("b => document.querySelector('[data-key=\"training.days\"]').innerText !== b", arg=before)
    after = _figure(page, "training.days")
    assert after != before
    assert float(after.split()[0]) > float(before.split()[0]) * 1.5  # half the GPUs: about twice the days
    assert page.evaluate("window.__noReload") == 1  # same document: no full reload
    assert "gpus: 8192" in page.locator("#yaml").input_value()  # the YAML pane follows the field
    assert page.errors == []


def test_editing_the_yaml_refills_the_fields_and_the_answer(page, server):
    page.goto(server.base + "/")
    page.wait_for_selector('[data-key="training.days"]')
    before = _figure(page, "training.days")
    page.evaluate("window.__noReload = 1")
    pane = page.locator("#yaml")
    pane.fill(pane.input_value().replace("gpus: 16384", "gpus: 4096"))
    pane.dispatch_event("change")
    page.wait_for_function("b => document.querySelector('[data-key=\"training.days\"]').innerText !== b", arg=before)
    assert _field(page, "cluster.gpus").input_value() == "4096"
    assert page.evaluate("window.__noReload") == 1 and page.errors == []


def _state(pg) -> str:
    return pg.get_attribute("#answer", "data-state")


def _wait_state(pg, state: str) -> None:
    pg.wait_for_selector(f'#answer[data-state="{state}"]')


def test_an_invalid_edit_marks_the_answer_stale_until_a_valid_one(page, server):
    page.goto(server.base + "/")
    _wait_state(page, "ok")
    days = _figure(page, "training.days")
    gpus = _field(page, "cluster.gpus")
    gpus.fill("-5")
    assert _state(page) == "pending"  # typing alone marks the shown answer pending
    gpus.dispatch_event("change")
    _wait_state(page, "stale")
    assert "greater than 0" in page.locator("#err-f-cluster-gpus").inner_text()  # beside the field
    assert "stale" in page.locator("#answer-note").inner_text()
    assert _figure(page, "training.days") == days  # the old answer stays, greyed
    assert page.evaluate("getComputedStyle(document.getElementById('answer')).opacity") != "1"
    gpus.fill("16384")
    gpus.dispatch_event("change")
    _wait_state(page, "ok")
    pane = page.locator("#yaml")  # an unknown YAML key: stale, the problem listed in the editor
    pane.fill(pane.input_value() + "\nbogus_section: 1\n")
    pane.dispatch_event("change")
    _wait_state(page, "stale")
    assert "bogus_section" in page.locator("#problems").inner_text()
    assert page.errors == [] and page.hosts == {"127.0.0.1"}


def test_node_options_follow_the_gpu(page, server):
    page.goto(server.base + "/")
    _wait_state(page, "ok")
    gpu = _field(page, "cluster.gpu")
    gpu.fill("b200")
    gpu.dispatch_event("change")
    _wait_state(page, "ok")
    node = _field(page, "cluster.node")
    assert node.input_value() == "dgx-b200"  # the default node that holds the GPU, offered
    options = page.evaluate("[...document.querySelectorAll('#dl-f-cluster-node option')].map(o => o.value)")
    assert options == ["dgx-b200"]
    assert "node: dgx-b200" in page.locator("#yaml").input_value()
    gpu.fill("h200")
    gpu.dispatch_event("change")
    page.wait_for_function("() => document.querySelector('#f-cluster-node').value === 'dgx-h200'")
    options = page.evaluate("[...document.querySelectorAll('#dl-f-cluster-node option')].map(o => o.value)")
    assert sorted(options) == ["dgx-h200", "hgx-h200"]
    assert page.errors == []


def test_sweep_of_four_finishes_with_a_table_of_four_rows(page, server):
    page.goto(server.base + "/sweep")
    page.get_by_label("axis 1 key").fill("cluster.gpus")
    page.get_by_label("axis 1 values").fill("8192,16384")
    page.get_by_label("axis 2 key").fill("economics.electricity_usd_per_kwh")
    page.get_by_label("axis 2 values").fill("0.05,0.1")
    page.locator("#sweep-run").click()
    page.wait_for_selector("progress#sweep-bar")  # the progress indicator
    page.wait_for_selector("#sweep-table", timeout=300_000)
    assert page.locator("#sweep-table tbody tr").count() == 4
    assert page.locator("#sweep-table tbody tr.failed").count() == 0
    assert page.locator("#sweep-pareto .plotly-graph-div").count() == 1
    header = page.locator("#sweep-table th", has_text="cluster.gpus")
    column = "[...document.querySelectorAll('#sweep-table tbody tr')].map(r => r.cells[1].innerText)"
    header.click()
    assert page.evaluate(column) == ["8,192", "8,192", "16,384", "16,384"]
    header.click()  # again: descending
    assert page.evaluate(column) == ["16,384", "16,384", "8,192", "8,192"]
    labels = page.evaluate("[...document.querySelectorAll('#sweep-table tbody tr')].map(r => r.cells[0].innerText)")
    best = page.locator("#sweep-best").inner_text()
    assert best in labels  # the best point is named, and it is one of the rows
    assert page.locator("#sweep-table tr.best").count() == 1
    assert page.locator("#sweep-table tr.best td").first.inner_text() == best
    assert "run cost" in page.locator("#sweep-objective").inner_text().lower()
    assert page.locator("#sweep-front").inner_text().split(" (")[0]  # the Pareto set, by name
    assert page.errors == [] and page.hosts == {"127.0.0.1"}


RAW_FLOAT = r"\d\.\d{5,}|\d[eE][+-]\d"  # many decimals or an exponent: a number nobody rounded


def test_compare_highlights_differences_and_shows_no_raw_float(page, server):
    import re

    page.goto(server.base + "/compare?pick=built-in-default&pick=gpt3-175b-1024-a100&all=1")
    row = page.locator('#compare-table tr[data-key="training.days"]')
    assert row.count() == 1 and "diff" in row.get_attribute("class")
    assert row.locator("td").nth(1).inner_text().endswith(" days")
    cells = page.evaluate("[...document.querySelectorAll('#compare-table tbody td:not(:first-child)')].map(c => c.innerText)")
    assert len(cells) > 100
    raw = [c for c in cells if re.search(RAW_FLOAT, c)]
    assert raw == []
    first = page.evaluate("[...document.querySelectorAll('#compare-table tbody tr')].slice(0, 3).map(r => r.dataset.key)")
    assert first[0] == "decision.mode"  # the decision's route first
    assert page.errors == []


def test_a_reload_keeps_an_unsaved_edit(page, server):
    page.goto(server.base + "/")
    _wait_state(page, "ok")
    gpus = _field(page, "cluster.gpus")
    gpus.fill("8192")
    gpus.dispatch_event("change")
    page.wait_for_function("() => document.querySelector('#yaml').value.includes('gpus: 8192')")
    _wait_state(page, "ok")
    days = _figure(page, "training.days")
    page.reload()
    _wait_state(page, "ok")
    assert _field(page, "cluster.gpus").input_value() == "8192"
    assert "gpus: 8192" in page.locator("#yaml").input_value()
    assert "# The built-in default" in page.locator("#yaml").input_value()  # comments kept through the edit
    assert _figure(page, "training.days") == days
    assert page.locator("#restored").count() == 1
    page.goto(server.base + "/?fresh=1")  # the saved version, on request
    assert _field(page, "cluster.gpus").input_value() == "16384"
    assert page.errors == []


def test_a_share_link_opens_the_same_scenario_and_answer_elsewhere(page, browser, server):
    page.goto(server.base + "/")
    _wait_state(page, "ok")
    box = _field(page, "name")
    box.fill("shared-case")
    box.blur()  # as a person leaves the field: one change event
    _wait_state(page, "ok")
    days = _figure(page, "training.days")
    page.locator("#save").click()
    link = page.locator("#saved-msg #share-link")
    link.wait_for()
    href = link.get_attribute("href")
    yaml_text = page.locator("#yaml").input_value()
    other = browser.new_context()  # another browser: no cookie, no draft
    try:
        pg = other.new_page()
        pg.goto(server.base + href)
        pg.wait_for_selector('#answer[data-state="ok"]', timeout=120_000)
        assert pg.locator("#yaml").input_value() == yaml_text
        assert pg.locator('[data-key="training.days"]').first.inner_text() == days
        assert pg.locator("#share").count() == 1
    finally:
        other.close()
    page.locator("#save").click()  # the same name again: the page asks
    page.locator("#save-overwrite").wait_for()
    page.locator("#save-rename").click()
    page.wait_for_function("() => document.querySelector('#saved-msg').innerText.includes('shared-case-2')")
    assert page.errors == [] and page.hosts == {"127.0.0.1"}


def test_a_download_from_the_page_is_the_file_the_server_makes(page, server):
    """The plan.json the button downloads is the form's plan, written as ``plan --out`` writes
    it (tests/serve/test_files.py shows /files/* equal to the CLI's files byte for byte)."""
    import json

    page.goto(server.base + "/")
    _wait_state(page, "ok")
    box = _field(page, "cluster.gpus")
    box.fill("8192")
    box.blur()
    _wait_state(page, "ok")
    with page.expect_download() as got:
        page.locator("#dl-plan-json").click()
    body = open(got.value.path(), "rb").read()
    assert got.value.suggested_filename == "plan.json"
    planned = server.request("/api/plan", page.locator("#yaml").input_value(), {"Content-Type": "application/yaml"})
    assert json.loads(body) == planned.json() and body == (json.dumps(planned.json(), indent=2) + "\n").encode()
    assert page.errors == [] and page.hosts == {"127.0.0.1"}
