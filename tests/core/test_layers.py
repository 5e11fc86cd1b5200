"""Layers only look down (issue 25): every import in ``src/`` (module level and inside
functions, and the module paths of lazy-export tables) points at the importer's own layer or an
earlier one of :data:`clustertwin.layers.LAYERS`, no import runs in a circle, and no function is
longer than 80 lines. No exceptions list."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from clustertwin import layers
from clustertwin.layers import (
    import_cycles,
    import_graph,
    layer_names,
    layer_of,
    render_architecture,
    upward_imports,
)

SRC = Path(__file__).resolve().parents[2] / "src"
DOC = SRC.parent / "docs" / "architecture.md"
MAX_FUNCTION_LINES = 80


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(SRC)


def test_no_module_imports_a_later_layer(graph) -> None:
    assert upward_imports(graph) == []


def test_no_import_cycle(graph) -> None:
    assert import_cycles(graph) == []


def test_every_module_has_a_layer(graph) -> None:
    assert [m for m in graph if layer_of(m) is None] == []


def test_layer_order_is_the_pipeline() -> None:
    assert layer_names() == ["foundation", "catalog", "scenario", "training", "design", "reliability",
                             "economics", "buildout", "decision", "plan", "consumers", "cli"]
    assert layer_of("clustertwin.perf.stage") < layer_of("clustertwin.design.core") \
        < layer_of("clustertwin.reliability.stage") < layer_of("clustertwin.deadline") \
        < layer_of("clustertwin.export.slurm") < layer_of("clustertwin.cli.design")
    assert layer_of("clustertwin.decision.options") == layer_names().index("decision")  # not yet present
    assert layer_of("clustertwin.nowhere") is None


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / "clustertwin" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_checker_catches_upward_function_level_lazy_and_cyclic_imports(tmp_path: Path) -> None:
    """The checker itself can fail: a design module importing reliability inside a function,
    a perf package whose lazy table names an export module, a relative import, a cycle."""
    src = _tree(tmp_path, {
        "__init__.py": "",
        "errors.py": "",
        "design/__init__.py": "",
        "design/core.py": "def f():\n    from clustertwin.reliability import spares\n",
        "reliability/__init__.py": "",
        "reliability/spares.py": "from ..design import core\n",
        "perf/__init__.py": "T = {'x': 'clustertwin.export.slurm'}\n",
        "export/__init__.py": "",
        "export/slurm.py": "import clustertwin.errors\n",
        "mystery.py": "",
    })
    g = import_graph(src)
    assert g["clustertwin.design.core"] == {"clustertwin.reliability.spares"}
    assert g["clustertwin.reliability.spares"] == {"clustertwin.design.core"}
    assert g["clustertwin.export.slurm"] == {"clustertwin.errors"}
    problems = upward_imports(g)
    assert any(p.startswith("clustertwin.design.core (design) imports clustertwin.reliability.spares")
               for p in problems)
    assert any(p.startswith("clustertwin.perf (training) imports clustertwin.export.slurm") for p in problems)
    assert any(p.startswith("clustertwin.mystery: in no layer") for p in problems)
    assert import_cycles(g) == [["clustertwin.design.core", "clustertwin.reliability.spares"]]


def _long_functions(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    out.append(f"{path.relative_to(root).as_posix()}:{node.name} ({length} lines)")
    return out


@pytest.fixture(scope="module")
def long_functions() -> list[str]:
    return _long_functions(SRC / "clustertwin")


def test_no_function_over_80_lines(long_functions) -> None:
    assert long_functions == []


def test_length_check_can_fail(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "m.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}\n")
    assert _long_functions(tmp_path) == ["m.py:long (81 lines)"]


def test_architecture_doc_is_drawn_from_the_code(graph) -> None:
    """The marked part of docs/architecture.md is what ``python -m clustertwin.layers --write
    docs/architecture.md`` draws; the prose around it is hand-written."""
    assert layers.generated_part(DOC.read_text(encoding="utf-8")) == render_architecture(graph), \
        "docs/architecture.md is stale: run python -m clustertwin.layers --write docs/architecture.md"


def test_write_replaces_only_the_marked_part(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# Title\n\nprose before\n", encoding="utf-8")
    assert layers.main(["--write", str(doc)]) == 0
    first = doc.read_text(encoding="utf-8")
    assert first.startswith("# Title\n\nprose before\n\n" + layers.BEGIN_MARK)
    doc.write_text(first.replace(layers.END_MARK, layers.END_MARK + "\n\nprose after")
                   .replace("## The layers", "stale ## The layers"), encoding="utf-8")
    layers.main(["--write", str(doc)])
    again = doc.read_text(encoding="utf-8")
    assert again == first.replace(layers.END_MARK, layers.END_MARK + "\n\nprose after")


def test_layers_module_is_standard_library_only() -> None:
    tree = ast.parse(Path(layers.__file__).read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "ast", "re", "sys", "pathlib", "argparse"}
