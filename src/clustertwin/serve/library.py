"""The saved scenarios a page may load or compare: the built-in default, the project's
``examples/`` folder (when present beside the package) and the files given to ``serve``.

They are read once, when the server starts. A browser picks one by its name from this list; it
never sends a path, so no request can make the server read another file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clustertwin.errors import UserError


@dataclass(frozen=True)
class Saved:
    name: str  #: the file's stem (made unique)
    origin: str  #: shown to the user: "built-in", "example" or "command line"
    text: str  #: the YAML as written


def examples_dir() -> Path | None:
    """``examples/`` of a source checkout (src/clustertwin/serve -> repository root)."""
    here = Path(__file__).resolve().parents[3] / "examples"
    return here if here.is_dir() else None


class Library:
    def __init__(self, files: list[Path]) -> None:
        from clustertwin.io import read_text
        from clustertwin.scenario import DEFAULT_SCENARIO

        self.items: dict[str, Saved] = {}
        self.problems: list[str] = []
        found: list[tuple[Path, str]] = [(DEFAULT_SCENARIO, "built-in")]
        ex = examples_dir()
        if ex is not None:
            found += [(p, "example") for p in sorted(ex.glob("*.yaml"))]
        found += [(Path(p), "command line") for p in files]
        for path, origin in found:
            try:
                text = read_text(path, what="scenario file")
            except UserError as exc:
                self.problems += exc.lines()
                continue
            name = path.stem if origin != "built-in" else "built-in-default"
            while name in self.items:
                name += "-2"
            self.items[name] = Saved(name, origin, text)

    def names(self) -> list[str]:
        return list(self.items)

    def get(self, name: str) -> Saved | None:
        return self.items.get(name)

    def first(self) -> Saved:
        """The scenario the editor opens with: the first command-line file, else the default."""
        for s in self.items.values():
            if s.origin == "command line":
                return s
        return self.items["built-in-default"]
