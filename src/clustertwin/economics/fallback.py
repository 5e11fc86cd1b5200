"""Hardware quantities and prices when the design stage is not available.

A coarse, labelled stand-in for :mod:`clustertwin.design`: nodes from the GPU count, a
non-blocking fat tree from the switch radix (2 tiers up to k^2/2 endpoints, else 3), storage
from a capacity rule of thumb, IT power from the node maximum plus a network/storage share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clustertwin.catalog import Catalog
from clustertwin.design.spares import resolve_spare_nodes
from clustertwin.scenario import Scenario

#: Share of IT power drawn by switches, storage and management beside the GPU nodes.
#: DGX H100 SuperPOD RA-11333 (datacenter-anchors.md 1.1): ~4-6% of a SU's power is fabric.
NON_NODE_POWER_FRAC = 0.05


@dataclass(frozen=True)
class Line:
    """One priced line of the coarse design economics falls back on."""

    category: str
    item: str
    catalog_id: str
    quantity: float
    unit_usd: float
    source: str

    @property
    def total_usd(self) -> float:
        return self.quantity * self.unit_usd


@dataclass(frozen=True)
class FallbackDesign:
    """The coarse design economics prices when the design stage did not run."""

    nodes: int
    it_kw: float
    bom: tuple[Line, ...]


def fallback_design(s: Scenario, cat: Catalog, gpus: int) -> FallbackDesign:
    node = cat.node(s.cluster.node)
    fab = cat.fabric(s.cluster.fabric.technology)
    sw = cat.get("switch", fab.switch)
    xcvr = cat.get("transceiver", fab.switch_transceiver)
    fiber = cat.get("cable", fab.fiber_cable)
    nodes = math.ceil(gpus / node.gpus) + resolve_spare_nodes(s, cat, gpus)
    ports = nodes * node.compute_nics
    k = sw.ports
    tiers = 1 if ports <= k else 2 if ports <= k * k // 2 else 3
    switches = math.ceil(ports / k) if tiers == 1 else math.ceil(ports * (2 * tiers - 1) / k)
    links = ports * tiers
    # every optical link has two ends; a twin-port module carries `switch_ports` switch ports
    modules = math.ceil(2 * links / xcvr.switch_ports)
    costs = cat.get("costs", s.economics.costs)
    tb = costs.items["storage_tb_per_gpu_default"].value * gpus if "storage_tb_per_gpu_default" in costs.items else 0.0
    # GPU servers at the purchase date, as the design's bill of materials prices them
    from clustertwin.catalog.pricing import price_at

    gen = cat.gpu(node.gpu).generation if cat.has("gpu", node.gpu) else None
    dated = price_at(cat, gen, node.price_usd or 0.0, node.price_as_of, s.buildout.start_date)
    bom = [
        Line("compute", node.name, node.id, nodes, dated.usd, node.price_source),
        Line("network", sw.name, sw.id, switches, sw.price_usd or 0.0, sw.price_source),
        Line("network", xcvr.name, xcvr.id, modules, xcvr.price_usd or 0.0, xcvr.price_source),
        Line("network", fiber.name, fiber.id, links, fiber.price_usd or 0.0, fiber.price_source),
    ]
    pfs = [e for e in cat.all("storage") if e.tier == "pfs"]
    if pfs and tb > 0:
        blk = pfs[0]
        bom.append(Line("storage", blk.name, blk.id, math.ceil(tb / blk.capacity_tb), blk.price_usd or 0.0, blk.price_source))
    it_kw = nodes * node.max_power_kw / (1 - NON_NODE_POWER_FRAC)
    return FallbackDesign(nodes=nodes, it_kw=it_kw, bom=tuple(bom))
