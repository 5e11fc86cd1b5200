"""Validate every grid point like a file, before any work starts.

A value is *bad* when every point that carries it fails with a problem at its key (a typo in
a catalog id, a string where a number goes, a GPU count the node cannot hold): the sweep stops
with one line naming the key and value, exit 2. A point that fails only in combination (FP8
precision crossed with an A100, which has no FP8 tensor cores) is not the value's fault: it
becomes a row whose ``error`` says why, and the sweep goes on.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from clustertwin.errors import Problem, UsageError, UserError
from clustertwin.sweep.grid import Point


def _at(problem_path: str, key: str) -> bool:
    if not problem_path:
        return False
    return problem_path == key or problem_path.startswith(key + ".") or key.startswith(problem_path + ".")


def validate_points(points: list[Point], catalog: Any, source: str) -> dict[int, str]:
    """Check all points; raise UsageError for bad values; return ``{index: error}`` for
    points that are invalid only in combination."""
    from clustertwin.scenario import scenario_from_dict

    failures: dict[int, list[Problem]] = {}
    for p in points:
        try:
            scenario_from_dict(p.doc, f"{source} [{p.label}]", catalog)
        except UserError as exc:
            failures[p.index] = exc.problems
    if not failures:
        return {}
    if len(failures) == len(points):  # nothing would run: the base or every value is wrong
        raise UsageError(_distinct(p for probs in failures.values() for p in probs))
    fatal = _bad_values(points, failures)
    if fatal:
        raise UsageError(fatal)
    return {i: "invalid scenario: " + "; ".join(f"{p.path}: {p.message}" for p in probs)
            for i, probs in failures.items()}


def _bad_values(points: list[Point], failures: dict[int, list[Problem]]) -> list[Problem]:
    carriers: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for p in points:
        for key, value in p.assignments.items():
            carriers[(key, repr(value))].append(p)
    out: list[Problem] = []
    for (key, value), pts in carriers.items():
        found = [next((pr for pr in failures.get(p.index, []) if _at(pr.path, key)), None) for p in pts]
        if all(f is not None for f in found):
            first = found[0]
            assert first is not None
            out.append(Problem("sweep", key, f"value {value}: {first.message}"))
    return out


def _distinct(problems: Any) -> list[Problem]:
    seen: dict[tuple[str, str], Problem] = {}
    for p in problems:
        src = p.source.split(" [", 1)[0]
        seen.setdefault((p.path, p.message), Problem(src, p.path, p.message))
    return list(seen.values())


def check_study(path: Any, catalog: Any) -> tuple[int, list[str]] | None:
    """``clustertwin validate`` on a study file: None when ``path`` is not one; else the
    number of scenarios its grid makes and one line per scenario that is invalid only in
    combination (a sweep makes those rows with their error). Bad keys or values raise a
    UsageError, as ``sweep`` would before running anything."""
    from pathlib import Path

    from clustertwin.io import read_document
    from clustertwin.sweep.study import is_study, load_study

    try:
        if not is_study(read_document(Path(path))):
            return None
    except UserError:
        return None  # not readable as a study: the scenario check says why
    sw = load_study(Path(path))
    skip = validate_points(sw.points, catalog, sw.source)
    label = {p.index: p.label for p in sw.points}
    return len(sw.points), [f"{path} [{label[i]}]: {err}" for i, err in sorted(skip.items())]
