"""Nodes, racks, NVLink domains and spares.

Nodes per rack are the most that the rack's power limit (by the node's cooling: air or liquid)
and its rack units allow, rounded down to a divisor of the scalable unit so SUs fill whole
racks (the DGX SuperPOD RAs put 1, 2 or 4 DGX per rack; 4 x DGX H100 = 40.8 kW). A rack-scale
system (GB200 NVL72) is one rack.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clustertwin.errors import InfeasibleError, Problem


@dataclass(frozen=True)
class Layout:
    """Nodes, racks and scalable units of the compute cluster."""

    job_nodes: int           #: installed nodes before the hot spares (the job's and idle ones)
    spare_nodes: int         #: hot spares beyond the job
    gpus_per_node: int
    nvlink_domain_gpus: int
    nodes_per_rack: int
    rack_limit_kw: float     #: power limit that bounded the rack
    idle_nodes: int = 0      #: of job_nodes, those the training job leaves idle

    @property
    def nodes(self) -> int:
        return self.job_nodes + self.spare_nodes

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def job_gpus(self) -> int:
        return self.job_nodes * self.gpus_per_node

    @property
    def nvlink_domains(self) -> int:
        """NVLink domains the fabric sees (8-GPU DGX, 72-GPU NVL72), spares included."""
        return math.ceil(self.gpus / self.nvlink_domain_gpus)

    @property
    def compute_racks(self) -> int:
        return math.ceil(self.nodes / self.nodes_per_rack)


def rack_capacity(node, rules, source: str) -> tuple[int, float]:
    """(most nodes per rack, the power limit used); raises when not even one node fits."""
    liquid = node.cooling == "liquid"
    key = "rack_power_limit_liquid_kw" if liquid else "rack_power_limit_air_kw"
    limit = rules.num(key)
    kw = float(node.max_power_kw)
    if kw > limit:
        if liquid:
            hint = f"a rack and cooling loop rated >= {kw:g} kW (design rule {key})"
        else:
            hint = (f"a liquid-cooled node, or a rack limit >= {kw:g} kW "
                    f"(design rule {key}; air with containment stops near {limit:g} kW)")
        raise InfeasibleError([Problem(source, "cluster.node",
            f"{node.id} draws {kw:g} kW, more than the {limit:g} kW a "
            f"{'liquid' if liquid else 'air'}-cooled rack can power and cool; "
            f"nearest change: {hint}")])
    if node.rack_scale:
        return 1, limit
    by_power = int(limit // kw)
    if node.rack_units:
        usable = rules.num("rack_ru") - rules.num("rack_reserved_ru")
        by_ru = int(usable // node.rack_units)
        if by_ru < 1:
            raise InfeasibleError([Problem(source, "cluster.node",
                f"{node.id} is {node.rack_units}U, more than the {usable:g}U free in a "
                f"{rules.num('rack_ru'):g}U rack; "
                "nearest change: a taller rack (design rule rack_ru)")])
        by_power = min(by_power, by_ru)
    return by_power, limit


def plan_layout(node, job_nodes: int, spare_nodes: int, su_nodes: int, rules,
                source: str, idle_nodes: int = 0) -> Layout:
    cap, limit = rack_capacity(node, rules, source)
    per_rack = max(d for d in range(1, min(cap, su_nodes) + 1) if su_nodes % d == 0)
    return Layout(job_nodes=job_nodes, spare_nodes=spare_nodes, gpus_per_node=node.gpus,
                  nvlink_domain_gpus=node.nvlink_domain_gpus, nodes_per_rack=per_rack,
                  rack_limit_kw=limit, idle_nodes=idle_nodes)
