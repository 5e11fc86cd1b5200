"""How much there is to build: GPUs, servers, racks, links, switches and megawatts.

From the design when one is given (read with ``getattr`` and a fallback, so a partial design
works), otherwise from simple rules on the catalog node. The rules are deliberately coarse —
the design stage is the authority; these only size crew work:

* servers = ceil(gpus / node.gpus) + cluster.spare_nodes
* racks: a rack-scale system is one rack; otherwise nodes per rack =
  min(floor(rack budget / node.max_power_kw), floor(42 U / node.rack_units)), with a rack budget
  of 41 kW for air-cooled nodes (DGX H100 SuperPOD RA: 4 nodes = 40.8 kW per rack) and 130 kW
  for liquid-cooled ones (datacenter-anchors 4.2: NVL72-class racks 120-140 kW).
* compute fabric: nics = servers x node.compute_nics (= node-to-leaf links); leaf = ceil(nics /
  (radix/2)); two tiers while nics <= radix^2/2, else three; uplinks = leaf-spine (+ spine-core)
  links = nics / oversubscription per tier above the leaf.
* IT power: servers x node.max_power_kw + switches x switch power.
* storage racks: the design's; by rule one per 1,024 GPUs, at least one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

#: Usable rack units for servers in a 48U rack after PDUs, patch panels and a leaf switch.
RACK_U = 42
#: Rack power budgets, kW (datacenter-anchors 4.2 and the DGX H100 SuperPOD RA).
RACK_KW_AIR = 41.0
RACK_KW_LIQUID = 130.0
#: Switch radix and power when the catalog has no switch entry (NVIDIA Quantum-2 QM9700).
DEFAULT_RADIX = 64
DEFAULT_SWITCH_KW = 1.7
#: GPUs served by one storage rack (sizing rule for crew work only).
GPUS_PER_STORAGE_RACK = 1024


@dataclass(frozen=True)
class Quantities:
    """The counts the build-out's scale rules read (servers, racks, cables, megawatts ...)."""

    gpus: int
    servers: int
    racks: int
    nics: int
    node_links: int
    uplinks: int
    leaf: int
    spine: int
    core: int
    it_mw: float
    storage_racks: int
    cooling: str  # "air" or "liquid"
    source: str  # "design" or "rules"
    assembled: bool = False  # the node ships as an integrated system (no assembly line)

    @property
    def spine_core(self) -> int:
        return self.spine + self.core

    @property
    def switches(self) -> int:
        return self.leaf + self.spine + self.core

    @property
    def unassembled_servers(self) -> int:
        """Servers the assembly line builds (0 when the node ships assembled, e.g. a DGX)."""
        return 0 if self.assembled else self.servers

    @property
    def cables(self) -> int:
        return self.node_links + self.uplinks

    def get(self, key: str) -> float:
        return float(getattr(self, key))

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(spine_core=self.spine_core, switches=self.switches, cables=self.cables,
                 unassembled_servers=self.unassembled_servers)
        return d


def _job_gpus(scenario: Any, design: Any = None) -> int:
    """GPUs to build: the design's (spares excluded) or ``cluster.gpus``. A deadline scenario's
    count is solved at the plan level, so the build-out needs the design result then."""
    if design is not None:
        return int(design.gpus)
    gpus = scenario.cluster.gpus
    if gpus is None:
        from clustertwin.errors import Problem, ScenarioError

        raise ScenarioError([Problem(str(scenario.source or "scenario"), "cluster.gpus",
                                     "the build-out needs the design (or cluster.gpus) to count "
                                     "what to build; a deadline's GPU count comes from plan")])
    return int(gpus)


def _switch(catalog: Any, scenario: Any) -> tuple[int, float]:
    try:
        fabric = catalog.fabric(scenario.cluster.fabric.technology)
        sw = catalog.get("switch", fabric.switch)
        return int(sw.ports), float(sw.power_kw_max)
    except Exception:  # noqa: BLE001 - a missing fabric/switch entry just means defaults
        return DEFAULT_RADIX, DEFAULT_SWITCH_KW


def fabric_counts(nics: int, radix: int, oversub: float = 1.0) -> tuple[int, int, int, int]:
    """(leaf, spine, core, uplinks) of a fat tree over ``nics`` endpoints."""
    half = max(1, radix // 2)
    leaf = math.ceil(nics / half)
    up1 = math.ceil(nics / max(oversub, 1.0))
    if nics <= radix * radix // 2:
        spine = math.ceil(up1 / radix) if leaf > 1 else 0
        return leaf, spine, 0, (up1 if leaf > 1 else 0)
    spine = math.ceil(up1 / half)
    core = math.ceil(up1 / radix)
    return leaf, spine, core, 2 * up1


def _spares(scenario: Any, catalog: Any, gpus: int) -> int:
    given = scenario.cluster.spare_nodes
    if given == "auto":
        from clustertwin.design.spares import resolve_spare_nodes

        return resolve_spare_nodes(scenario, catalog, gpus)
    return int(given or 0)


def derive_quantities(scenario: Any, catalog: Any, design: Any = None) -> Quantities:
    """Quantities for the crew-driven steps (see the module doc for the rules). ``design``:
    the design stage's result (``plan`` passes it; :func:`clustertwin.plan.plan_through`
    looks it up for the ``buildout`` command); None: the rules alone."""
    node = catalog.node(scenario.cluster.node)
    gpus = _job_gpus(scenario, design)
    per_node = int(node.gpus)
    spare = _spares(scenario, catalog, gpus)
    servers = math.ceil(gpus / per_node) + spare
    node_kw = float(node.max_power_kw)
    rack_scale = bool(node.rack_scale)
    cooling = str((design.cooling.mode if design is not None else None) or node.cooling or "air")
    cooling = "liquid" if cooling == "liquid" else "air"
    if rack_scale:
        racks = servers
    else:
        budget = RACK_KW_LIQUID if cooling == "liquid" else RACK_KW_AIR
        ru = node.rack_units or 8  # None on a rack-scale system
        per_rack = max(1, min(int(budget // node_kw), RACK_U // int(ru)))
        racks = math.ceil(servers / per_rack)
    nics = servers * int(node.compute_nics)
    radix, sw_kw = _switch(catalog, scenario)
    oversub = float(scenario.cluster.fabric.oversubscription or 1.0)
    leaf, spine, core, uplinks = fabric_counts(nics, radix, oversub)
    it_kw = servers * node_kw + (leaf + spine + core) * sw_kw
    source = "rules"
    storage_racks = max(1, math.ceil(gpus / GPUS_PER_STORAGE_RACK))
    if design is not None:
        # the design's storage racks (0 when a single server keeps its data on its NVMe)
        storage_racks = int(design.rack_counts.storage)
        source = "design"
        servers = int(design.nodes or servers)
        racks = int(design.racks or racks)
        fab = design.fabric
        leaf, spine, core = int(fab.leaf), int(fab.spine), int(fab.core)
        nics = min(nics, int(fab.cables))
        uplinks = max(0, int(fab.cables) - nics)
        it_kw = float(design.power.it_kw or it_kw)
    return Quantities(
        gpus=gpus,
        servers=servers,
        racks=racks,
        nics=nics,
        node_links=nics,
        uplinks=uplinks,
        leaf=leaf,
        spine=spine,
        core=core,
        it_mw=it_kw / 1000.0,
        storage_racks=storage_racks,
        cooling=cooling,
        source=source,
        assembled=bool(node.ships_assembled),
    )
