"""Design rules of thumb (rack limits, PDU ratings, PUE per cooling mode, storage targets ...).

The figures live in ``design/data/design_rules.yaml``, each with ``source`` and ``as_of``.
:func:`load_rules` returns a frozen :class:`DesignRules`; a caller may pass a modified copy
(``rules.with_values(rack_power_limit_air_kw=30)``) to :func:`clustertwin.design.design`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clustertwin import modelcache
from clustertwin.io import read_packaged

RULES_FILE = Path(__file__).parent / "data" / "design_rules.yaml"


class Rule(BaseModel):
    """One sourced figure."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    value: float | str
    unit: str
    source: str
    as_of: str
    notes: str = ""


class DesignRules(BaseModel):
    """All design rules by name; ``rules.x`` / ``rules["x"]`` give the value."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    items: dict[str, Rule] = Field(description="rule name -> sourced value")

    def __getitem__(self, key: str) -> Any:
        return self.items[key].value

    def __getattr__(self, key: str) -> Any:
        items = self.__dict__.get("items")
        if items is not None and key in items:
            return items[key].value
        raise AttributeError(key)

    def num(self, key: str) -> float:
        v = self.items[key].value
        if isinstance(v, str):
            raise TypeError(f"design rule {key!r} is text, not a number")
        return float(v)

    def source(self, key: str) -> str:
        return self.items[key].source

    def with_values(self, **values: float | str) -> DesignRules:
        """A copy with some values replaced (sources note the override)."""
        items = dict(self.items)
        for k, v in values.items():
            if k not in items:
                raise KeyError(f"unknown design rule {k!r}")
            items[k] = items[k].model_copy(update={"value": v, "source": "user override"})
        return DesignRules(items=items)


@lru_cache(maxsize=1)
def load_rules() -> DesignRules:
    """The built-in rules (cached; the result is frozen; validated once per content and code,
    :mod:`clustertwin.modelcache`)."""
    return modelcache.load("rules", [RULES_FILE], _validated, (DesignRules, _validated))


def _validated() -> DesignRules:
    doc = read_packaged(RULES_FILE)
    return DesignRules(items={k: Rule.model_validate(v) for k, v in doc["rules"].items()})


def rule_table() -> MappingProxyType:
    """Read-only name -> Rule mapping, for documentation and reports."""
    return MappingProxyType(load_rules().items)
