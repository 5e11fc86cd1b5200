"""Sweeps: plan a grid of scenarios (locally or on Ray), tabulate them, and choose.

``clustertwin.sweep`` is both this package and the function :func:`clustertwin.sweep.api.sweep`:
calling the package calls the function, so ``clustertwin.sweep(base, grid)`` works whether or
not the package was imported before (a plain submodule would shadow a function of that name).
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from clustertwin.sweep.api import sweep as _sweep

        return _sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
