"""The track page in a real Chromium (the system package, driven by Playwright through its
path): a small Megatron-LM log uploaded with a saved scenario shows the forecast tile and the
figures, with no console error and no request to another host; an upload over the limit is
stopped in the page. Skipped with the reason when Playwright or Chromium is absent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
MEGATRON_LOG = Path(__file__).resolve().parents[1] / "track" / "data" / "megatron.log"



def test_uploading_a_megatron_log_shows_the_forecast(page, server):
    page.goto(server.base + "/track")
    page.select_option("#track-scenario", "gpt3-175b-1024-a100")
    page.set_input_files("#track-log", str(MEGATRON_LOG))
    page.click("#track-go")
    tile = page.locator('#track-result .card [data-key="forecast.trained_by_p50"]')
    tile.wait_for()
    assert tile.inner_text().startswith("20")  # a date, YYYY-MM-DD HH:MM
    assert page.locator('#track-forecast tr[data-quantile="p90"]').count() == 1
    page.wait_for_load_state("networkidle")
    assert page.locator(".track-sec .plotly-graph-div").count() == 3  # burn-up, interruptions, step time
    assert "megatron.log" in page.content()
    assert page.errors == [] and page.hosts == {"127.0.0.1"}


def test_an_upload_over_the_limit_is_stopped_in_the_page(page, server, tmp_path):
    from clustertwin.serve.track_page import MAX_UPLOAD_BYTES

    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.truncate(MAX_UPLOAD_BYTES + 1)
    page.goto(server.base + "/track")
    page.set_input_files("#track-log", str(big))
    page.click("#track-go")
    page.wait_for_function("() => document.querySelector('#track-too-large').innerText.includes('command line')")
    assert page.url.endswith("/track") and page.locator("#track-result").count() == 0
