"""The one rule for every string that leaves the program.

Anything a user or a catalog supplies reaches an exported config, script or page only through
this module:

* **Identifiers** (scenario and catalog ids, host names, prefixes, ``--naming`` parts) must
  match :data:`IDENT_RE` -- ASCII letters, digits, ``.``, ``_`` and ``-``, starting with a
  letter or digit, at most :data:`IDENT_MAX` characters. :func:`check_identifier` enforces it
  at validation time with one clear error line. Such a value needs no quoting in any format
  we write (Slurm, YAML, INI, shell, Prometheus labels, file names).
* **Free text** (the scenario ``name``, descriptions) is written only as a comment made safe
  by :func:`comment_text`, or as a value through the target format's own emitter:
  :func:`shell_quote`, :func:`yaml_text`, :func:`json_text`, :func:`html_text`.

Every Unicode line break counts as a line break here: ``\\n \\r \\v \\f \\x1c-\\x1e \\x85
U+2028 U+2029`` -- YAML 1.1, JavaScript and Python's ``str.splitlines`` each honour some of
them, so none may reach an output raw where a line break would change its meaning.
"""

from __future__ import annotations

import html
import json
import re
import shlex
from typing import Any

from clustertwin.errors import Problem, ScenarioError, UserError

IDENT_MAX = 64
"""Longest identifier accepted (a DNS label is at most 63; catalog ids are far shorter)."""

IDENT_PATTERN = rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{IDENT_MAX - 1}}}"
IDENT_RE = re.compile(IDENT_PATTERN, re.ASCII)
"""An identifier, matched whole with ``IDENT_RE.fullmatch``."""

COMMENT_MAX = 200
"""Longest free text kept in a comment; longer text is cut and marked."""

#: form feed is no XML character (an SVG with one does not parse); bidi embeddings, overrides and
#: isolates (U+202A-202E, U+2066-2069) would let a name display reversed ("Trojan Source")
_HTML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
                       "\ud800-\udfff\ufffe\uffff]")


class IdentifierError(ScenarioError, ValueError):
    """An identifier outside :data:`IDENT_RE`. A ``ValueError`` too, so pydantic validators
    turn it into an ordinary validation problem with the key path attached."""


def _shown(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def identifier_problem(value: object, what: str) -> str | None:
    """Why ``value`` is not a valid identifier (one line), or None when it is."""
    if not isinstance(value, str):
        return f"{what} must be text (an identifier), got {type(value).__name__}"
    if IDENT_RE.fullmatch(value):
        return None
    return (f"{what} must be 1-{IDENT_MAX} ASCII letters, digits, '.', '_' or '-', starting "
            f"with a letter or digit; got {_shown(value)}")


def check_identifier(value: object, what: str, *, source: str = "",
                     error: type[UserError] = IdentifierError) -> str:
    """Return ``value`` when it is an identifier, else raise ``error`` (a user error) with one
    line naming ``what`` (e.g. ``"cluster.gpu"`` or ``"--naming prefix"``) and the rule."""
    problem = identifier_problem(value, what)
    if problem is not None:
        raise error(Problem(source, "", problem) if source else problem)
    return value  # type: ignore[return-value]


def comment_text(text: object, max_len: int = COMMENT_MAX) -> str:
    """``text`` as one line safe after ``#`` in any format we write: every line break and
    control/format character becomes a space, the result is stripped and cut to ``max_len``
    characters. It can never end the comment early.

    "Unsafe" is whatever Python does not call printable: Cc controls (``\\n \\r \\v \\f
    \\x1c-\\x1e \\x85``...), Cf format characters (bidi overrides, zero-width), lone
    surrogates, unassigned code points, U+2028/U+2029 and the non-ASCII spaces."""
    t = str(text)
    if not t.isprintable():
        t = "".join(c if c.isprintable() else " " for c in t)
    t = t.strip()
    return t if len(t) <= max_len else t[: max_len - 3] + "..."


#: a ``[`` after a backslash that does not open a rich markup tag: rich's renderer turns such
#: ``\[`` into ``[`` (its escape for a bare bracket), and ``rich.markup.escape`` leaves it
_BARE_BRACKET = re.compile(r"(?<=\\)\[(?![a-z#/@][^\[]*?\])")


def terminal_text(text: object, max_len: int = COMMENT_MAX) -> str:
    """Free text for a terminal line printed through rich: :func:`comment_text` (no escape
    sequence or line break reaches the terminal) with rich's markup brackets escaped, and a
    backslash before a bare bracket kept (``\\[1`` shows as typed, not as ``[1``)."""
    from rich.markup import escape

    return _BARE_BRACKET.sub(r"\\[", escape(comment_text(text, max_len)))


#: First characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) read a cell as
#: a formula or a DDE call (OWASP "CSV injection"): ``= + - @``, tab, CR and LF, and their
#: full-width (U+FF1D U+FF0B U+FF0D U+FF20) and small-form (U+FE66 U+FE62 U+FE63 U+FE6B)
#: lookalikes plus the minus sign U+2212, which input methods and some importers fold to ASCII.
FORMULA_START = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b\u2212")
_FORMULA_START = tuple(sorted(FORMULA_START))
#: a plain decimal number, the only text starting with ``+`` or ``-`` that stays as it is
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
#: control characters an XLSX cell cannot hold (openpyxl's ILLEGAL_CHARACTERS_RE) and that
#: no CSV reader shows usefully
_SHEET_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def spreadsheet_cell(value: object) -> object:
    """The one rule for every spreadsheet cell clustertwin writes (CSV and XLSX alike).

    Numbers (``int``, ``float``) and ``None`` pass unchanged: numbers stay numbers. Text that a
    spreadsheet would run -- whose first character, or first character after leading
    whitespace, is in :data:`FORMULA_START` -- gets a leading ``'`` (OWASP's rule; Excel and
    LibreOffice show the text as typed), unless it is a plain decimal number (``-1.5``,
    ``+3``). Control characters an XLSX cannot hold become U+FFFD. The CSV writer does the
    quoting of commas and quotes; an XLSX writer must store the result as a string cell
    (``data_type 's'``), never a formula."""
    if value is None or isinstance(value, int | float):
        return value
    t = value if isinstance(value, str) else str(value)
    if _SHEET_BAD.search(t):
        t = _SHEET_BAD.sub("\ufffd", t)
    if t[:1] in FORMULA_START or t.lstrip()[:1] in FORMULA_START:
        if not _PLAIN_NUMBER.fullmatch(t):
            return "'" + t
    return t


csv_cell = spreadsheet_cell
"""The same rule under its older name (``csv_cell``)."""


def spreadsheet_row(values: Any) -> list[object]:
    """:func:`spreadsheet_cell` of each value of a row (a header too)."""
    return [spreadsheet_cell(v) for v in values]


class SheetWriter:
    """``csv.writer`` with every cell (header rows too) through :func:`spreadsheet_cell`: the
    only CSV writer the product uses (``tests/core/test_quoting.py`` checks no other module
    makes its own)."""

    def __init__(self, fh: Any, **options: Any) -> None:
        import csv

        options.setdefault("lineterminator", "\n")
        self._fh, self._term = fh, options["lineterminator"]
        self._w = csv.writer(fh, **options)
        # csv quotes a field only for the line terminator's own characters: a lone CR in a
        # field under "\n" rows would be written bare and break the row for every reader
        self._last = _LastLine()
        self._cr = None if "\r" in self._term else csv.writer(
            self._last, **{**options, "lineterminator": "\r\n"})

    def writerow(self, row: Any) -> Any:
        cells = spreadsheet_row(row)
        if self._cr is not None and any(isinstance(c, str) and "\r" in c for c in cells):
            self._cr.writerow(cells)
            return self._fh.write(self._last.text[:-2] + self._term)
        return self._w.writerow(cells)

    def writerows(self, rows: Any) -> None:
        for row in rows:
            self.writerow(row)


class _LastLine:
    """A file-like object keeping the last text written (one CSV row)."""

    text = ""

    def write(self, text: str) -> int:
        self.text = text
        return len(text)


def csv_writer(fh: Any, **options: Any) -> SheetWriter:
    """A :class:`SheetWriter` on ``fh`` (``csv.writer`` options; lines end in ``\\n``)."""
    return SheetWriter(fh, **options)


def csv_field(value: object) -> str:
    """One CSV field as text, for writers that join rows themselves (fast paths over 10^6
    rows): :func:`spreadsheet_cell`, then quoted as ``csv.writer`` quotes (in double quotes,
    quotes doubled) when it holds a comma, quote or line break."""
    v = spreadsheet_cell(value)
    t = "" if v is None else (repr(v) if isinstance(v, float) else str(v))
    if any(c in t for c in ',"\r\n'):
        return '"' + t.replace('"', '""') + '"'
    return t


def csv_text_column(values: list[str]) -> list[str]:
    """:func:`csv_field` of a column of text for the fast paths: each distinct value is
    escaped once; the list itself comes back when nothing needed escaping (the usual case,
    identifiers), so a million-row column costs one pass building a set."""
    fields = {v: csv_field(v) for v in set(values)}
    if all(k == f for k, f in fields.items()):
        return values
    return [fields[v] for v in values]


def shell_quote(s: object) -> str:
    """One POSIX shell word that stands for exactly ``s`` (``/bin/sh`` and bash alike):
    single-quoted, so ``$(...)``, backticks, ``;`` and quotes stay literal. A line break
    inside stays inside the quotes. A NUL cannot be carried by a shell word: ValueError."""
    t = str(s)
    if "\x00" in t:
        raise ValueError("a shell word cannot contain a NUL character")
    return shlex.quote(t)


def yaml_text(obj: Any, *, sort_keys: bool = False, **options: Any) -> str:
    """``obj`` as YAML through PyYAML's safe emitter, ASCII only: every non-ASCII character
    and line break inside a string is written as an escape (``\\L``, ``\\P``, ``\\r``,
    ``\\uXXXX``) so no parser, 1.1 or 1.2, sees a break the emitter did not write. Long
    strings are not folded, so a value never spans lines."""
    kw: dict[str, Any] = {"default_flow_style": False, "width": 1_000_000_000}
    kw.update(options)
    kw.update(allow_unicode=False, sort_keys=sort_keys, Dumper=_yaml_dumper())
    import yaml

    return yaml.dump(obj, **kw)


def terminal_yaml(docs: list[Any]) -> str:
    """Documents as YAML for a terminal: readable Unicode when every string in them is
    printable (line breaks and tabs aside); otherwise all of it as :func:`yaml_text` writes
    it (ASCII escapes), so no bidi override, line separator or control character from a
    user's catalog reaches the terminal."""
    import yaml

    if all(_printable(d) for d in docs):
        return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True)
    return "---\n".join(yaml_text(d) for d in docs)


def _printable(o: Any) -> bool:
    if isinstance(o, str):
        return o.replace("\n", "").replace("\t", "").isprintable()
    if isinstance(o, dict):
        return all(_printable(k) and _printable(v) for k, v in o.items())
    if isinstance(o, list | tuple):
        return all(_printable(v) for v in o)
    return True


_YAML_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*", re.ASCII)
_YAML_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}


def yaml_scalar(s: str) -> str:
    """One string as a one-line YAML scalar, for hand-rolled fast emitters: plain when it is a
    plain identifier that YAML reads back as the same string, else a JSON string (ASCII, every
    line break escaped), which YAML reads as a double-quoted scalar."""
    if _YAML_PLAIN.fullmatch(s) and s.lower() not in _YAML_RESERVED:
        return s
    return json.dumps(s, ensure_ascii=True)


_DUMPER: list[type] = []


def _yaml_dumper() -> type:
    """A SafeDumper that writes any string holding a line break or control character in
    double quotes, where each one is an escape (plain ASCII ``\\n`` included)."""
    if not _DUMPER:
        import yaml

        class _Dumper(yaml.SafeDumper):
            pass

        def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
            style = None if value.isprintable() else '"'
            return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

        _Dumper.add_representer(str, _str)
        _DUMPER.append(_Dumper)
    return _DUMPER[0]


def json_text(obj: Any, *, indent: int | None = 2, sort_keys: bool = False,
              allow_nan: bool = False) -> str:
    """``obj`` as JSON, ASCII only, with ``<``, ``>`` and ``&`` escaped (``\\u003c``...) so
    the text is also safe inside an HTML ``<script>`` element. NaN/Infinity are not JSON:
    ValueError unless ``allow_nan``."""
    text = json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=True,
                      allow_nan=allow_nan)
    # these three occur only inside JSON strings, where the escapes mean the same thing
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def html_text(s: object) -> str:
    """``s`` escaped for HTML text and quoted attribute values (``& < > " '``); control
    characters that HTML and XML forbid (C0 but tab, LF and CR, DEL, C1), bidi overrides, lone
    surrogates and U+FFFE/U+FFFF become U+FFFD, so the text also stays well-formed XML (SVG)."""
    return html.escape(_HTML_BAD.sub("\ufffd", str(s)), quote=True)


def yaml_roundtrip(text: str, doc: Any) -> str:
    """``doc`` written over the YAML ``text`` it was edited from, keeping the text's comments,
    key order and layout where the values did not change (ruamel.yaml's round-trip mode): keys
    the document dropped are removed, changed values replaced, new keys added. Falls back to
    :func:`yaml_text` when the text is not a mapping ruamel reads, or when the result would
    not read back as ``doc`` (what a user typed never reaches the text but as a YAML value)."""
    import io

    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    rt = YAML(typ="rt")
    rt.width = 1_000_000_000
    rt.allow_unicode = False  # as yaml_text: non-ASCII written as escapes
    try:
        tree = rt.load(text)
    except (YAMLError, ValueError, TypeError):
        tree = None
    if not isinstance(tree, dict) or not isinstance(doc, dict):
        return yaml_text(doc)
    _sync(tree, doc)
    out = io.StringIO()
    rt.dump(tree, out)
    written = out.getvalue()
    safe = YAML(typ="safe", pure=True)
    try:
        same = safe.load(written) == safe.load(yaml_text(doc))
    except YAMLError:
        same = False
    return written if same else yaml_text(doc)


def _sync(tree: Any, doc: dict[str, Any], depth: int = 0) -> None:
    """Make the ruamel mapping ``tree`` equal ``doc`` in place, touching only what differs."""
    for key in [k for k in tree if k not in doc]:
        del tree[key]
    for key, value in doc.items():
        old = tree.get(key) if key in tree else None
        if isinstance(old, dict) and isinstance(value, dict) and depth < 64:
            _sync(old, value, depth + 1)
        elif key not in tree or old != value or isinstance(old, bool) != isinstance(value, bool):
            tree[key] = value
