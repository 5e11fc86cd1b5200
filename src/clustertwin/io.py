"""The one input layer: every document the tool reads (scenarios, catalog files, step and rule
tables, measured results) goes through :func:`read_document` / :func:`read_text`.

Hostile or careless input never crashes, hangs or is silently misread:

* size is checked before reading (``max_bytes``) and only regular files are read (a FIFO or a
  device would block or never end);
* nesting depth and alias count are checked on the YAML event stream *before* the document is
  built (the C composer recurses per level and crashes near depth 30,000; aliases can expand a
  small file exponentially);
* every loader failure (YAML tags such as ``!!timestamp``/``!!float`` on bad text, ``!!int 0x1g``,
  integers of more than 4,300 digits, dates such as 2027-02-30, duplicate keys) is one
  :class:`ScenarioError` line naming the file, the key path and the line;
* ``yes``/``no``/``on``/``off`` stay strings (YAML 1.2): only ``true``/``false`` are booleans;
* every number in the document is checked: finite (no ``.nan``/``.inf``), not denormal, integers
  within 2**63.
"""

from __future__ import annotations

import functools
import math
import os
import re
import stat
import sys
import types
import typing
from pathlib import Path
from typing import Any

import yaml

from clustertwin.errors import Problem, ScenarioError

try:  # the C loader is ~10x faster; fall back when libyaml is absent
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024  #: scenario and catalog documents
MAX_DEPTH = 64  #: nesting of mappings/sequences
MAX_ALIASES = 1000
MAX_NODES = 2_000_000  #: values in the document once aliases are expanded
MAX_INT = 2**63


def _fail(source: str, path: str, message: str) -> ScenarioError:
    if len(path) > 80:
        path = path[:38] + "..." + path[-38:]
    return ScenarioError([Problem(source, path, message)])


class _NumberLoader(_Loader):  # type: ignore[misc, valid-type]
    """YAML 1.1 reads ``15.6e12`` (no dot in the mantissa or no sign in the exponent) as a
    string; YAML 1.2 and every user read it as a float. This loader follows the users; it also
    reads booleans as YAML 1.2 does (``yes``/``no``/``on``/``off`` are text), refuses duplicate
    keys and turns constructor failures into YAML errors with a position."""

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except (ValueError, OverflowError, TypeError, ArithmeticError, AttributeError, KeyError,
                IndexError) as exc:  # constructors fail on text their tag cannot hold
            tag = str(node.tag).rsplit(":", 1)[-1]
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if not isinstance(exc, ValueError | OverflowError):
                why = "not a valid value for this tag"
            elif "digits" in why and "limit" in why.lower():
                why = "an integer with more than 4,300 digits"
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {str(node.value)[:40]!r} as {tag}: {why}",
                node.start_mark) from None

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: set[tuple[str, str]] = set()
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                    continue
                ident = (key_node.tag, key_node.value)
                if ident in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key_node.value!r} (a key may appear once)",
                        key_node.start_mark)
                seen.add(ident)
        return super().construct_mapping(node, deep)


_FLOAT_RE = r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
|\.[0-9_]+(?:[eE][-+]?[0-9]+)?
|[-+]?\.(?:inf|Inf|INF)
|\.(?:nan|NaN|NAN))$"""
_BOOL_TAG = "tag:yaml.org,2002:bool"

_NumberLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(_FLOAT_RE, re.X), list("-+0123456789.")
)
_NumberLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in rules if tag != _BOOL_TAG]
    for first, rules in _NumberLoader.yaml_implicit_resolvers.items()
}
_NumberLoader.add_implicit_resolver(
    _BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def _join(parent: str, key: Any) -> str:
    return f"{parent}.{key}" if parent else str(key)


# Quoted scalars and comments, whose brackets are text, not structure.
_NOT_FLOW = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"\\]|\\.)*\"|(?:^|(?<=\s))#[^\n]*", re.M)


def _flow_depth_bound(text: str, source: str) -> None:
    """Refuse flow nesting (``[[[...`` / ``{a: {a: ...``) deeper than MAX_DEPTH from the raw text.

    The YAML scanner reads ahead in flow context before the event scan below sees a single
    collection, and each libyaml release stops it at its own depth with its own words; this
    bound gives the same answer whatever the library does. Brackets inside quoted scalars and
    comments are skipped; a plain scalar with 65 unmatched brackets is refused too (harmless).
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for line_no, line in enumerate(_NOT_FLOW.sub(" ", text).splitlines()):
        for ch in line:
            if ch in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    raise _fail(source, "", f"nested more than {MAX_DEPTH} levels deep "
                                f"(line {line_no + 1})")
            elif ch in "]}":
                depth = max(0, depth - 1)


def _scan(text: str, source: str) -> dict[tuple[int, int], str]:
    """Walk the YAML event stream (no tree is built) checking depth and aliases; return the key
    path of every node by its (line, column), for error messages."""
    paths: dict[tuple[int, int], str] = {}
    stack: list[list[Any]] = []  # [kind, path, index | expecting_key, current_key]
    aliases = 0
    for ev in yaml.parse(text, Loader=_Loader):
        if isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            stack.pop()
            continue
        if not isinstance(ev, (yaml.ScalarEvent, yaml.AliasEvent, yaml.CollectionStartEvent)):
            continue
        path = ""
        if stack:
            top = stack[-1]
            if top[0] == "seq":
                path = f"{top[1]}[{top[2]}]"
                top[2] += 1
            elif top[2]:  # a key
                top[3] = ev.value if isinstance(ev, yaml.ScalarEvent) else "?"
                path = _join(top[1], top[3])
                top[2] = False
            else:
                path = _join(top[1], top[3])
                top[2] = True
        mark = ev.start_mark
        paths[(mark.line, mark.column)] = path
        if isinstance(ev, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise _fail(source, path, f"more than {MAX_ALIASES} aliases (*name); expand them")
        elif isinstance(ev, yaml.CollectionStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise _fail(source, path, f"nested more than {MAX_DEPTH} levels deep "
                            f"(line {mark.line + 1})")
            kind = "seq" if isinstance(ev, yaml.SequenceStartEvent) else "map"
            stack.append([kind, path, 0 if kind == "seq" else True, None])
    return paths


def _yaml_problem(exc: yaml.YAMLError, source: str, paths: dict[tuple[int, int], str]) -> ScenarioError:
    # a MarkedYAMLError (scanner, parser) says where and what; a bare YAMLError neither
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
    what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    key = paths.get((mark.line, mark.column), "") if mark else ""
    return _fail(source, key, f"not valid YAML{where}: {what}")


def _parse_yaml(text: str, source: str) -> Any:
    paths: dict[tuple[int, int], str] = {}
    try:
        _flow_depth_bound(text, source)
        paths = _scan(text, source)
        return yaml.load(text, Loader=_NumberLoader)  # noqa: S506 - safe loader subclass
    except yaml.YAMLError as exc:
        raise _yaml_problem(exc, source, paths) from None
    except RecursionError:
        raise _fail(source, "", "nested too deeply") from None


def _number_problem(v: Any) -> str | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return None if -MAX_INT <= v <= MAX_INT else "integer too large (at most 2**63 in size)"
    if isinstance(v, float):
        if not math.isfinite(v):
            return f"not a finite number (got {v!r}); give a number"
        if v != 0.0 and abs(v) < sys.float_info.min:
            return f"{v!r} is too small to compute with (a denormal number); use 0 or a larger value"
    return None


def check_tree(doc: Any, source: str, numbers: str = "raise") -> list[Problem]:
    """Depth, size, cycles and every number of a parsed document; all problems at once.
    Structure problems always raise; number problems raise too unless ``numbers="collect"``,
    which returns them so a caller can report them with the schema's own problems."""
    problems: list[Problem] = []
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def walk(o: Any, path: str, depth: int) -> int:
        if isinstance(o, dict | list):
            if id(o) in sizes:
                return sizes[id(o)]
            if id(o) in active:
                raise _fail(source, path, "refers to itself (a recursive alias)")
            if depth > MAX_DEPTH:
                raise _fail(source, path, f"nested more than {MAX_DEPTH} levels deep")
            active.add(id(o))
            items = o.items() if isinstance(o, dict) else enumerate(o)
            n = 1
            for k, v in items:
                sub = _join(path, k) if isinstance(o, dict) else f"{path}[{k}]"
                n += walk(v, sub, depth + 1)
                if n > MAX_NODES:
                    raise _fail(source, path, f"more than {MAX_NODES:,} values once aliases are expanded")
            active.discard(id(o))
            sizes[id(o)] = n
            return n
        msg = _number_problem(o)
        if msg:
            problems.append(Problem(source, path, msg))
        return 1

    walk(doc, "", 0)
    if problems and numbers == "raise":
        raise ScenarioError(problems)
    return problems


def parse_text(text: str, source: str, fmt: str = "yaml", numbers: str = "raise") -> Any:
    """Parse YAML or TOML text into checked Python objects; every problem is a ScenarioError
    naming the file, the key and the line."""
    if fmt == "toml":
        import tomllib  # only for .toml files: most commands never read one

        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise _fail(source, "", f"not valid TOML: {exc}") from None
        except (RecursionError, ValueError, OverflowError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else "a value out of range"
            raise _fail(source, "", f"not valid TOML: {why}") from None
    else:
        doc = _parse_yaml(text, source)
    bad = check_tree(doc, source, numbers)
    return (doc, bad) if numbers == "collect" else doc


def read_text(path: str | Path, max_bytes: int = MAX_DOCUMENT_BYTES, what: str = "file") -> str:
    """Read a UTF-8 text file of at most ``max_bytes`` (a regular file; links to one are fine)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise _fail(str(p), "", "file not found") from None
    except OSError as exc:
        raise _fail(str(p), "", f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise _fail(str(p), "", f"is a folder, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise _fail(str(p), "", f"is not a regular file (a device, pipe or socket); give a {what}")
    if st.st_size > max_bytes:
        raise _fail(str(p), "", f"{st.st_size:,} bytes; a {what} may be at most {max_bytes:,} bytes")
    try:
        with open(p, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise _fail(str(p), "", f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise _fail(str(p), "", f"a {what} may be at most {max_bytes:,} bytes")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _fail(str(p), "", f"not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def read_document(path: str | Path, max_bytes: int = MAX_DOCUMENT_BYTES, numbers: str = "raise") -> Any:
    """Read a .yaml/.yml/.toml file into checked Python objects (see the module docstring);
    with ``numbers="collect"`` returns ``(document, number problems)`` instead of raising them."""
    p = Path(path)
    text = read_text(p, max_bytes, "file")
    fmt = "toml" if p.suffix.lower() == ".toml" else "yaml"
    return parse_text(text, str(p), fmt, numbers)


def read_packaged(path: str | Path) -> Any:
    """A YAML file shipped inside the package (catalog, design rules, step book): parsed with
    the same number rules and duplicate-key refusal as :func:`read_document`, without the
    hostile-input scans that only a user's file needs (its problems would be our bugs), and
    through the parse cache of :mod:`clustertwin.datacache`."""
    from clustertwin import datacache

    return datacache.load(Path(path), _load_packaged, _parser_id())


def _load_packaged(text: str) -> Any:
    return yaml.load(text, Loader=_NumberLoader)  # noqa: S506 - safe loader subclass


@functools.lru_cache(maxsize=1)
def _parser_id() -> bytes:
    """What the parse of a packaged file depends on besides its bytes: this module's source
    (the number and key rules) and the PyYAML version."""
    return yaml.__version__.encode() + b"\0" + Path(__file__).read_bytes()


_UNION_TAGS = frozenset({"int", "float", "bool", "str", "none", "date", "dict", "list"})


def loc_to_path(loc: tuple[Any, ...]) -> str:
    """Turn a pydantic error location into a dotted key path (``cluster.fabric.oversubscription``)."""
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif item in ("function-after", "function-before", "function-wrap") or str(item).startswith(("function-", "constrained-")):
            continue
        elif "[" in str(item) and str(item).endswith("]"):  # union branch names like literal['auto']
            continue
        elif parts and item in _UNION_TAGS:  # union branch names like int, float
            continue
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def pydantic_problems(exc: Any, source: str, prefix: str = "") -> list[Problem]:
    """Convert a pydantic ValidationError into one Problem per distinct key path."""
    seen: dict[str, list[str]] = {}
    for err in exc.errors(include_url=False):
        path = loc_to_path(tuple(err["loc"]))
        if prefix:
            path = f"{prefix}.{path}" if path else prefix
        msg = _friendly(err)
        seen.setdefault(path, [])
        if msg not in seen[path]:
            seen[path].append(msg)
    return [Problem(source, path, "; or ".join(msgs)) for path, msgs in seen.items()]


def _friendly(err: dict[str, Any]) -> str:
    kind = err.get("type", "")
    given = err.get("input")
    if kind == "extra_forbidden":
        return "unknown key (check spelling; see the README for the keys this section takes)"
    if kind == "missing":
        return "required key is missing"
    msg = err.get("msg", "invalid value")
    msg = msg.removeprefix("Value error, ")
    if given is not None and not isinstance(given, dict | list) and kind != "value_error":
        return f"{msg} (got {given!r})"
    return msg


def _kinds(annotation: Any) -> set[str]:
    """Which scalar kinds a type admits: {'bool', 'number', 'other'}."""
    if annotation is bool:
        return {"bool"}
    if annotation in (int, float):
        return {"number"}
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _kinds(args[0])
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_kinds(a) for a in args))
    if origin is typing.Literal:
        return {"bool" if isinstance(a, bool) else "number" if isinstance(a, int | float) else "other"
                for a in args}
    return {"other"}


def _number_not_bool(annotation: Any) -> bool:
    """A type that takes a number and no boolean."""
    kinds = _kinds(annotation)
    return "number" in kinds and "bool" not in kinds


def no_bool_for_number(annotation: Any, value: Any) -> Any:
    """Refuse ``true``/``false`` where a field takes a number and no boolean (pydantic's lax mode
    would read ``true`` as 1); also inside ``dict[str, number]`` values. Returns ``value``."""
    if isinstance(value, bool):
        if _number_not_bool(annotation):
            raise ValueError(f"expected a number, got the boolean {str(value).lower()}")
    elif isinstance(value, dict) and typing.get_origin(annotation) is dict:
        vt = typing.get_args(annotation)[1] if typing.get_args(annotation) else Any
        for k, v in value.items():
            if isinstance(v, bool) and _number_not_bool(vt):
                raise ValueError(f"{k}: expected a number, got the boolean {str(v).lower()}")
    return value
