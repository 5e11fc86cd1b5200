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


def doc_from_json(raw: bytes, source: str = SOURCE) -> dict[str, Any]:
    """A scenario document from a JSON request body (numbers checked as for files)."""
    from clustertwin.io import check_tree

    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ScenarioError([Problem(source, "", f"the body is not JSON ({str(exc)[:120]})")]) from None
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

    def plan(self, doc: dict[str, Any], source: str = SOURCE) -> Answer:
        """Plan a scenario document (from the cache when the same scenario was planned)."""
        from clustertwin.plan import make_plan

        scen = self.scenario(doc, source)
        key = json.dumps(clean(scen.model_dump(mode="json")), sort_keys=True)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                self.hits += 1
                return hit
        with self._plan_lock:  # one plan at a time: the stage memo is not thread-safe
            with self._lock:
                hit = self._cache.get(key)  # planned by the request we waited for
            if hit is not None:
                return hit
            result = make_plan(scen, self.catalog, memo=self.memo)
            answer = Answer(key, result, clean(result.to_dict()))
        with self._lock:
            self.misses += 1
            self._cache[key] = answer
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
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
