"""User-facing error types.

A user mistake raises :class:`ScenarioError` (a problem in a scenario or catalog file) or
:class:`UsageError` (a bad command-line request). The CLI prints one line per problem and
exits with status 2. Anything else escaping a stage is a bug and keeps its traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where (file, dotted key path) and what was expected."""

    source: str
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{one_line(self.source)}: {one_line(self.path)}" if self.path else one_line(self.source)
        return f"{where}: {one_line(self.message, 600)}" if where else one_line(self.message, 600)


def one_line(text: str, limit: int = 300) -> str:
    """Text from a hostile input shown on one terminal line: control characters (newlines,
    escapes that recolour the terminal) written as escapes, very long text cut."""
    t = str(text)
    if not t.isprintable():
        t = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in t)
    return t if len(t) <= limit else t[:limit - 15] + f"... ({len(t):,} chars)"


class UserError(Exception):
    """Base of errors that are the user's to fix; carries one or more problems."""

    exit_code = 2

    def __init__(self, problems: list[Problem] | Problem | str, source: str = "") -> None:
        if isinstance(problems, str):
            problems = [Problem(source, "", problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]


class ScenarioError(UserError):
    """A scenario (or user catalog) file is malformed, inconsistent or names unknown ids."""


class UsageError(UserError):
    """A command-line request cannot be carried out as given."""


class InfeasibleError(UserError):
    """The scenario is well-formed but asks for something the hardware cannot do
    (no parallelism plan fits, a node cannot be powered in its rack, ...)."""
