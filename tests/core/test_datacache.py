"""The parse cache of the package's own YAML files (issue 25, cold start): a cached document is
exactly the parsed one; new content, a changed parser or a damaged entry parse afresh; a folder
that cannot be written, or caching turned off, only costs the parse."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from clustertwin import datacache
from clustertwin.io import _load_packaged, _parser_id, read_packaged

SRC = Path(__file__).resolve().parents[2] / "src" / "clustertwin"
PACKAGED = sorted([*SRC.glob("catalog/data/*.yaml"), SRC / "design" / "data" / "design_rules.yaml",
                   *SRC.glob("buildout/data/*.yaml")])


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv(datacache.ENV, str(d))
    return d


@pytest.mark.parametrize("path", PACKAGED, ids=lambda p: p.name)
def test_cached_documents_equal_the_parse(folder: Path, path: Path) -> None:
    fresh = _load_packaged(path.read_text(encoding="utf-8"))
    first = read_packaged(path)      # parsed, then stored
    entries = list(folder.glob(f"{path.stem}-*.json"))
    assert len(entries) == 1
    second = read_packaged(path)     # from the entry
    assert first == fresh and second == fresh
    assert _types(second) == _types(fresh)


def _types(o):  # noqa: ANN001, ANN202 - the shape with each value's type
    if isinstance(o, dict):
        return {(type(k), k): _types(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_types(v) for v in o]
    return type(o)


def test_non_text_keys_dates_and_dollar_keys_round_trip(folder: Path, tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    p.write_text("steps:\n  1: {d: 2025-03-01, '$date': x}\n  2: [1.5, 2, true, null]\n")
    want = {"steps": {1: {"d": dt.date(2025, 3, 1), "$date": "x"}, 2: [1.5, 2, True, None]}}
    assert read_packaged(p) == want
    assert read_packaged(p) == want and len(list(folder.iterdir())) == 1


def test_new_content_or_parser_parses_afresh(folder: Path, tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    p.write_text("a: 1\n")
    assert read_packaged(p) == {"a": 1}
    p.write_text("a: 2\n")
    assert read_packaged(p) == {"a": 2}
    assert len(list(folder.glob("x-*.json"))) == 1   # the first content's entry is gone
    calls: list[str] = []
    parse = lambda text: calls.append(text) or {"a": 3}  # noqa: E731
    assert datacache.load(p, parse, _parser_id() + b"changed") == {"a": 3}
    assert calls == ["a: 2\n"]


def test_a_damaged_entry_is_parsed_again(folder: Path, tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    p.write_text("a: [1, 2]\n")
    read_packaged(p)
    (entry,) = folder.glob("x-*.json")
    for junk in ("{not json", '{"$date": "not a date"}', ""):
        entry.write_text(junk)
        assert read_packaged(p) == {"a": [1, 2]}
    assert entry.read_text().startswith("{")


def test_off_or_unwritable_folder_only_costs_the_parse(monkeypatch, tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    p.write_text("a: 1\n")
    monkeypatch.setenv(datacache.ENV, "off")
    assert read_packaged(p) == {"a": 1}
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(datacache.ENV, str(blocker / "sub"))  # a folder under a file
    assert read_packaged(p) == {"a": 1}
    assert not (tmp_path / "cache").exists()
    assert [f.name for f in tmp_path.iterdir() if f.name.endswith(".tmp")] == []


def test_default_folder_follows_xdg(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv(datacache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert datacache.cache_dir() == tmp_path / "clustertwin"
    assert os.fspath(datacache.cache_dir()).startswith(os.fspath(tmp_path))
