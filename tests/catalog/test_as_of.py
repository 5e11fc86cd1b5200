"""``as_of`` (and ``price_as_of`` / ``achieved_as_of``) say when a figure was true: a date as
YYYY, YYYY-MM or YYYY-MM-DD, never free text; an unquoted YAML date is the same date."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from clustertwin.catalog import load_catalog
from clustertwin.cli import app

GPU = """gpu:
  - id: my-gpu
    name: test part
    vendor: nvidia
    generation: hopper
    form: sxm
    peak_tflops: {{bf16: 900}}
    hbm_gib: 80
    hbm_tb_per_s: 3.0
    nvlink_gb_per_s: 900
    tdp_w: 700
    source: a datasheet
    as_of: {as_of}
    price_as_of: {price_as_of}
"""


def _folder(tmp_path: Path, as_of: str, price_as_of: str = '""') -> Path:
    d = tmp_path / "cat"
    d.mkdir()
    (d / "gpus.yaml").write_text(GPU.format(as_of=as_of, price_as_of=price_as_of))
    return d


def test_every_built_in_entry_carries_a_date():
    cat = load_catalog()
    for kind in cat.kinds():
        for entry in cat.all(kind):
            assert entry.as_of[:4].isdigit(), (kind, entry.id, entry.as_of)


@pytest.mark.parametrize("as_of,price_as_of", [("2024", '""'), ('"2024-10"', "2024-10-01"),
                                               ("2024-10-01", "2025")])
def test_dates_accepted(tmp_path: Path, as_of: str, price_as_of: str):
    entry = load_catalog([_folder(tmp_path, as_of, price_as_of)]).get("gpu", "my-gpu")
    assert entry.as_of[:4] == "2024"


@pytest.mark.parametrize("as_of,price_as_of,key", [
    ("sometime last year", '""', "as_of"), ('"2024-13"', '""', "as_of"), ('""', '""', "as_of"),
    ("2024", "soon", "price_as_of"), ('"2024-2025"', '""', "as_of"),
])
def test_free_text_is_refused_with_one_line(tmp_path: Path, as_of: str, price_as_of: str, key: str):
    res = CliRunner().invoke(app, ["catalog", "list", "gpu", "--catalog",
                                   str(_folder(tmp_path, as_of, price_as_of))])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and f"gpu[my-gpu].{key}" in lines[0] and "YYYY-MM" in lines[0]
