"""From design to the real cluster: a named inventory, the cabling map, and the files the
tools that run a cluster read (Slurm, Kueue, Prometheus, Grafana, Ansible).

``build_inventory(scenario, catalog, design, naming) -> Inventory`` and
``build_cabling(inventory, design) -> list[Link]`` are the stable entry points; every export
reads the inventory.
"""

from clustertwin._lazy import lazy_exports

__all__ = ["Inventory", "Link", "Naming", "build_cabling", "build_inventory"]
__getattr__ = lazy_exports(__name__, {
    "Inventory": "clustertwin.design.site.inventory",
    "build_inventory": "clustertwin.design.site.inventory",
    "Link": "clustertwin.design.site.cabling",
    "build_cabling": "clustertwin.design.site.cabling",
    "Naming": "clustertwin.design.site.naming",
})
