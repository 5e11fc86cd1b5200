"""The pipeline's layer order, written once, and the import graph read from the source.

A module may import only modules of its own layer or of an earlier one (architecture.md:
"layers only look down"). ``tests/core/test_layers.py`` checks every ``import`` in ``src/``
(module-level and inside functions, plus the module paths named in lazy-export tables)
against :data:`LAYERS` and refuses any import cycle; ``docs/architecture.md`` is drawn from
the same graph by ``python -m clustertwin.layers --write docs/architecture.md``.

Standard library only: the test and the drawing script read the source with :mod:`ast`, they
never import the modules they check.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

PACKAGE = "clustertwin"

#: (layer name, module prefixes) in pipeline order. A module belongs to the layer of its
#: longest matching prefix; the command line (the ``cli`` package, one module per command),
#: the package's own ``__init__`` (the public facade) and ``__main__`` (``python -m
#: clustertwin``) belong to the CLI layer.
#: Packages that do not exist yet (decision, serve, drawings, measure) may stay listed.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("_lazy", "errors", "io", "children", "datacache", "modelcache", "checked", "quoting", "outputs", "fmt", "layers")),
    ("catalog", ("catalog", "data")),
    ("scenario", ("scenario",)),
    ("training", ("perf",)),
    ("design", ("design",)),
    ("reliability", ("reliability",)),
    ("economics", ("economics",)),
    ("buildout", ("buildout",)),
    ("decision", ("decision",)),
    ("plan", ("plan", "pipeline", "deadline")),
    ("consumers", ("report", "export", "acceptance", "sweep", "serve", "scheduling",
                   "drawings", "measure", "track")),
    ("cli", ("cli", "__main__")),
)

_MODULE_PATH = re.compile(rf"^{PACKAGE}(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def layer_names() -> list[str]:
    """The layer names, first (lowest) to last."""
    return [name for name, _ in LAYERS]


def layer_of(module: str) -> int | None:
    """Index in :data:`LAYERS` of a dotted module name (``clustertwin.x.y``); None if unplaced."""
    parts = module.split(".")[1:]
    if not parts:
        return len(LAYERS) - 1
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            want = prefix.split(".") if prefix else []
            if parts[: len(want)] == want and (best is None or len(want) > best[0]):
                best = (len(want), index)
    return None if best is None else best[1]


def source_modules(src: Path) -> dict[str, Path]:
    """Every module under ``src/clustertwin`` by dotted name (a package by its own name)."""
    root = src / PACKAGE
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    keep = len(base) - node.level + (1 if is_package else 0)
    stem = ".".join(base[:keep])
    return f"{stem}.{node.module}" if node.module else stem


def module_imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The ``clustertwin`` modules one module imports, wherever the import statement sits.

    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module, else
    ``pkg``. A string constant that is exactly a known module path (lazy-export tables,
    ``importlib.import_module``) counts as an import too.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, module, is_package)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in known else base)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _MODULE_PATH.match(node.value) and node.value in known:
                out.add(node.value)
    return {name for name in out if name.split(".")[0] == PACKAGE and name != module}


def import_graph(src: Path) -> dict[str, set[str]]:
    """Module -> the ``clustertwin`` modules it imports (only modules that exist)."""
    modules = source_modules(src)
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = {_nearest(dep, known) for dep in module_imports(name, path, known)}
        graph[name].discard(name)
    return graph


def _nearest(name: str, known: set[str]) -> str:
    """``name`` or its closest existing parent (``import a.b.c`` of a missing module)."""
    while name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """One line per import of a later layer, and per module that is in no layer."""
    problems = []
    names = layer_names()
    for module in sorted(graph):
        mine = layer_of(module)
        if mine is None:
            problems.append(f"{module}: in no layer (add it to clustertwin/layers.py LAYERS)")
            continue
        for dep in sorted(graph[module]):
            theirs = layer_of(dep)
            if theirs is not None and theirs > mine:
                problems.append(f"{module} ({names[mine]}) imports {dep} ({names[theirs]})")
    return problems


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph):
        if root not in index:
            _strongconnect(root, graph, index, low, stack, on_stack, cycles)
    return cycles


def _strongconnect(root, graph, index, low, stack, on_stack, cycles) -> None:
    work = [(root, iter(sorted(graph.get(root, ()))))]
    index[root] = low[root] = len(index)
    stack.append(root)
    on_stack.add(root)
    while work:
        node, children = work[-1]
        child = next(children, None)
        if child is not None:
            if child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[node])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))


def package_of(module: str) -> str:
    """The drawing's unit: the first name under ``clustertwin`` (``clustertwin.perf.stage`` ->
    ``perf``)."""
    parts = module.split(".")[1:]
    return parts[0] if parts else "clustertwin"


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Package -> the other packages its modules import."""
    out: dict[str, set[str]] = {}
    for module, deps in graph.items():
        mine = package_of(module)
        out.setdefault(mine, set()).update(package_of(d) for d in deps)
        out[mine].discard(mine)
    return out


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def _one_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring on one line, its Sphinx roles as code."""
    first = (doc or "").strip().split("\n\n")[0]
    text = " ".join(first.split())
    return _ROLE.sub(lambda m: f"`{m.group(1).split('.')[-1]}`", text).replace("``", "`")


def room_summaries(src: Path) -> dict[str, str]:
    """Each room of the drawing (a package or a top-level module) -> the first paragraph of
    its own docstring."""
    out: dict[str, str] = {}
    for name, path in source_modules(src).items():
        parts = name.split(".")
        if len(parts) == 2 or (len(parts) == 1 and name == PACKAGE):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            out[package_of(name)] = _one_paragraph(ast.get_docstring(tree))
    return out


def pipeline_calls(src: Path) -> list[tuple[str, str]]:
    """(call, what it does) for each step of ``plan.make_plan``, in the order it runs them: a
    stage called by name (``run.design``) or a named loop-back around them (``designed``),
    each with the first line of its docstring."""
    tree = ast.parse((src / PACKAGE / "plan.py").read_text(encoding="utf-8"))
    runner = ast.parse((src / PACKAGE / "pipeline.py").read_text(encoding="utf-8"))
    docs = {n.name: ast.get_docstring(n) for t in (tree, runner) for n in ast.walk(t)
            if isinstance(n, ast.FunctionDef)}
    make_plan = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "make_plan")
    steps: list[tuple[str, str]] = []
    for stmt in make_plan.body:
        if not isinstance(stmt, ast.Assign | ast.Expr | ast.Return) or not isinstance(stmt.value, ast.Call):
            continue
        call = stmt.value
        f = call.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "run":
            name = f"run.{f.attr}"
            doc = docs.get(f.attr) or f"the {f.attr} stage"
        elif isinstance(f, ast.Name) and f.id in docs:
            name, doc = f.id, docs[f.id]
        else:
            continue
        steps.append((name, _one_paragraph(doc).split(". ")[0].rstrip(".")))
    return steps


def _pipeline_section(src: Path) -> list[str]:
    steps = pipeline_calls(src)
    lines = ["", "## The pipeline", "",
             "What `plan.make_plan` runs, in order (read from its code): the stages called by name",
             "on the results before them, and the named loop-backs around them.", "",
             "```mermaid", "flowchart LR"]
    lines += [f"  P{i}[\"{name}\"]" for i, (name, _) in enumerate(steps)]
    lines += [f"  P{i} --> P{i + 1}" for i in range(len(steps) - 1)]
    lines += ["```", ""]
    lines += [f"- `{name}`: {what}." for name, what in steps]
    return lines


def _rooms_section(src: Path, by_layer: dict[int, list[str]]) -> list[str]:
    summaries = room_summaries(src)
    lines = ["", "## The rooms", "", "Each package and top-level module, layer by layer, in the words of its own docstring."]
    for index, name in enumerate(layer_names()):
        members = by_layer.get(index, [])
        if not members:
            continue
        lines += ["", f"### {index}. {name}", ""]
        lines += [f"- `{p}`: {summaries.get(p) or '(no docstring)'}" for p in members]
    return lines


def render_architecture(graph: dict[str, set[str]], src: Path | None = None) -> str:
    """``docs/architecture.md``: the layers, the packages in each and the arrows between
    layers, all read from ``graph`` (deterministic: sorted everywhere), then the pipeline as
    ``make_plan`` runs it and a paragraph per room, read from the code under ``src`` (default:
    this package's). Arrows are drawn between layers, not packages, so the drawing changes
    only when the layering does."""
    src = Path(__file__).resolve().parents[1] if src is None else src
    packages = package_graph(graph)
    by_layer: dict[int, list[str]] = {}
    for pkg in sorted(packages):
        by_layer.setdefault(_layer_index(pkg), []).append(pkg)
    arrows = {(_layer_index(p), _layer_index(d)) for p, deps in packages.items() for d in deps}
    arrows = {(a, b) for a, b in arrows if a != b}
    names = layer_names()
    lines = [
        "## The layers, as the imports draw them",
        "",
        "Generated from the import graph of `src/clustertwin` by",
        "`python -m clustertwin.layers --write docs/architecture.md`; `tests/core/test_layers.py`",
        "fails when it is stale, when a module imports a later layer, or on an import cycle.",
        "The layer order is written once, in `clustertwin/layers.py` (`LAYERS`). Each arrow",
        "points from a layer to an earlier one its modules import (never to a later one).",
        "Arrows into the foundation layer (errors, input/output, quoting, formatting: read by",
        "nearly everything) are listed in the table only.",
        "",
        "```mermaid",
        "flowchart BT",
    ]
    for index, name in enumerate(names):
        members = by_layer.get(index, [])
        if members:
            lines.append(f"  L{index}[\"{index}. {name}<br/>{', '.join(members)}\"]")
    lines += [f"  L{a} --> L{b}" for a, b in sorted(arrows) if b != 0 and by_layer.get(a)]
    lines += ["```", "", "| # | layer | packages | imports from layers |", "|---|---|---|---|"]
    for index, name in enumerate(names):
        members = by_layer.get(index, [])
        shown = ", ".join(f"`{p}`" for p in members) or "(none yet)"
        below = ", ".join(names[b] for a, b in sorted(arrows) if a == index)
        lines.append(f"| {index} | {name} | {shown} | {below} |")
    lines += _pipeline_section(src) + _rooms_section(src, by_layer)
    return "\n".join(lines) + "\n"


def _layer_index(package: str) -> int:
    module = PACKAGE if package == PACKAGE else f"{PACKAGE}.{package}"
    found = layer_of(module)
    return -1 if found is None else found


#: the lines around the generated part of ``docs/architecture.md`` (the prose around it is
#: written by hand; ``--write`` replaces only what lies between them)
BEGIN_MARK = "<!-- generated by python -m clustertwin.layers: edit LAYERS, not this part -->"
END_MARK = "<!-- end of the generated part -->"


def generated_part(text: str) -> str | None:
    """The text between :data:`BEGIN_MARK` and :data:`END_MARK` (None without both)."""
    start, end = text.find(BEGIN_MARK + "\n"), text.find(END_MARK)
    if start < 0 or end < start:
        return None
    return text[start + len(BEGIN_MARK) + 1:end]


def with_drawing(text: str, drawing: str) -> str:
    """``text`` with its generated part replaced by ``drawing`` (appended when it has none)."""
    block = f"{BEGIN_MARK}\n{drawing}{END_MARK}"
    if generated_part(text) is None:
        return (text.rstrip("\n") + "\n\n" if text.strip() else "") + block + "\n"
    start, end = text.find(BEGIN_MARK), text.find(END_MARK) + len(END_MARK)
    return text[:start] + block + text[end:]


def main(argv: list[str] | None = None) -> int:
    """``python -m clustertwin.layers [--write PATH]``: print the drawing, or write it."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m clustertwin.layers")
    parser.add_argument("--write", type=Path, help="write the drawing into the marked part of "
                        "this Markdown file instead of stdout")
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    text = render_architecture(import_graph(args.src), args.src)
    if args.write is None:
        sys.stdout.write(text)
    else:  # only the marked part: the prose around it is kept
        old = args.write.read_text(encoding="utf-8") if args.write.is_file() else ""
        args.write.write_text(with_drawing(old, text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
