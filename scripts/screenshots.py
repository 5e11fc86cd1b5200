"""Screenshots of the default plan's plan.html for the docs, taken in headless Chromium.

    python scripts/screenshots.py [--out docs/img] [--scenario FILE]

writes ``plan-first-screen.png`` (1400x900: what a reader sees on opening the page),
``plan-full.png`` (the whole page, 1400 wide) and the default scenario's drawings as the sheets
``export drawings`` writes: ``drawing-floor-plan.png`` (and ``drawing-floor-plan-hall-NN.png``
per hall of a multi-hall site), ``drawing-rack-elevations.png`` and ``drawing-topology.png``.
Needs the Debian ``chromium`` package (``apt-get install chromium``); without it the script
says so and exits 2, writing nothing.
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


def drawings(scenario: str | None) -> dict[str, str]:
    """{png stem: svg} of the scenario's drawings, as ``clustertwin export drawings`` writes them."""
    from clustertwin.catalog import load_catalog
    from clustertwin.drawings import drawing_files
    from clustertwin.export.stage import make_context
    from clustertwin.scenario import load_scenario

    cat = load_catalog()
    ctx = make_context(load_scenario(scenario, cat), cat)
    return {f"drawing-{name.removesuffix('.svg')}": svg
            for name, svg in drawing_files(ctx).items()}


def sheet_png(browser: str, svg: str, png: Path, tmp: Path) -> None:
    """``svg`` drawn WIDTH pixels wide (its own aspect ratio) into ``png``."""
    m = re.search(r'<svg[^>]*width="([\d.]+)(?:mm)?"[^>]*height="([\d.]+)(?:mm)?"', svg)
    ratio = float(m.group(2)) / float(m.group(1)) if m else 0.75
    src = tmp / f"{png.stem}.svg"
    src.write_text(svg, encoding="utf-8")
    page = tmp / f"{png.stem}.html"
    page.write_text(f'<html><body style="margin:0;background:#fff"><img src="{src.name}" '
                    f'style="width:{WIDTH}px;display:block"></body></html>', encoding="utf-8")
    height = min(MAX_HEIGHT, int(WIDTH * ratio) + 1)
    chromium(browser, page, tmp / "profile", f"--window-size={WIDTH},{height}",
             f"--screenshot={png}")


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
        for stem, svg in drawings(args.scenario).items():
            sheet_png(browser, svg, out / f"{stem}.png", Path(tmp))
            print(f"wrote {out / stem}.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
