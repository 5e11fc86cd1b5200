"""The scenario file: schema (pydantic v2), loading, and resolution against the catalog.

:func:`load_scenario` reads a YAML/TOML file (or a dict) and returns a :class:`Scenario`:
validated, defaults filled, the model preset merged with explicit fields and every catalog id
checked. Problems are collected and raised together as one :class:`ScenarioError`, one line
per problem naming the file, the key path and what was expected.

The parts: the schema, one module per section (:mod:`.base` shared pieces, :mod:`.model`,
:mod:`.training`, :mod:`.cluster`, :mod:`.reliability`, :mod:`.economics` with the build-out,
:mod:`.document` the whole file); :mod:`.checks` the checks across sections; :mod:`.resolve`
resolution against the catalog; :mod:`.load` reading files and dicts; :mod:`.updates`
:func:`with_updates`. Every name is importable from ``clustertwin.scenario``.
"""

from __future__ import annotations

from clustertwin.scenario.base import (
    MAX_GPUS,
    SIZE_MAX,
    SIZE_MAX_MODEL,
    Auto,
    GpuCount,
    PosInt,
    Section,
    at_most,
)
from clustertwin.scenario.checks import (
    MAX_TRIAL_GPUS,
    RACK_SCALE_HOST_GPUS,
    STRETCH_GPUS,
    check_budget,
    check_model,
    check_sizes,
    job_unit_gpus,
)
from clustertwin.scenario.cluster import Cluster, FabricSection
from clustertwin.scenario.decision import Decision, RouteOverride
from clustertwin.scenario.document import Scenario, ScenarioFile
from clustertwin.scenario.economics import Buildout, Economics
from clustertwin.scenario.load import DEFAULT_SCENARIO, load_scenario, scenario_from_dict
from clustertwin.scenario.model import ModelSection, ResolvedModel
from clustertwin.scenario.reliability import RELIABILITY_MAX, Reliability
from clustertwin.scenario.resolve import MODEL_FIELDS, resolve_model, resolve_scenario
from clustertwin.scenario.training import Parallelism, Training
from clustertwin.scenario.updates import with_updates

__all__ = [
    "DEFAULT_SCENARIO", "MAX_GPUS", "MAX_TRIAL_GPUS", "RACK_SCALE_HOST_GPUS", "STRETCH_GPUS",
    "Auto", "Buildout", "Cluster", "Decision", "RouteOverride", "Economics", "FabricSection", "GpuCount", "ModelSection",
    "Parallelism", "PosInt", "Reliability", "ResolvedModel", "Scenario", "ScenarioFile",
    "Training", "job_unit_gpus", "load_scenario", "scenario_from_dict", "with_updates",
    # the helpers the section modules share
    "RELIABILITY_MAX", "SIZE_MAX", "SIZE_MAX_MODEL", "MODEL_FIELDS", "Section", "at_most",
    "check_budget", "check_model", "check_sizes", "resolve_scenario", "resolve_model",
]
