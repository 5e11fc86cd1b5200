"""The warm planner behind ``clustertwin serve``: scenario documents in, plan documents out.

One :class:`Engine` lives as long as the server. It loads the catalog once, keeps the stage
modules imported, reuses stage results between plans that share a stage's inputs (the sweep's
:class:`~clustertwin.sweep.memo.StageMemo`: the same plan, byte for byte), and remembers
scenario (defaults filled, dumped with sorted keys), so two documents that mean the same scenario
share one entry. The plan document is exactly what ``clustertwin plan --json`` prints (same
stages, same strict-JSON cleaning: NaN/inf -> null, dates ISO).

Nothing here names a file from a request: a document is a mapping or YAML text; keys that would
make the server read a path (``base``, ``catalog``, ``include``) are refused before validation.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from clustertwin.errors import Problem, ScenarioError, UserError
from clustertwin.fmt import json_ready as clean

#: keys that would name a file on the server; refused in any document a request carries
PATH_KEYS = ("base", "catalog", "catalogs", "include", "extends")
#: plans remembered by the warm process (a plan with its rendered answer is ~1-2 MB)
CACHE_SIZE = 48
SOURCE = "request"


@dataclass(frozen=True)
class Answer:
    """One planned scenario: the Plan object (for pages) and its JSON document (for the API)."""

    key: str
    plan: Any
    doc: dict[str, Any]


def refuse_paths(doc: Any, source: str = SOURCE) -> None:
    """A request may not point the server at a file: ``base:``/``catalog:`` keys are errors."""
    if not isinstance(doc, dict):
        raise ScenarioError([Problem(source, "", "a scenario is a JSON object (mapping) with "
                                     "model, training and cluster sections")])
    bad = [k for k in PATH_KEYS if k in doc]
    if bad:
        raise ScenarioError([Problem(source, k, "names a file on the server; a request carries "
                                     "the whole scenario instead") for k in bad])


MAX_JSON_DEPTH = 64  #: nesting of a JSON body (as for files: ``clustertwin.io.MAX_DEPTH``)
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_JSON_BRACKET = re.compile(rb"[\[\]{}]")


def json_depth_ok(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a JSON text nests at most ``limit`` deep, found without parsing it (a parser
    recurses once per level: 100,000 levels would overflow the stack)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return True
    depth = 0
    for m in _JSON_BRACKET.finditer(_JSON_STRING.sub(b'""', raw)):
        depth += 1 if m.group() in (b"[", b"{") else -1
        if depth > limit:
            return False
    return True


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as parsed: its (key, value) pairs in order, duplicates kept."""


def _mappings(o: Any, path: str, source: str) -> Any:
    """Parsed JSON with each object as a dict; a key given twice in one object is refused at
    its full dotted path (depth is bounded before parsing, so recursion is too)."""
    if isinstance(o, _Pairs):
        out: dict[str, Any] = {}
        for k, v in o:
            sub = f"{path}.{k}" if path else k
            if k in out:
                raise ScenarioError([Problem(source, sub[:200], "duplicate key (a key may appear once "
                                             "in a mapping)")])
            out[k] = _mappings(v, sub, source)
        return out
    if isinstance(o, list):
        return [_mappings(v, f"{path}[{i}]", source) for i, v in enumerate(o)]
    return o


def _json_problem(exc: ValueError, source: str) -> Problem:
    """A parse failure in the user's words (no internal exception text)."""
    if isinstance(exc, json.JSONDecodeError):
        return Problem(source, "", f"the body is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")
    return Problem(source, "", "the body is not JSON this server reads: a number of more than "
                   "4,300 digits")  # the only other ValueError json raises on a str


def doc_from_json(raw: bytes, source: str = SOURCE) -> dict[str, Any]:
    """A scenario document from a JSON request body: duplicate keys refused (as in YAML),
    nesting bounded before parsing, numbers checked as for files."""
    from clustertwin.io import check_tree

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError([Problem(source, "", "the body is not UTF-8 text")]) from None
    if not json_depth_ok(raw):
        raise ScenarioError([Problem(source, "", f"nested more than {MAX_JSON_DEPTH} levels deep")])
    try:
        doc = _mappings(json.loads(text, object_pairs_hook=_Pairs), "", source)
    except ValueError as exc:
        raise ScenarioError([_json_problem(exc, source)]) from None
    except RecursionError:
        raise ScenarioError([Problem(source, "", "nested too deeply")]) from None
    refuse_paths(doc, source)
    bad = check_tree(doc, source, numbers="collect")
    if bad:
        raise ScenarioError(bad)
    return doc


def doc_from_yaml(text: str, source: str = SOURCE) -> dict[str, Any]:
    """A scenario document from YAML text (the editor pane), through the one input layer."""
    from clustertwin.io import parse_text

    doc = parse_text(text, source)
    if doc is None:
        doc = {}
    refuse_paths(doc, source)
    return doc


class Engine:
    """The catalog, the stages and an LRU cache of plans, shared by every request."""

    def __init__(self, catalog_dirs: tuple[str, ...] = (), cache_size: int = CACHE_SIZE) -> None:
        from clustertwin.catalog import load_catalog
        from clustertwin.sweep.memo import StageMemo

        self.catalog = load_catalog(list(catalog_dirs))
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Answer] = OrderedDict()
        self._lock = threading.Lock()
        self._plan_lock = threading.Lock()
        self.memo = StageMemo()  # stage results reused across plans that share a stage's inputs
        self.hits = 0
        self.misses = 0

    def scenario(self, doc: dict[str, Any], source: str = SOURCE) -> Any:
        from clustertwin.scenario import scenario_from_dict

        refuse_paths(doc, source)
        return scenario_from_dict(doc, source, self.catalog)

    def key(self, scen: Any) -> str:
        """The cache key of a checked scenario: its fields, defaults filled, sorted."""
        return json.dumps(clean(scen.model_dump(mode="json")), sort_keys=True)

    def cached(self, key: str) -> Answer | None:
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                self.hits += 1
            return hit

    def store(self, key: str, answer: Answer) -> None:
        with self._lock:
            if key not in self._cache:
                self.misses += 1
            self._cache[key] = answer
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def plan(self, doc: dict[str, Any], source: str = SOURCE) -> Answer:
        """Plan a scenario document in this process (from the cache when the same scenario
        was planned). The server plans in worker processes (:mod:`.runner`); each has one."""
        from clustertwin.plan import make_plan

        scen = self.scenario(doc, source)
        key = self.key(scen)
        hit = self.cached(key)
        if hit is not None:
            return hit
        with self._plan_lock:  # one plan at a time: the stage memo is not thread-safe
            with self._lock:
                hit = self._cache.get(key)  # planned by the request we waited for
            if hit is not None:
                return hit
            result = make_plan(scen, self.catalog, memo=self.memo)
            answer = Answer(key, result, clean(result.to_dict()))
        self.store(key, answer)
        return answer

    def problems(self, doc: Any, source: str = SOURCE) -> list[Problem]:
        """Every problem ``clustertwin validate`` would report, one per field (empty = fine)."""
        from clustertwin.plan import feasibility_problems

        try:
            scen = self.scenario(doc, source)
        except UserError as exc:
            return list(exc.problems)
        return feasibility_problems(scen, self.catalog)

    def catalog_ids(self) -> dict[str, list[str]]:
        return {kind: sorted(self.catalog.ids(kind)) for kind in self.catalog.kinds()}


def problem_dicts(problems: list[Problem]) -> list[dict[str, str]]:
    return [{"path": p.path, "message": p.message} for p in problems]
