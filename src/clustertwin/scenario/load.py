"""Reading a scenario: from a parsed document or a YAML/TOML file (or the built-in default)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clustertwin.catalog import Catalog, load_catalog
from clustertwin.errors import Problem, ScenarioError, UserError
from clustertwin.io import pydantic_problems, read_document
from clustertwin.scenario.document import Scenario, ScenarioFile
from clustertwin.scenario.resolve import resolve_scenario


def scenario_from_dict(data: Any, source: str = "<memory>", catalog: Catalog | None = None) -> Scenario:
    """Validate a parsed document and resolve it against the catalog."""
    if not isinstance(data, dict):
        raise ScenarioError([Problem(source, "", "a scenario is a mapping with model, training and cluster sections")])
    try:
        doc = ScenarioFile.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(pydantic_problems(exc, source)) from None
    return resolve_scenario(doc, catalog or load_catalog(), source)


def load_scenario(path: str | Path | None = None, catalog: Catalog | None = None) -> Scenario:
    """Load a scenario file; ``None`` loads the built-in default scenario."""
    if path is None:
        path = DEFAULT_SCENARIO
    doc, bad = read_document(path, numbers="collect")
    if not bad:
        return scenario_from_dict(doc, str(path), catalog)
    # non-finite or out-of-range numbers: report them with every schema problem, in one pass
    seen = {p.path for p in bad}
    try:
        scenario_from_dict(doc, str(path), catalog)
        more: list[Problem] = []
    except UserError as exc:
        more = [p for p in exc.problems if p.path not in seen]
    except Exception:  # noqa: BLE001 - the bad numbers are the answer; the rest is a consequence
        more = []
    raise ScenarioError(bad + more)


DEFAULT_SCENARIO = Path(__file__).parent.parent / "data" / "default.yaml"


def load_inputs(scenario_path: str | Path | None,
                catalog_dirs: list[Path] | None = None) -> tuple[Scenario, Catalog]:
    """Load the catalog (built-in + user dirs) and the scenario (None = built-in default).

    Returns ``(scenario, catalog)``; raises ScenarioError for the user to fix."""
    catalog = load_catalog(catalog_dirs or [])
    return load_scenario(scenario_path, catalog), catalog
