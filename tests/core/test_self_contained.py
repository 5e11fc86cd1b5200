"""A clone with nothing beside it works (issue 30): no code path or test looks for a
``shared/`` folder (no ``../shared``, no ``CLUSTERTWIN_SHARED``, no walk up the tree), and
the data the commands read ships inside the package."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: a string literal that names the development folder beside the checkout
#: tests that build such a folder on purpose, to show it is NOT looked for
NOT_LOOKUPS = {"tests/core/test_self_contained.py", "tests/scheduling/test_packaged_traces.py"}
SHARED_LOOKUP = re.compile(r"(^|\.\./|[\\/])shared([\\/](traces|reference|research|design|seeds)"
                           r"|[\\/]?$)|CLUSTERTWIN_SHARED")


def _is_path_part(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """A literal used as a path: ``d / "shared"``, ``joinpath("shared")``, ``Path("shared")``
    (a bare ``"shared"`` elsewhere is a word, e.g. a scenario's name)."""
    up = parents.get(node)
    if isinstance(up, ast.BinOp) and isinstance(up.op, ast.Div):
        return True
    return isinstance(up, ast.Call) and getattr(up.func, "attr", getattr(up.func, "id", "")) in (
        "joinpath", "Path")


def _literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and (n.value.strip("/\\.") != "shared" or _is_path_part(n, parents))]


def _docstrings(path: Path) -> set[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            out.add(body[0].value.lineno)
    return out


@pytest.mark.parametrize("tree", ["src", "tests", "benchmarks", "scripts"])
def test_no_path_lookup_of_a_shared_folder(tree) -> None:
    found = []
    for path in sorted((ROOT / tree).rglob("*.py")):
        if str(path.relative_to(ROOT)) in NOT_LOOKUPS:
            continue
        docs = _docstrings(path)
        for line, text in _literals(path):
            if line not in docs and SHARED_LOOKUP.search(text):
                found.append(f"{path.relative_to(ROOT)}:{line}: {text[:60]!r}")
    assert not found, found


def test_the_pattern_can_fail(tmp_path) -> None:
    for text in ("../shared/traces", "shared", "CLUSTERTWIN_SHARED", "x/shared/reference/a.csv"):
        assert SHARED_LOOKUP.search(text), text
    for text in ("shared_experts", "a shared cluster", "/shared/slurm/statesave"):
        assert not SHARED_LOOKUP.search(text), text
    probe = tmp_path / "probe.py"
    probe.write_text('from pathlib import Path\nname = "shared"\np = Path.cwd() / "shared" / "x"\n')
    assert [line for line, t in _literals(probe) if SHARED_LOOKUP.search(t)] == [3]


def test_contributing_links_only_files_in_the_repository() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "../shared" not in text
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_package_data_ships_in_the_wheel_layout() -> None:
    """What the commands read lives under src/clustertwin (hatch packages the whole folder)."""
    pkg = ROOT / "src" / "clustertwin"
    for rel in ("perf/data/training-runs-calibration.csv", "perf/data/published_runs.csv",
                "perf/data/heldout_runs.csv", "perf/data/SOURCES.md",
                "scheduling/traces/data/index.yaml"):
        assert (pkg / rel).is_file(), rel
