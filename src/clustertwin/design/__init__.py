"""Physical design: racks, scalable units, rail-optimized fabric, management and storage
networks, storage tiers, power chain, cooling, floor and bill of materials.

``design(scenario, catalog, estimate) -> ClusterDesign``; ``size_fabric`` is the pure fat-tree
counting rule other stages may call.
"""

from clustertwin._lazy import lazy_exports

__all__ = ["ClusterDesign", "DesignRules", "FabricSize", "design", "load_rules",
           "max_endpoints", "size_fabric"]
__getattr__ = lazy_exports(__name__, {
    "design": "clustertwin.design.core",
    "FabricSize": "clustertwin.design.fabric",
    "max_endpoints": "clustertwin.design.fabric",
    "size_fabric": "clustertwin.design.fabric",
    "ClusterDesign": "clustertwin.design.result",
    "DesignRules": "clustertwin.design.rules",
    "load_rules": "clustertwin.design.rules",
})
