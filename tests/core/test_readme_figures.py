"""Figures the README (and docs/validation.md) quote that come from the code: each is read back
from the text and compared with what the code produces now, so a change that moves one fails
here until the prose is updated (issue 30: the decision example, the calibration row counts and
the export kinds had drifted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clustertwin.perf import calibration as cal

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
VALIDATION = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")


def _number(pattern: str, text: str = README) -> int:
    found = re.findall(pattern, text)
    assert len(found) == 1, f"{pattern!r}: {len(found)} matches in the text"
    return int(found[0].replace(",", ""))


def test_export_kinds_are_the_commands() -> None:
    from clustertwin.cli.export import KINDS

    sentence = re.search(r"`KIND` is (.*?) or `all`\.", README, re.S)
    assert sentence, "the README's list of export kinds is gone"
    listed = re.findall(r"`([a-z]+)`", sentence.group(1))
    assert (*listed, "all") == KINDS


def test_export_all_file_count() -> None:
    """`all` on the default design writes the README's number of files (bom.xlsx counted)."""
    from clustertwin.catalog import load_catalog
    from clustertwin.cli.export import build_files
    from clustertwin.export.stage import make_context
    from clustertwin.scenario import DEFAULT_SCENARIO, load_scenario

    cat = load_catalog()
    files, _ = build_files("all", make_context(load_scenario(DEFAULT_SCENARIO, cat), cat))
    written = len(files) + ("bom.xlsx" not in files)  # bom.xlsx needs openpyxl
    assert _number(r"\(`all`, (\d+) files\)") == written


def test_decision_example_headline() -> None:
    """`plan examples/decision-405b.yaml` prints the headline the README quotes."""
    from clustertwin.catalog import load_catalog
    from clustertwin.plan import make_plan
    from clustertwin.scenario import load_scenario

    cat = load_catalog()
    plan = make_plan(load_scenario(ROOT / "examples" / "decision-405b.yaml", cat), cat)
    line = plan.decision.headline()
    assert f"`plan examples/decision-405b.yaml` prints the answer first — `{line}`" in README


def _cells(label: str) -> list[str]:
    import re

    row = re.search(rf"^\| {re.escape(label)} \|(.*)\|$", README, re.M)
    assert row, label
    return [c.strip().strip("*") for c in row.group(1).split("|")]


def test_decision_example_uncertainty() -> None:
    """The README's 405B uncertainty is the plan's: each route's trained-by and chance of being
    best, the knife-edge flag and margin, and each driver's multipliers and costs (the both-bases
    rows are pinned by tests/decision/test_bases.py)."""
    from clustertwin.catalog import load_catalog
    from clustertwin.fmt import usd
    from clustertwin.plan import make_plan
    from clustertwin.scenario import load_scenario

    cat = load_catalog()
    d = make_plan(load_scenario(ROOT / "examples" / "decision-405b.yaml", cat), cat).decision
    modes = ("build", "colo", "lease", "cloud")
    assert _cells("trained by (P90)") == [str(d.option(m).trained_by_p90) for m in modes]
    assert _cells("chance best (usage)") == [f"{d.option(m).p_best:.0%}" for m in modes]
    chosen = d.chosen()
    assert d.knife_edge is True and d.margin_usd is None
    assert (f"`decision.knife_edge` is `true` ({chosen.mode} is best in {chosen.p_best:.0%} of the draws"
            in " ".join(README.split()))
    for row in d.drivers:
        assert _cells(row["input"].replace("_", " ")) == [
            f"x{row['low']:.2f} / x{row['high']:.2f}", usd(row["cost_low_usd"]), usd(row["cost_high_usd"])]


def _steady(rows):
    from clustertwin.perf.crossval import steady_state

    return [r for r in rows if steady_state(r)]


def test_calibration_table_counts() -> None:
    """Row counts of the packaged published-runs tables as the README and docs state them."""
    from clustertwin.perf.crossval import source_key

    published = _steady(cal.packaged_rows(cal.PUBLISHED_NAME))
    assert _number(r"\((\d+) rows of `src/clustertwin/perf/data/published_runs.csv`\)") == \
        len(published)
    assert _number(r"\((\d+) rows of `src/clustertwin/perf/data/heldout_runs.csv`") == \
        len(cal.parse_rows(cal.find_csv(cal.HELDOUT_NAME)))
    both = _steady(cal.packaged_rows(cal.PUBLISHED_NAME) + cal.packaged_rows())
    sources = len({source_key(r.source) for r in both})
    for text in (README, VALIDATION):
        assert _number(r"(\d+) steady-state rows, \d+ sources", text) == len(both)
        assert _number(r"\d+ steady-state rows, (\d+) sources", text) == sources
    strict = [r for r in cal.packaged_rows() if not r.loose]
    assert _number(r"\| (\d+) step-time rows of Megatron-LM 2021") == len(strict)


@pytest.mark.parametrize("command", ["calibration", "traces list", "serve"])
def test_readme_commands_exist(command) -> None:
    """The commands the README's install section names are registered."""
    from typer.testing import CliRunner

    from clustertwin.cli import app

    res = CliRunner().invoke(app, [*command.split(), "--help"])
    assert res.exit_code == 0, res.output
