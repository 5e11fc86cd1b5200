"""The scenario editor's form: the keys people change most, each an input named and labelled
by its dotted scenario key, and the full YAML beside them.

The YAML pane and the fields always show the same scenario: a field's value overrides its key
in the YAML (and the pane is rewritten), an edit of the pane refills the fields. An empty field
leaves its key as the YAML has it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clustertwin.errors import Problem


@dataclass(frozen=True)
class Field:
    key: str  #: dotted scenario key; the input's name and label
    hint: str  #: what to type
    catalog: str = ""  #: catalog kind offered as suggestions (a datalist)
    choices: tuple[str, ...] = ()  #: fixed choices (a select)


FIELDS = (
    Field("name", "free text, used in titles"),
    Field("model.preset", "catalog model id", catalog="model"),
    Field("training.tokens", "e.g. 15.6e12"),
    Field("training.precision", "number format", choices=("bf16", "fp16", "fp8")),
    Field("training.stack", "software stack id or auto", catalog="stack"),
    Field("cluster.gpu", "catalog GPU id", catalog="gpu"),
    Field("cluster.gpus", "installed GPUs"),
    Field("cluster.node", "catalog node id", catalog="node"),
    Field("cluster.fabric.technology", "catalog fabric id", catalog="fabric"),
    Field("economics.cloud_usd_per_gpu_hour", "$ per GPU-hour"),
    Field("economics.electricity_usd_per_kwh", "$ per kWh"),
    Field("buildout.profile", "build-out profile",
          choices=("new-build", "existing-facility", "fast-track")),
    Field("buildout.start_date", "YYYY-MM-DD"),
    Field("decision.target_date", "YYYY-MM-DD: trained by"),
    Field("decision.options", "routes, e.g. build,cloud"),
)


def fields() -> tuple[Field, ...]:
    """The fields whose keys the scenario schema has (decision.* once that section lands)."""
    from clustertwin.sweep.grid import schema_keys

    keys = schema_keys()
    return tuple(f for f in FIELDS if f.key in keys)


def dom_id(key: str) -> str:
    """An element id for a dotted key (dots would read as CSS classes in a selector)."""
    return "f-" + key.replace(".", "-").replace("_", "-")


def shown(value: Any) -> str:
    """A document value as its field shows it (lists comma-separated, None empty)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):  # the shortest text that reads back as the same number
        for digits in range(1, 18):
            text = f"{value:.{digits}g}"
            if float(text) == value:
                return text
    return str(value)


def apply_fields(doc: dict[str, Any], form: Any) -> dict[str, Any]:
    """The YAML document with every non-empty field's value set at its key."""
    from clustertwin.sweep.grid import apply, parse_value

    values: dict[str, Any] = {}
    for f in fields():
        raw = form.get(f.key)
        if not isinstance(raw, str) or not raw.strip():
            continue
        if f.key == "decision.options":
            values[f.key] = [v.strip() for v in raw.split(",") if v.strip()]
        else:
            values[f.key] = parse_value(raw[:200], "form", f.key)
    return apply(doc, values)


def field_problems(problems: list[Problem]) -> tuple[dict[str, list[str]], list[str]]:
    """Problems split into those at a field (by key, the nearest field above the path) and the rest."""
    at: dict[str, list[str]] = {}
    rest: list[str] = []
    keys = [f.key for f in fields()]
    for p in problems:
        owner = next((k for k in keys if p.path == k or p.path.startswith(k + ".")), None)
        if owner is None:
            rest.append(f"{p.path}: {p.message}" if p.path else p.message)
        else:
            at.setdefault(owner, []).append(p.message)
    return at, rest


def yaml_of(doc: dict[str, Any], text: str | None = None) -> str:
    """The document as YAML: written over ``text`` (the YAML it was edited from) when given,
    so its comments and layout survive a field edit."""
    from clustertwin.quoting import yaml_roundtrip, yaml_text

    return yaml_roundtrip(text, doc) if text else yaml_text(doc)
