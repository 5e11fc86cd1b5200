"""Downloads from the page are the CLI's files, byte for byte (serve/files.py)."""

from __future__ import annotations

import io
import zipfile
from urllib.parse import urlencode

import pytest

from clustertwin.scenario import DEFAULT_SCENARIO

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    """``clustertwin plan --out`` and ``clustertwin export all --out`` of the default scenario."""
    from typer.testing import CliRunner

    from clustertwin.cli import app

    out = tmp_path_factory.mktemp("cli")
    runner = CliRunner()
    for args in (["plan", str(DEFAULT_SCENARIO), "--out", str(out / "plan")],
                 ["export", "all", str(DEFAULT_SCENARIO), "--out", str(out / "export")]):
        got = runner.invoke(app, args)
        assert got.exit_code == 0, got.output
    return out


def _download(server, name: str, **fields: str):
    return server.request(f"/files/{name}", urlencode({"yaml": DEFAULT_SCENARIO.read_text(), **fields}), FORM)


@pytest.mark.parametrize("name, folder", [
    ("plan.json", "plan"), ("plan.html", "plan"), ("bom.csv", "export"), ("bom.xlsx", "export"),
    ("floor-plan.svg", "export"), ("rack-elevations.svg", "export"), ("topology.svg", "export"),
])
def test_each_download_equals_the_cli_file(server, cli_files, name, folder):
    r = _download(server, name)
    assert r.status == 200, r.body[:300]
    assert r.headers["content-disposition"] == f'attachment; filename="{name}"'
    assert r.body == (cli_files / folder / name).read_bytes()


def test_the_export_zip_holds_every_file_export_all_writes(server, cli_files):
    r = _download(server, "export-all.zip")
    assert r.status == 200
    with zipfile.ZipFile(io.BytesIO(r.body)) as zf:
        names = sorted(zf.namelist())
        written = sorted(p.name for p in (cli_files / "export").iterdir() if not p.name.startswith("."))
        assert names == written
        for n in names:
            assert zf.read(n) == (cli_files / "export" / n).read_bytes(), n
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}  # the same scenario, the same archive


def test_a_download_follows_the_fields_and_refuses_what_is_not_a_file(server):
    edited = _download(server, "plan.json", **{"cluster.gpus": "8192"})
    assert edited.status == 200 and b'"gpus": 8192' in edited.body
    assert _download(server, "../etc/passwd").status == 404
    assert _download(server, "plan.json", **{"cluster.gpus": "-1"}).status in (400, 422)


def test_the_sweep_tables_equal_the_cli_sweep(server, tmp_path):
    """The page's sweep.csv and sweep.parquet are the files ``clustertwin sweep --set`` writes."""
    import re
    import time

    from typer.testing import CliRunner

    from clustertwin.cli import app

    got = CliRunner().invoke(app, ["sweep", str(DEFAULT_SCENARIO), "--set", "cluster.gpus=8192",
                                   "--out", str(tmp_path)])
    assert got.exit_code == 0, got.output
    form = {"base": "built-in-default", "axis1_key": "cluster.gpus", "axis1_values": "8192"}
    page = server.request("/sweep/start", urlencode(form), FORM).body.decode()
    job = re.search(r'/sweep/([0-9a-f]{16})', page).group(1)
    deadline = time.monotonic() + 120
    while 'id="sweep-done"' not in page:
        assert time.monotonic() < deadline, "the sweep did not finish in 120 s"
        time.sleep(0.3)
        page = server.request(f"/sweep/{job}").body.decode()
    assert 'id="sweep-best"' in page
    for name in ("sweep.csv", "sweep.parquet"):
        r = server.request(f"/sweep/{job}/{name}")
        assert r.status == 200 and r.body == (tmp_path / name).read_bytes(), name
    assert server.request(f"/sweep/{job}/sweep.html").status == 404


def test_the_answer_draws_the_figures_and_drawings_of_plan_html(server, cli_files):
    """One chart path: every figure of the page's answer is plan.html's figure (the div id is
    a hash of the styled figure), and the drawings are the same SVGs."""
    import re

    answer = server.request("/answer", urlencode({"yaml": DEFAULT_SCENARIO.read_text()}), FORM).body.decode()
    page = (cli_files / "plan" / "plan.html").read_text()
    ids = re.compile(r'id="(fig-[0-9a-f]{16})"')
    assert set(ids.findall(answer)) == set(ids.findall(page)) and len(set(ids.findall(page))) >= 5
    svgs = re.compile(r"<svg\b.*?</svg>", re.S)
    drawn = svgs.findall(answer)
    assert len(drawn) >= 3 and all(svg in page for svg in drawn)
