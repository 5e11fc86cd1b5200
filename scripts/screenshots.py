"""Screenshots of the default plan's plan.html for the docs, taken in headless Chromium.

    python scripts/screenshots.py [--out docs/img] [--scenario FILE]

writes ``plan-first-screen.png`` (1400x900: what a reader sees on opening the page) and
``plan-full.png`` (the whole page, 1400 wide). Needs the Debian ``chromium`` package.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WIDTH, FIRST_HEIGHT, MAX_HEIGHT = 1400, 900, 16000
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=20000"]
MEASURE = ("<script>window.addEventListener('load', function () { setTimeout(function () {"
           " document.documentElement.setAttribute('data-page-height',"
           " document.documentElement.scrollHeight); }, 0); });</script>")


def render_default(scenario: str | None) -> str:
    from clustertwin.catalog import load_catalog
    from clustertwin.plan import make_plan
    from clustertwin.report.html import render
    from clustertwin.scenario import load_scenario

    cat = load_catalog()
    return render(make_plan(load_scenario(scenario, cat), cat))


def chromium(browser: str, page: Path, profile: Path, *args: str) -> str:
    proc = subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"chromium failed: {proc.stderr[-500:]}")
    return proc.stdout


def page_height(browser: str, page: Path, profile: Path) -> int:
    measured = page.with_name("measure.html")
    measured.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"),
                        encoding="utf-8")
    dom = chromium(browser, measured, profile, f"--window-size={WIDTH},{FIRST_HEIGHT}", "--dump-dom")
    m = re.search(r'data-page-height="(\d+)"', dom)
    return min(int(m.group(1)) if m else MAX_HEIGHT, MAX_HEIGHT)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/img", help="folder for the PNG files (default docs/img)")
    ap.add_argument("--scenario", default=None, help="scenario file (default: the built-in default)")
    args = ap.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "plan.html"
        page.write_text(render_default(args.scenario), encoding="utf-8")
        profile = Path(tmp) / "profile"
        first = out / "plan-first-screen.png"
        chromium(browser, page, profile, f"--window-size={WIDTH},{FIRST_HEIGHT}", f"--screenshot={first}")
        height = page_height(browser, page, profile)
        full = out / "plan-full.png"
        chromium(browser, page, profile, f"--window-size={WIDTH},{height}", f"--screenshot={full}")
    print(f"wrote {first} and {full} ({WIDTH}x{height})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
