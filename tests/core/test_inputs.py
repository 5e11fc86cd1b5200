"""The input layer: hostile documents are one ScenarioError line each, never a traceback,
a crash or a hang. Regression cases from the issue-15 fuzzing are pinned here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clustertwin.errors import ScenarioError
from clustertwin.io import parse_text, read_document

BAD_YAML = {
    "duplicate-key": ("a: 1\na: 2", "a", "duplicate key"),
    "timestamp-tag-on-text": ("a: !!timestamp foo", "a", "timestamp"),
    "float-tag-on-text": ("a:\n  b: !!float abc", "a.b", "float"),
    "int-tag-bad-hex": ("a: !!int 0x1g", "a", "int"),
    "int-4301-digits": ("a: " + "9" * 5000, "a", "4,300 digits"),
    "int-over-2^63": ("a: 9223372036854775809", "a", "too large"),
    "denormal-float": ("a: 1e-320", "a", "denormal"),
    "invalid-date": ("start: 2027-02-30", "start", "day is out of range"),
    "nan": ("x: .nan", "x", "finite"),
    "inf-in-list": ("p:\n  q: [1, .inf]", "p.q[1]", "finite"),
    "python-tag": ("a: !!python/object:os.system x", "a", "constructor"),
    "recursive-alias": ("a: &x [*x]", "a[0]", "itself"),
    "binary-garbage": ("a: !!binary xx", "a", "base64"),
}


@pytest.mark.parametrize("text,path,msg", BAD_YAML.values(), ids=BAD_YAML.keys())
def test_bad_yaml_is_one_line_with_key(text: str, path: str, msg: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        parse_text(text, "f.yaml")
    lines = exc.value.lines()
    assert len(lines) == 1
    assert lines[0].startswith(f"f.yaml: {path}: "), lines
    assert msg in lines[0]


@pytest.mark.parametrize("text", ["[" * 30000 + "]" * 30000, "- " * 30000 + "x",
                                  "{a: " * 30000 + "1" + "}" * 30000],
                         ids=["flow-seq-30000", "block-seq-30000", "flow-map-30000"])
def test_deep_nesting_refused_before_the_c_composer(text: str) -> None:
    """Depth 30,000 crashed (SIGSEGV) libyaml's composer; the event scan stops at depth 64."""
    with pytest.raises(ScenarioError, match="nested more than 64"):
        parse_text(text, "deep.yaml")


def test_billion_laughs_refused() -> None:
    lines = ["a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]"]
    prev = "a"
    for name in "bcdefgh":
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
        prev = name
    with pytest.raises(ScenarioError, match="once aliases are expanded"):
        parse_text("\n".join(lines), "laughs.yaml")


def test_yaml_1_1_booleans_stay_text() -> None:
    doc = parse_text("a: yes\nb: no\nc: on\nd: off\ne: true\nf: False\ng: 15.6e12", "f.yaml")
    assert doc == {"a": "yes", "b": "no", "c": "on", "d": "off", "e": True, "f": False,
                   "g": 15.6e12}


@pytest.mark.parametrize("text,msg", [("a = nan", "finite"), ("a = 99999999999999999999999", "too large"),
                                      ("a = " + "[" * 5000 + "]" * 5000, "TOML")],
                         ids=["toml-nan", "toml-huge-int", "toml-deep"])
def test_toml_checked_alike(text: str, msg: str) -> None:
    with pytest.raises(ScenarioError, match=msg) as exc:
        parse_text(text, "f.toml", "toml")
    assert len(exc.value.lines()) == 1


def test_non_regular_and_oversized_files(tmp_path: Path) -> None:
    fifo = tmp_path / "s.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ScenarioError, match="not a regular file"):
        read_document(fifo)  # would block forever if opened
    with pytest.raises(ScenarioError, match="is a folder"):
        read_document(tmp_path)
    big = tmp_path / "big.yaml"
    big.write_text("a: 1\n" * 100)
    with pytest.raises(ScenarioError, match="at most 100 bytes"):
        read_document(big, max_bytes=100)
    bad = tmp_path / "latin.yaml"
    bad.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ScenarioError, match="UTF-8"):
        read_document(bad)
