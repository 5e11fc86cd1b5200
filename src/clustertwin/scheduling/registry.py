"""A small name -> object registry that refuses duplicates (policies, placements, traces)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Generic, TypeVar

from clustertwin.errors import Problem, UsageError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps names to plug-ins. Registering a name twice is a bug and raises ``ValueError``."""

    def __init__(self, family: str) -> None:
        self.family = family
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        if name in self._items:
            raise ValueError(f"{self.family} {name!r} is already registered")
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def deco(item: T) -> T:
            return self.add(name, item)

        return deco

    def get(self, name: str, *, source: str = "command line", path: str = "") -> T:
        """Return the plug-in or raise a UsageError that lists close names."""
        try:
            return self._items[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self._items), n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(self.names())}"
            raise UsageError([Problem(source, path or self.family,
                                      f"unknown {self.family} {name!r}; {hint}")]) from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items
