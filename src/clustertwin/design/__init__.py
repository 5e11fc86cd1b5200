"""Physical design: racks, scalable units, rail-optimized fabric, management and storage
networks, storage tiers, power chain, cooling, floor and bill of materials.

``design(scenario, catalog, estimate) -> ClusterDesign``; ``size_fabric`` is the pure fat-tree
counting rule other stages may call.
"""

from clustertwin.design.core import design
from clustertwin.design.fabric import FabricSize, max_endpoints, size_fabric
from clustertwin.design.result import ClusterDesign
from clustertwin.design.rules import DesignRules, load_rules

__all__ = ["ClusterDesign", "DesignRules", "FabricSize", "design", "load_rules",
           "max_endpoints", "size_fabric"]
