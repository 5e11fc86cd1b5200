"""clustertwin.quoting: the one escaping/validation rule, checked with hostile strings."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustertwin.errors import ScenarioError, UsageError
from clustertwin.quoting import (
    IDENT_MAX,
    IDENT_RE,
    IdentifierError,
    check_identifier,
    comment_text,
    html_text,
    json_text,
    shell_quote,
    yaml_text,
)

LINE_BREAKS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
HOSTILE_BITS = LINE_BREAKS + [
    "\x00", "\t", "\x1b[31m", "$(touch /tmp/pwned)", "`id`", "'", '"', "\\", ";", "&&", "|",
    "#", "<script>", "</script>", "&amp;", "{{", "}}", "${HOME}", "\u202e", "\u200b", "\ufeff",
    "\ud800", "SlurmctldHost=evil", "- name: x", "]]>", "--", "*", "?", "a", "Z", "9", " ", "é",
]
hostile = st.lists(st.sampled_from(HOSTILE_BITS) | st.text(max_size=4), max_size=12).map("".join)

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("good", ["h100-sxm-80gb", "dgx-h100", "a", "node_01.rack-2", "9x",
                                  "a" * IDENT_MAX])
def test_identifier_accepts_the_documented_pattern(good):
    assert check_identifier(good, "cluster.gpu") == good


@pytest.mark.parametrize("bad", ["", "-leading-dash", ".hidden", "a b", "gpu\nSlurmctldHost=x",
                                 "gpu\u2028x", "gpu\r", "\u0430100",  # Cyrillic look-alike 'a'
                                 "h100$(id)", "x/y", "a" * (IDENT_MAX + 1), "ａ1", "gpu\x00",
                                 "ok\n"])
def test_identifier_rejects_with_one_line_naming_the_field(bad):
    with pytest.raises(IdentifierError) as info:
        check_identifier(bad, "cluster.gpu")
    (line,) = info.value.lines()
    assert "cluster.gpu" in line and "\n" not in line and "\u2028" not in line
    assert isinstance(info.value, ScenarioError) and isinstance(info.value, ValueError)


def test_identifier_rejects_non_text_and_can_raise_a_usage_error():
    with pytest.raises(IdentifierError, match="must be text"):
        check_identifier(12, "cluster.gpu")
    with pytest.raises(UsageError, match="--naming prefix"):
        check_identifier("a;b", "--naming prefix", error=UsageError)


@FAST
@given(hostile)
def test_identifier_check_agrees_with_the_pattern(s):
    ok = bool(IDENT_RE.fullmatch(s))
    if ok:
        assert check_identifier(s, "x") == s
        assert s.isascii() and s.isprintable() and len(s) <= IDENT_MAX
    else:
        with pytest.raises(IdentifierError):
            check_identifier(s, "x")


@FAST
@given(hostile)
def test_comment_text_is_one_printable_line(s):
    c = comment_text(s)
    assert len(c.splitlines()) <= 1 and c.isprintable()
    assert c == c.strip() and len(c) <= 200
    c.encode("utf-8")  # lone surrogates are gone
    # inside a shell comment it runs nothing and a YAML comment keeps the document empty
    assert yaml.safe_load(f"# {c}\n") is None


def test_comment_text_keeps_ordinary_text():
    assert comment_text("llama3 405B, 16k GPUs (Zürich)") == "llama3 405B, 16k GPUs (Zürich)"
    assert comment_text("a\u2028SlurmctldHost=evil") == "a SlurmctldHost=evil"


@FAST
@given(hostile.filter(lambda s: "\x00" not in s))
def test_shell_quote_round_trips_through_sh(s):
    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("no /bin/sh on this machine")
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return  # a lone surrogate cannot be an argument of any process
    out = subprocess.run([sh, "-c", f"printf %s {shell_quote(s)}"], capture_output=True,
                         check=True).stdout
    assert out.decode("utf-8") == s


def test_shell_quote_refuses_nul():
    with pytest.raises(ValueError):
        shell_quote("a\x00b")


@FAST
@given(st.dictionaries(st.from_regex(IDENT_RE, fullmatch=True),
                       hostile | st.integers() | st.lists(hostile, max_size=3), max_size=4),
       hostile)
def test_yaml_text_round_trips_ascii_one_line_per_key(d, name):
    doc = {"name": name, "data": d}
    text = yaml_text(doc)
    assert text.isascii()
    assert yaml.safe_load(text) == doc
    # our keys each start one line and no hostile value breaks a line
    clean = yaml_text({"name": "x", "data": {f"k{i}": "v" for i in range(len(d))}})
    assert text.count("\n") >= 2 and len(text.splitlines()) == len(text.split("\n")) - 1
    if all(not isinstance(v, list) for v in d.values()):
        assert len(text.splitlines()) == len(clean.splitlines())


@FAST
@given(st.dictionaries(hostile, hostile | st.floats(allow_nan=False, allow_infinity=False)))
def test_json_text_round_trips_and_is_script_safe(d):
    text = json_text(d)
    assert text.isascii() and json.loads(text) == d
    assert "<" not in text and ">" not in text and "&" not in text


def test_json_text_refuses_nan_unless_asked():
    with pytest.raises(ValueError):
        json_text({"x": float("nan")})
    assert json_text({"x": float("nan")}, allow_nan=True, indent=None) == '{"x": NaN}'


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.attrs = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


@FAST
@given(hostile)
def test_html_text_adds_no_markup(s):
    safe = html_text(s)
    page = f'<p title="{safe}">{safe}</p>'
    p = _Collect()
    p.feed(page)
    p.close()
    assert p.tags == ["p"] and len(p.attrs) == 1
    safe.encode("utf-8")
    # the text reads back as the input, bar the characters HTML cannot carry
    assert "".join(p.text).replace("\ufffd", "") == "".join(
        c for c in s if c == "\ufffd" or html_text(c) != "\ufffd").replace("\ufffd", "")


@FAST
@given(hostile)
def test_terminal_text_prints_as_one_line_with_no_escape_or_markup(s):
    import io

    from rich.console import Console

    from clustertwin.quoting import terminal_text

    buf = io.StringIO()
    Console(file=buf, force_terminal=False, width=10_000).print(terminal_text(s), end="")
    shown = buf.getvalue()
    assert "\x1b" not in shown and len(shown.splitlines()) <= 1
    # markup brackets shown as typed, nothing styled away (rich doubles a trailing backslash)
    assert shown.rstrip("\\") == comment_text(s).rstrip("\\")


@pytest.mark.parametrize(("value", "cell"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1+2", "'+1+2"),
    ("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
    ("-1.5", "-1.5"), ("+3", "+3"), ("plain", "plain"), (-2, -2), (None, None)])
def test_csv_cell_defuses_formulas_and_keeps_numbers(value, cell):
    from clustertwin.quoting import csv_cell

    assert csv_cell(value) == cell


def test_escaping_lives_in_one_module():
    """House rule: every exported string goes through clustertwin.quoting; no other module
    calls html.escape or shlex.quote itself (a second, drifting rule)."""
    import re
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src" / "clustertwin"
    pattern = re.compile(r"\bhtml\.escape\(|\bshlex\.quote\(|^\s*import html\b|^from html import",
                         re.MULTILINE)
    offenders = [str(p.relative_to(src)) for p in src.rglob("*.py")
                 if p.name != "quoting.py" and pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
