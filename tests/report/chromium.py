"""Headless Chromium for the page tests: the rendered DOM, console messages and the visible
text of a page (skips with a printed reason when the Debian ``chromium`` package is absent)."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from clustertwin.report.labels import CODE_NAME_RE

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None,
                                    reason="chromium is not installed (apt-get install chromium)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--virtual-time-budget=20000", "--enable-logging=stderr", "--v=0"]


def run(page: str, tmp_path: Path, *extra: str, size: str = "1400,900") -> tuple[str, list[str]]:
    """(stdout, console messages) of Chromium opening ``page`` with ``extra`` flags."""
    path = tmp_path / "page.html"
    path.write_text(page, encoding="utf-8")
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--window-size={size}",
                           f"--user-data-dir={tmp_path / 'profile'}", *extra, path.as_uri()],
                          capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [ln for ln in proc.stderr.splitlines() if ":CONSOLE" in ln]
    return proc.stdout, console


def dom(page: str, tmp_path: Path, size: str = "1400,900") -> tuple[str, list[str]]:
    return run(page, tmp_path, "--dump-dom", size=size)


def plots(dom_text: str) -> list[str]:
    return dom_text.split('class="plotly-graph-div')[1:]


def drawn(plot: str) -> bool:
    """plotly.js drew this figure, with bars, markers, lines with a path, or sankey nodes in it."""
    line = re.search(r'class="js-line"[^>]*\bd="M[^"]+L', plot) is not None
    return "main-svg" in plot and ('class="point"' in plot or "sankey-node" in plot or line)


def visible_text(dom_text: str) -> list[str]:
    """The text a reader sees: every text node outside script/style, plotly's SVG text
    included; hover templates and attributes are not text."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", dom_text, flags=re.S | re.I)
    body = re.sub(r"<code>.*?</code>", " ", body, flags=re.S)  # a command the reader types
    parts = re.split(r"<[^>]+>", body)
    return [html.unescape(p).strip() for p in parts if p.strip()]


def code_names(dom_text: str) -> list[str]:
    return sorted({m.group(0) for t in visible_text(dom_text) for m in CODE_NAME_RE.finditer(t)})
