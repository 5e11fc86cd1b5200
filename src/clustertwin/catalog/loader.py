"""Load catalog YAML files into typed entries; users add or override entries with their own
directory (``--catalog DIR``).

A catalog file maps kind names to lists of entries::

    gpu:
      - id: h100-sxm-80gb
        name: NVIDIA H100 SXM5 80GB
        source: ...
        as_of: 2023-09
        ...

Entries from a user directory replace built-in entries with the same id (recorded in
``Catalog.overridden``) and add new ones.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from clustertwin import modelcache
from clustertwin.catalog.models import KINDS, Entry
from clustertwin.errors import Problem, ScenarioError
from clustertwin.io import pydantic_problems, read_document, read_packaged

DATA_DIR = Path(__file__).parent / "data"

E = TypeVar("E", bound=Entry)


class Catalog:
    """All entries by kind and id. Read-only once built."""

    def __init__(self, entries: dict[str, dict[str, Entry]], origins: dict[tuple[str, str], str],
                 overridden: list[tuple[str, str, str]]) -> None:
        self._entries = entries
        self.origins = origins
        self.overridden = overridden

    def kinds(self) -> list[str]:
        return sorted(self._entries)

    def ids(self, kind: str) -> list[str]:
        return sorted(self._entries.get(kind, {}))

    def all(self, kind: str) -> list[Entry]:
        return [self._entries[kind][i] for i in self.ids(kind)]

    def has(self, kind: str, entry_id: str) -> bool:
        return entry_id in self._entries.get(kind, {})

    def get(self, kind: str, entry_id: str, *, source: str = "catalog", path: str = "") -> Entry:
        """Return the entry or raise a ScenarioError that suggests the closest ids."""
        try:
            return self._entries[kind][entry_id]
        except KeyError:
            raise ScenarioError([Problem(source, path, self.unknown_message(kind, entry_id))]) from None

    def unknown_message(self, kind: str, entry_id: str) -> str:
        known = self.ids(kind)
        close = difflib.get_close_matches(str(entry_id), known, n=3, cutoff=0.4)
        hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(known)}"
        return f"unknown {kind.replace('_', ' ')} id {entry_id!r}; {hint}"

    def find(self, entry_id: str) -> list[tuple[str, Entry]]:
        """Every (kind, entry) with this id, for ``catalog show``."""
        return [(k, v[entry_id]) for k, v in sorted(self._entries.items()) if entry_id in v]

    # typed getters used by stages
    def gpu(self, entry_id: str, **kw):  # noqa: ANN201 - returns models.GPU
        return self.get("gpu", entry_id, **kw)

    def node(self, entry_id: str, **kw):  # noqa: ANN201
        return self.get("node", entry_id, **kw)

    def fabric(self, entry_id: str, **kw):  # noqa: ANN201
        return self.get("fabric", entry_id, **kw)


def _load_file(path: Path, packaged: bool = False) -> list[tuple[str, Entry]]:
    doc = read_packaged(path) if packaged else read_document(path)
    if doc is None:
        return []
    if not isinstance(doc, dict):
        raise ScenarioError([Problem(str(path), "", "a catalog file maps kind names (gpu, node, ...) to lists of entries")])
    out: list[tuple[str, Entry]] = []
    problems: list[Problem] = []
    for kind, items in doc.items():
        model = KINDS.get(kind)
        if model is None:
            close = difflib.get_close_matches(str(kind), list(KINDS), n=1)
            hint = f"; did you mean {close[0]}?" if close else f"; known kinds: {', '.join(sorted(KINDS))}"
            problems.append(Problem(str(path), str(kind), f"unknown catalog kind{hint}"))
            continue
        if not isinstance(items, list):
            problems.append(Problem(str(path), str(kind), "expected a list of entries"))
            continue
        for i, item in enumerate(items):
            label = f"{kind}[{i}]"
            if isinstance(item, dict) and "id" in item:
                label = f"{kind}[{item['id']}]"
            try:
                out.append((kind, model.model_validate(item)))
            except ValidationError as exc:
                problems.extend(pydantic_problems(exc, str(path), label))
    if problems:
        raise ScenarioError(problems)
    return out


def _yaml_files(directory: Path) -> Iterable[Path]:
    return sorted(p for p in directory.iterdir() if p.suffix.lower() in (".yaml", ".yml", ".toml"))


@lru_cache(maxsize=1)
def _builtin() -> tuple[tuple[str, Entry, str], ...]:
    """The built-in entries (kind, entry, file name), validated once per content and code
    (:mod:`clustertwin.modelcache`)."""
    files = list(_yaml_files(DATA_DIR))
    return modelcache.load("catalog", files, lambda: _validated(files), (*KINDS.values(), _validated))


def _validated(files: list[Path]) -> tuple[tuple[str, Entry, str], ...]:
    return tuple((kind, entry, path.name) for path in files for kind, entry in _load_file(path, packaged=True))


def load_catalog(user_dirs: Iterable[str | Path] = ()) -> Catalog:
    """Built-in catalog plus user directories (later directories win)."""
    entries: dict[str, dict[str, Entry]] = {}
    origins: dict[tuple[str, str], str] = {}
    overridden: list[tuple[str, str, str]] = []
    problems: list[Problem] = []
    dups: list[Problem] = []
    for kind, entry, fname in _builtin():
        if entry.id in entries.setdefault(kind, {}):
            problems.append(Problem(f"catalog/data/{fname}", f"{kind}[{entry.id}]", "duplicate id in the built-in catalog"))
        entries[kind][entry.id] = entry
        origins[(kind, entry.id)] = f"built-in:{fname}"
    for d in user_dirs:
        d = Path(d)
        if not d.is_dir():
            raise ScenarioError([Problem(str(d), "", "catalog directory not found")])
        seen: dict[tuple[str, str], str] = {}  # one folder defines an id once
        for path in _yaml_files(d):
            for kind, entry in _load_file(path):
                if (kind, entry.id) in seen:
                    dups.append(Problem(str(path), f"{kind}[{entry.id}]",
                                            f"duplicate id (also in {seen[(kind, entry.id)]}); one entry per id"))
                seen[(kind, entry.id)] = str(path)
                if entry.id in entries.setdefault(kind, {}):
                    overridden.append((kind, entry.id, str(path)))
                entries[kind][entry.id] = entry
                origins[(kind, entry.id)] = str(path)
    if problems:  # a bug in our data, not the user's
        raise RuntimeError("\n".join(map(str, problems)))
    if dups:
        raise ScenarioError(dups)
    return Catalog(entries, origins, overridden)
