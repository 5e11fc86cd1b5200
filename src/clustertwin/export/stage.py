"""What every export reads: the scenario, its design, the inventory and the catalog node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clustertwin.export.inventory import Inventory, build_inventory
from clustertwin.export.naming import Naming


def export_design(scenario, catalog):
    """The scenario's ClusterDesign: sized by ``cluster.gpus`` when given (no training
    estimate needed, so exporting is fast), else by the perf estimate (``deadline_days``)."""
    from clustertwin.design import design

    if scenario.cluster.gpus is not None:
        return design(scenario, catalog, None)
    from clustertwin.perf import estimate

    return design(scenario, catalog, estimate(scenario, catalog))


@dataclass(frozen=True, eq=False)
class ExportContext:
    scenario: Any
    design: Any
    inventory: Inventory
    node: Any          #: the catalog Node entry
    gpu: Any           #: the catalog GPU entry
    catalog: Any = None

    @property
    def cluster_name(self) -> str:
        """The scenario name as a lower-case identifier (Slurm ClusterName, k8s names)."""
        out = "".join(c if c.isalnum() else "-" for c in self.scenario.name.lower()).strip("-")
        while "--" in out:
            out = out.replace("--", "-")
        return out[:40].strip("-") or "clustertwin"

    @property
    def gpu_type(self) -> str:
        """Short GPU type for GRES / labels: the catalog GPU id's first token (h100, gb200)."""
        return self.gpu.id.split("-")[0].lower()


def make_context(scenario, catalog, design=None, naming: Naming | None = None) -> ExportContext:
    d = design if design is not None else export_design(scenario, catalog)
    inv = build_inventory(scenario, catalog, d, naming or Naming())
    node = catalog.node(d.node_id)
    gpu = catalog.get("gpu", d.gpu_id)
    return ExportContext(scenario, d, inv, node, gpu, catalog)


def yaml_text(obj: Any, *, all_docs: bool = False) -> str:
    """YAML through libyaml when PyYAML has it (10x faster on big inventories)."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    if all_docs:
        return yaml.dump_all(obj, Dumper=dumper, sort_keys=False, width=200)
    return yaml.dump(obj, Dumper=dumper, sort_keys=False, width=200)
