"""The values the design stage hands between its steps (:mod:`clustertwin.design.core`): the
fabric asked for, the switch set, the parts later steps size from, the racks and PDUs, and
what the bill of materials counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clustertwin.design.floor import Racks


@dataclass(frozen=True)
class FabricChoice:
    """The compute fabric the scenario asks for: the catalog family, the leaf and spine switch
    models and the nodes under one pod (None: no pods)."""

    fab: Any
    leaf: Any
    spine: Any
    pod_nodes: int | None


@dataclass(frozen=True)
class Switches:
    """The switch set of a design: the fabric family's switch (the storage fabric's too), the
    leaf model, the model of the tiers above it (the leaf's in a plain tree), and the in-band
    and out-of-band management switches."""

    fabric: Any
    leaf: Any
    upper: Any
    inband: Any
    oob: Any


@dataclass(frozen=True)
class Parts:
    """What the later design steps size from: the node and fabric catalog entries, the switch
    set, the compute fabric, the rack layout and the installed nodes (spares included)."""

    node: Any
    fab: Any
    sw: Switches
    cf: Any
    layout: Any
    nodes: int


@dataclass(frozen=True)
class RackPlan:
    """Racks and PDUs: a compute rack's kW, the compute fabric's kW, the rack counts, the
    management networks, the PDUs (total and by rack kind), management and storage-fabric kW."""

    rack_kw: float
    cf_kw: float
    racks: Racks
    mgmt: Any
    pdus: int
    kinds: dict[str, int]
    mgmt_kw: float
    sf_kw: float


@dataclass(frozen=True)
class BomInputs:
    """What the bill of materials counts."""

    parts: Parts
    mgmt: Any
    storage: Any
    power: Any
    cooling: Any
    racks: Racks
    floor: Any
    existing: bool
    purchase: Any = None  #: the date the GPU servers are bought (``buildout.start_date``): their price
