"""What every export reads: the scenario, its design, the inventory and the catalog node."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from clustertwin.design.site.inventory import Inventory, build_inventory
from clustertwin.design.site.naming import Naming
from clustertwin.quoting import comment_text, yaml_scalar


def export_design(scenario, catalog):
    """The scenario's ClusterDesign, the one ``plan`` builds: sized by ``cluster.gpus`` when
    given (no training estimate needed, so exporting is fast), else by the deadline solver with
    its wall-clock rounds (:func:`clustertwin.plan.plan_through`)."""
    from clustertwin.design import design

    if scenario.cluster.gpus is not None:
        return design(scenario, catalog, None)
    from clustertwin.plan import plan_through

    return plan_through(scenario, catalog).design


@dataclass(frozen=True, eq=False)
class ExportContext:
    scenario: Any
    design: Any
    inventory: Inventory
    node: Any          #: the catalog Node entry
    gpu: Any           #: the catalog GPU entry
    catalog: Any = None

    @property
    def title(self) -> str:
        """The scenario name as free text safe in a ``#`` comment or a one-line title: no line
        break (U+2028, ``\\r``... included) or control character can end the comment."""
        return comment_text(self.scenario.name)

    @property
    def cluster_name(self) -> str:
        """The scenario name as a lower-case ASCII identifier (Slurm ClusterName, k8s names):
        anything but ASCII letters and digits becomes a hyphen."""
        out = "".join(c if c.isascii() and c.isalnum() else "-"
                      for c in self.scenario.name.lower()).strip("-")
        while "--" in out:
            out = out.replace("--", "-")
        return out[:40].strip("-") or "clustertwin"

    @property
    def gpu_type(self) -> str:
        """Short GPU type for GRES / labels: the catalog GPU id's first token (h100, gb200),
        kept to what a Kubernetes object name allows (lower-case letters, digits, '-', '.')."""
        token = self.gpu.id.split("-")[0].lower()
        return "".join(c if c.isalnum() or c in "-." else "-" for c in token).strip("-.") or "gpu"


def make_context(scenario, catalog, design=None, naming: Naming | None = None) -> ExportContext:
    d = design if design is not None else export_design(scenario, catalog)
    inv = build_inventory(scenario, catalog, d, naming or Naming())
    node = catalog.node(d.node_id)
    gpu = catalog.get("gpu", d.gpu_id)
    return ExportContext(scenario, d, inv, node, gpu, catalog)


def yaml_text(obj: Any, *, all_docs: bool = False) -> str:
    """Block-style YAML of plain data (dicts, lists, str/int/float/bool/None).

    A small emitter of our own: PyYAML's representer is pure Python and takes seconds on a
    100,000-GPU inventory. Strings that YAML would read as something else are quoted (JSON
    quoting is valid YAML); ``tests/export`` checks the round trip through ``yaml.safe_load``."""
    if all_docs:
        return "".join("---\n" + yaml_text(doc) for doc in obj)
    out: list[str] = []
    _emit(obj, 0, out)
    return "\n".join(out) + "\n"


def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v) if isinstance(v, int) or math.isfinite(v) else yaml_scalar(str(v))
    return yaml_scalar(str(v))


def _inline(v: Any) -> str:
    """A scalar, or an empty mapping / list, on one line."""
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return _scalar(v)


def _emit(obj: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(obj, dict):
        if not obj:
            out.append(pad + "{}")
        for k, v in obj.items():
            key = _scalar(k)
            if isinstance(v, dict | list) and v:
                out.append(f"{pad}{key}:")
                _emit(v, indent + 2, out)
            else:
                out.append(f"{pad}{key}: {_inline(v)}")
    elif isinstance(obj, list):
        if not obj:
            out.append(pad + "[]")
        for v in obj:
            if isinstance(v, dict | list) and v:
                sub: list[str] = []
                _emit(v, indent + 2, sub)
                out.append(f"{pad}- {sub[0].lstrip()}")
                out.extend(sub[1:])
            else:
                out.append(f"{pad}- {_inline(v)}")
    else:
        out.append(pad + _scalar(obj))
