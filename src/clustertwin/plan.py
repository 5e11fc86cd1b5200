"""Compose the stages into one plan.

Stages run in pipeline order; each is a pure function of the scenario and the results before
it. A stage whose package is missing, or that fails for a reason other than the user's input,
is reported in ``warnings`` and the plan goes on without it (later stages use their documented
defaults). A user mistake (``UserError``) stops the plan: the user has to fix it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clustertwin.catalog import Catalog
from clustertwin.errors import UserError
from clustertwin.scenario import Scenario

STAGES = ("training", "design", "reliability", "economics", "buildout")


@dataclass(frozen=True)
class Plan:
    scenario: Scenario
    training: Any = None
    design: Any = None
    reliability: Any = None
    economics: Any = None
    buildout: Any = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def blocks(self) -> list[tuple[str, Any]]:
        return [(name, getattr(self, name)) for name in STAGES if getattr(self, name) is not None]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scenario": self.scenario.model_dump(mode="json")}
        for name, res in self.blocks():
            out[name] = res.to_contract()
        out["warnings"] = list(self.warnings)
        return out


def _call(module: str, func: str, *args: Any) -> Any:
    mod = importlib.import_module(module)
    return getattr(mod, func)(*args)


def make_plan(scenario: Scenario, catalog: Catalog,
              on_stage: Callable[[str], None] | None = None,
              stages: tuple[str, ...] = STAGES) -> Plan:
    """Run the stages in order. ``on_stage(name)`` is called before each (for progress bars)."""
    warnings: list[str] = []
    res: dict[str, Any] = {}

    def run(name: str, module: str, func: str, *args: Any) -> Any:
        if name not in stages:
            return None
        if on_stage:
            on_stage(name)
        try:
            return _call(module, func, *args)
        except UserError:
            raise
        except (ImportError, AttributeError, NotImplementedError) as exc:
            warnings.append(f"{name}: stage not available ({exc}); later stages use defaults")
        except Exception as exc:  # a bug in one stage must not hide the others' answers
            warnings.append(f"{name}: stage failed ({type(exc).__name__}: {exc}); later stages use defaults")
        return None

    # training time is the root every other stage hangs off; its failure stops the plan
    if on_stage:
        on_stage("training")
    res["training"] = _call("clustertwin.perf", "estimate", scenario, catalog)
    res["design"] = run("design", "clustertwin.design", "design", scenario, catalog, res["training"])
    res["reliability"] = run("reliability", "clustertwin.reliability", "analyze",
                             scenario, catalog, res["training"], res["design"])
    res["economics"] = run("economics", "clustertwin.economics", "economics",
                           scenario, catalog, res["training"], res["design"], res["reliability"])
    res["buildout"] = run("buildout", "clustertwin.buildout", "plan_buildout", scenario, catalog, res["design"])
    for name, result in res.items():  # each stage's own caveats, labelled with the stage
        attrs = ("warnings",) if name == "buildout" else ("warnings", "notes")  # build-out notes are informational
        for attr in attrs:
            for msg in getattr(result, attr, None) or ():
                warnings.append(f"{name}: {msg}")
    return Plan(scenario=scenario, warnings=tuple(warnings), **res)
