"""plan.html escapes every name it shows: a scenario name or a catalog entry written by someone
else cannot put script or markup into the page (issue 15)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from clustertwin.cli import app
from clustertwin.scenario import DEFAULT_SCENARIO

EVIL = "<script>alert('x')</script><img src=x onerror=alert(1)>"


def test_hostile_names_are_escaped(tmp_path: Path, catalog) -> None:
    import yaml

    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    doc["name"] = EVIL
    doc["cluster"]["gpus"] = 1024
    doc["reliability"]["trials"] = 50
    scen = tmp_path / "s.yaml"
    scen.write_text(yaml.safe_dump(doc))
    # a catalog override that renames the GPU and its node (their names reach the page)
    cat = tmp_path / "cat"
    cat.mkdir()
    gpu = catalog.gpu("h100-sxm-80gb").model_dump(mode="json", exclude_none=True)
    node = catalog.node("dgx-h100").model_dump(mode="json", exclude_none=True)
    gpu["name"] = node["name"] = EVIL
    gpu["source"] = node["source"] = EVIL
    (cat / "evil.yaml").write_text(yaml.safe_dump({"gpu": [gpu], "node": [node]}))
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["plan", str(scen), "--out", str(out), "--catalog", str(cat)])
    assert res.exit_code == 0, res.output
    page = (out / "plan.html").read_text()
    assert "&lt;script&gt;alert" in page  # the name is shown, escaped
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert page.count("<script") == page.count("</script>")  # only our own scripts


def test_render_page_escapes_titles_and_warnings() -> None:
    from clustertwin.report.html import render_page

    page = render_page(EVIL, [{"title": EVIL, "rows": [(EVIL, EVIL)]}], subtitle=EVIL, warnings=[EVIL])
    assert "<script>alert" not in page and "<img src=x" not in page
    assert page.count("&lt;script&gt;alert") == 7  # <title>, h1, subtitle, warning, h2, row label, value


def test_compare_and_sweep_pages_escape_scenario_names(tmp_path: Path) -> None:
    """compare.html and sweep.html build their tables themselves: the same rule holds there."""
    import yaml

    doc = yaml.safe_load((Path(__file__).parents[2] / "examples" / "gpt3-175b-1024-a100.yaml").read_text())
    doc["name"] = EVIL
    doc.setdefault("reliability", {})["trials"] = 50
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(yaml.safe_dump(doc))
    doc["economics"] = {"cloud_usd_per_gpu_hour": 2.0}
    b.write_text(yaml.safe_dump(doc))
    runs = {"compare.html": ["compare", str(a), str(b), "--out", str(tmp_path / "c")],
            "sweep.html": ["sweep", str(a), "--set", "economics.cloud_usd_per_gpu_hour=2,3",
                           "--workers", "1", "--out", str(tmp_path / "s")]}
    for name, args in runs.items():
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        page = (Path(args[args.index("--out") + 1]) / name).read_text()
        assert "&lt;script&gt;alert" in page, name  # shown, escaped
        assert "<script>alert" not in page and "<img src=x" not in page, name


def test_control_characters_and_lone_surrogates_do_not_reach_a_page() -> None:
    """issue 19: HTML forbids C0/C1 controls and a lone surrogate cannot be written as UTF-8;
    both become U+FFFD through clustertwin.quoting.html_text."""
    from clustertwin.report.html import render_page

    evil = "a\x00b\x01c\x7f\x9b\ud800" + EVIL
    page = render_page(evil, [{"title": evil, "rows": [(evil, evil)]}], subtitle=evil, warnings=[evil])
    page.encode("utf-8")
    assert "<script>alert" not in page
    from plotly.offline import get_plotlyjs

    ours = page.replace(get_plotlyjs(), "")  # plotly.js itself holds a \x01 in a string
    assert not any(c in ours for c in "\x00\x01\x7f\x9b") and ours.count("\ufffd") >= 4


def test_svg_floor_plan_stays_well_formed_xml_with_a_hostile_name() -> None:
    import xml.etree.ElementTree as ET

    from clustertwin.drawings import floor_plan_svg
    from tests.export.helpers import design_of, scenario

    svg = floor_plan_svg(design_of(scenario(64)), name="x\x00\x0b" + EVIL + "\ud800]]>")
    root = ET.fromstring(svg.encode("utf-8"))
    assert root.tag.endswith("svg") and "&lt;script&gt;" in svg
