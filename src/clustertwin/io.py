"""Reading YAML/TOML documents with user-facing errors (file name and line)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml

from clustertwin.errors import Problem, ScenarioError

try:  # the C loader is ~10x faster; fall back when libyaml is absent
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


class _NumberLoader(_Loader):  # type: ignore[misc, valid-type]
    """YAML 1.1 reads ``15.6e12`` (no dot in the mantissa or no sign in the exponent) as a
    string; YAML 1.2 and every user read it as a float. This loader follows the users."""


_FLOAT_RE = r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
|\.[0-9_]+(?:[eE][-+]?[0-9]+)?
|[-+]?\.(?:inf|Inf|INF)
|\.(?:nan|NaN|NAN))$"""

import re  # noqa: E402

_NumberLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(_FLOAT_RE, re.X), list("-+0123456789.")
)


def parse_text(text: str, source: str, fmt: str = "yaml") -> Any:
    """Parse YAML or TOML text; syntax errors become a ScenarioError naming file and line."""
    if fmt == "toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError([Problem(source, "", f"not valid TOML: {exc}")]) from None
    try:
        return yaml.load(text, Loader=_NumberLoader)  # noqa: S506 - safe loader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioError([Problem(source, "", f"not valid YAML{where}: {what}")]) from None


def read_document(path: str | Path) -> Any:
    """Read a .yaml/.yml/.toml file into Python objects."""
    p = Path(path)
    if not p.is_file():
        raise ScenarioError([Problem(str(p), "", "file not found")])
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError([Problem(str(p), "", f"cannot read: {exc}")]) from None
    fmt = "toml" if p.suffix.lower() == ".toml" else "yaml"
    return parse_text(text, str(p), fmt)


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
