"""The saved scenarios a page may load or compare: the built-in default, the scenarios of the
project's ``examples/`` folder (when present beside the package; its study files are for
``clustertwin sweep`` and left out), the files given to ``serve`` and those saved in the page.

They are read once, when the server starts. A browser picks one by its name from this list; it
never sends a path, so no request can make the server read another file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clustertwin.errors import UserError

SESSION = "saved in this session"
STORED = "saved"  #: kept in the server's database (:mod:`.store`)
MAX_SAVED = 32


@dataclass(frozen=True)
class Saved:
    name: str  #: the file's stem (made unique)
    origin: str  #: shown to the user: "built-in", "example", "command line" or :data:`SESSION`
    text: str  #: the YAML as written


def examples_dir() -> Path | None:
    """``examples/`` of a source checkout (src/clustertwin/serve -> repository root)."""
    here = Path(__file__).resolve().parents[3] / "examples"
    return here if here.is_dir() else None


def _is_study(text: str, source: str) -> bool:
    from clustertwin.io import parse_text
    from clustertwin.sweep.study import is_study

    return is_study(parse_text(text, source))


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
                if origin == "example" and _is_study(text, str(path)):
                    continue  # a study (cases over a base file) is for `clustertwin sweep`
            except UserError as exc:
                self.problems += exc.lines()
                continue
            name = path.stem if origin != "built-in" else "built-in-default"
            while name in self.items:
                name += "-2"
            self.items[name] = Saved(name, origin, text)

    def save(self, name: str, text: str) -> Saved:
        """Keep an edited scenario for this session under ``name`` (an identifier; replaces an
        earlier one saved under it, never a file's entry), at most :data:`MAX_SAVED`."""
        from clustertwin.errors import Problem, UsageError

        old = self.items.get(name)
        if old is not None and old.origin != SESSION:
            raise UsageError([Problem("save", "name", f"{name!r} is a {old.origin} scenario; rename yours")])
        if old is None and sum(s.origin == SESSION for s in self.items.values()) >= MAX_SAVED:
            raise UsageError([Problem("save", "", f"at most {MAX_SAVED} scenarios are kept per session")])
        self.items[name] = Saved(name, SESSION, text)
        return self.items[name]

    def remember(self, name: str, text: str) -> bool:
        """Offer a scenario from the database under its name; False (not offered) when the
        name is a file's (built-in, example, command line)."""
        old = self.items.get(name)
        if old is not None and old.origin not in (SESSION, STORED):
            return False
        self.items[name] = Saved(name, STORED, text)
        return True

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
