"""Lazy package exports (PEP 562), so ``clustertwin --help`` does not import NumPy & co.

A package's ``__init__`` declares which module defines each public name; the module is
imported on first access. Keep defining modules' names different from the exported names
(a submodule ``foo`` would shadow an exported function ``foo`` once imported).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, names: dict[str, str]) -> Callable[[str], Any]:
    """Return a module ``__getattr__`` resolving ``names[name]`` (a module path) on demand."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
