"""Power chain: node and network maxima -> IT load -> facility load (PUE) -> UPS modules,
rack PDUs and circuits, generators.

IT load is provisioned at maximum (nameplate) draw - what the electrical plant must carry;
``it_typical_kw`` uses the nodes' typical training draw (``typical_power_kw`` or 0.85 x max,
as the catalog documents) for energy estimates. Rack PDUs: enough for the rack's maximum plus
``pdu_spare`` so a feed can fail, at least ``pdu_min`` (R1: 3 per 40.8 kW DGX H100 rack, 2 per
management rack). One branch circuit per PDU. UPS in ``ups_module_kw`` modules, N+1 or 2N;
generators sized on the facility load, N + ``generator_spare``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

TYPICAL_FRACTION = 0.85  #: catalog/models.py: typical draw defaults to 0.85 x max when absent


@dataclass(frozen=True)
class PowerDesign:
    """The IT load by part and the facility power it needs."""

    nodes_kw: float
    compute_fabric_kw: float
    storage_fabric_kw: float
    management_kw: float          #: in-band, OOB, UFM, head nodes
    storage_kw: float
    it_kw: float
    it_typical_kw: float
    pue: float
    facility_kw: float
    rack_kw: float                #: a full compute rack at maximum draw
    pdus: int
    circuits: int
    ups_redundancy: str
    ups_module_kw: float
    ups_modules: int
    generator_kw: float
    generators: int
    pdus_by_kind: tuple[tuple[str, int], ...] = ()   #: (rack kind, PDUs)

    @property
    def ups_capacity_kw(self) -> float:
        return self.ups_modules * self.ups_module_kw

    def chain(self) -> list[tuple[str, float]]:
        """Stages of the power chain with the kW each carries (for the report figure)."""
        return [("utility / generators", self.facility_kw),
                ("cooling and losses", self.facility_kw - self.it_kw),
                ("UPS (IT load)", self.it_kw),
                ("compute nodes", self.nodes_kw),
                ("compute fabric", self.compute_fabric_kw),
                ("storage + storage fabric", self.storage_kw + self.storage_fabric_kw),
                ("management", self.management_kw)]


def pdus_for(rack_kw: float, rules) -> int:
    return max(int(rules.num("pdu_min")),
               math.ceil(rack_kw / rules.num("pdu_kw") - 1e-9) + int(rules.num("pdu_spare")))


def ups_modules(it_kw: float, rules) -> tuple[str, int]:
    topo = str(rules["ups_redundancy"]).upper().replace(" ", "")
    n = max(1, math.ceil(it_kw / rules.num("ups_module_kw") - 1e-9))
    if topo == "2N":
        return "2N", 2 * n
    if topo == "N":
        return "N", n
    return "N+1", n + 1


@dataclass(frozen=True)
class ItLoads:
    """The IT loads the power chain feeds, kW: each consumer's maximum draw and, for the nodes
    and the fabrics, the typical one (management and storage draw their maximum)."""

    nodes_kw: float
    nodes_typical_kw: float
    compute_fabric_kw: float
    compute_fabric_typical_kw: float
    storage_fabric_kw: float
    storage_fabric_typical_kw: float
    management_kw: float
    storage_kw: float


def plan_power(loads: ItLoads, *, pue: float, rack_kw: float, pdus: int, rules,
               pdus_by_kind: tuple[tuple[str, int], ...] = ()) -> PowerDesign:
    """The power chain for ``loads`` at ``pue``: IT and facility kW, UPS modules, generators."""
    nodes_kw, compute_fabric_kw = loads.nodes_kw, loads.compute_fabric_kw
    storage_fabric_kw, management_kw, storage_kw = loads.storage_fabric_kw, loads.management_kw, loads.storage_kw
    it = nodes_kw + compute_fabric_kw + storage_fabric_kw + management_kw + storage_kw
    typ = (loads.nodes_typical_kw + loads.compute_fabric_typical_kw + loads.storage_fabric_typical_kw
           + management_kw + storage_kw)
    facility = it * pue
    topo, modules = ups_modules(it, rules)
    gens = (math.ceil(facility / rules.num("generator_kw") - 1e-9)
            + int(rules.num("generator_spare")))
    return PowerDesign(nodes_kw=nodes_kw, compute_fabric_kw=compute_fabric_kw,
                       storage_fabric_kw=storage_fabric_kw, management_kw=management_kw,
                       storage_kw=storage_kw, it_kw=it, it_typical_kw=typ, pue=pue,
                       facility_kw=facility, rack_kw=rack_kw, pdus=pdus, circuits=pdus,
                       ups_redundancy=topo, ups_module_kw=rules.num("ups_module_kw"),
                       ups_modules=modules, generator_kw=rules.num("generator_kw"),
                       generators=gens, pdus_by_kind=pdus_by_kind)
