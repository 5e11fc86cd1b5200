"""Issue 38 (one source per figure): the bill of materials total plan.html shows, the sum of
``bom.csv``'s ``total_usd`` column and the plan's ``economics.capex_usd`` are one number, to the
dollar as each is written (``bom.csv`` rounds each line to the cent, so its sum may differ from
the capex by a few cents, never by a dollar). End to end through the CLI, ``plan --out`` and
``export bom``, as a buyer gets the three files; a new build (default) and an existing
facility leased per kW (GPT-3 on 1,024 A100)."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> None:
    r = subprocess.run([sys.executable, "-m", "clustertwin.cli", *args], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.parametrize("example", ["default", "gpt3-175b-1024-a100"])
def test_plan_html_bom_csv_and_capex_are_one_number(tmp_path, example):
    scenario = ROOT / "examples" / f"{example}.yaml"
    _cli("plan", str(scenario), "--out", str(tmp_path / "plan"))
    _cli("export", "bom", str(scenario), "--out", str(tmp_path / "bom"))
    capex = json.loads((tmp_path / "plan" / "plan.json").read_text())["economics"]["capex_usd"]
    html = (tmp_path / "plan" / "plan.html").read_text(encoding="utf-8")
    (shown,) = re.findall(r"class='bom-total'>\$([0-9,]+\.[0-9]{2})<", html)
    with (tmp_path / "bom" / "bom.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    csv_total = sum(float(r["total_usd"]) for r in rows)
    assert abs(csv_total - capex) < 0.01 * len(rows)          # cents per line, nothing more
    page = round(float(shown.replace(",", "")))
    assert f"${page:,}" == f"${round(csv_total):,}" == f"${round(capex):,}", (shown, csv_total, capex)
