"""The frozen result of the design stage and its views (contract block, terminal rows, plots)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clustertwin.design.bom import BomLine, totals
from clustertwin.design.cooling import CoolingDesign
from clustertwin.design.fabric_result import ComputeFabric
from clustertwin.design.floor import FloorDesign, Racks
from clustertwin.design.layout import Layout
from clustertwin.design.networks import ManagementNetworks
from clustertwin.design.power import PowerDesign
from clustertwin.design.storage import StorageDesign


@dataclass(frozen=True)
class ClusterDesign:
    """Physical design of the cluster. Units: kW, m2, TB/PB; storage bandwidths in GB/s
    (gigaBYTES per second)."""

    node_id: str
    gpu_id: str
    layout: Layout
    fabric: ComputeFabric
    networks: ManagementNetworks
    storage: StorageDesign
    power: PowerDesign
    cooling: CoolingDesign
    rack_counts: Racks
    floor: FloorDesign
    bom: tuple[BomLine, ...]
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  #: design choices made for the user (scale-out, facility)
    facility: str = "new-build"  #: "existing-facility" when it fits one (build-out, economics)
    #: set when hot spares took installed nodes' slots (spare_placement: inside, units full):
    #: the most GPUs the training job can use; the plan re-estimates the job on them
    job_gpus_limit: int | None = None
    #: cables by medium (design.site.summary.MediumCount): counted from the link classes;
    #: lengths only once the site is placed (design.site.summary.routed)
    cabling: tuple = ()
    #: the link classes (design.site.classes.CableClass): links, cables, medium of each kind
    cable_classes: tuple = ()

    # --- the contract's headline figures -------------------------------------------------
    @property
    def nodes(self) -> int:
        """All nodes, hot spares included."""
        return self.layout.nodes

    @property
    def job_nodes(self) -> int:
        return self.layout.job_nodes

    @property
    def spare_nodes(self) -> int:
        return self.layout.spare_nodes

    @property
    def gpus(self) -> int:
        return self.layout.gpus

    @property
    def racks(self) -> int:
        return self.rack_counts.total

    @property
    def scalable_units(self) -> int:
        return self.fabric.scalable_units

    @property
    def nvlink_domains(self) -> int:
        return self.layout.nvlink_domains

    @property
    def bom_priced_usd(self) -> float:
        return sum(totals(self.bom).values())

    # --- views ----------------------------------------------------------------------------
    def to_contract(self) -> dict[str, Any]:
        p, c, s = self.power, self.cooling, self.storage
        return {
            "nodes": self.nodes,
            "job_nodes": self.job_nodes,
            "idle_nodes": self.layout.idle_nodes,
            "spare_nodes": self.spare_nodes,
            "gpus": self.gpus,
            "nodes_per_rack": self.layout.nodes_per_rack,
            "nvlink_domains": self.nvlink_domains,
            "racks": self.racks,
            "racks_by_kind": {"compute": self.rack_counts.compute,
                              "network": self.rack_counts.network,
                              "management": self.rack_counts.management,
                              "storage": self.rack_counts.storage},
            "scalable_units": self.scalable_units,
            "fabric": self._fabric_contract(),
            "networks": self._networks_contract(),
            "power": {
                "it_kw": p.it_kw, "it_typical_kw": p.it_typical_kw,
                "facility_kw": p.facility_kw, "rack_kw": p.rack_kw, "pue": p.pue,
                "nodes_kw": p.nodes_kw, "compute_fabric_kw": p.compute_fabric_kw,
                "storage_fabric_kw": p.storage_fabric_kw, "management_kw": p.management_kw,
                "storage_kw": p.storage_kw, "pdus": p.pdus,
                "pdus_by_kind": dict(p.pdus_by_kind), "circuits": p.circuits,
                "ups_redundancy": p.ups_redundancy, "ups_modules": p.ups_modules,
                "ups_module_kw": p.ups_module_kw, "generators": p.generators,
                "generator_kw": p.generator_kw,
            },
            "cooling": {
                "mode": c.mode, "pue": c.pue, "heat_kw": c.heat_kw, "liquid_kw": c.liquid_kw,
                "air_kw": c.air_kw, "crah_units": c.crah_units, "cdu_units": c.cdu_units,
                "crah_rating_kw": c.crah_rating_kw, "rdhx_units": c.rdhx_units,
                "rdhx_kw": c.rdhx_kw, "chillers": c.chillers,
                "chiller_rating_kw": c.chiller_rating_kw,
                "high_density": c.high_density,
            },
            "storage": {
                "capacity_pb": s.capacity_pb, "write_gbps": s.write_gbps,
                "read_gbps": s.read_gbps, "checkpoint_tb": s.checkpoint_tb,
                "dataset_tb": s.dataset_tb, "required_write_gbps": s.required_write_gbps,
                "required_read_gbps": s.required_read_gbps,
                "nvme_write_gbps_per_node": s.nvme_write_gbps_per_node,
                "tiers": [{"tier": t.tier, "system": t.system_id, "blocks": t.blocks,
                           "capacity_tb": t.capacity_tb, "write_gbps": t.write_gbps,
                           "read_gbps": t.read_gbps} for t in s.tiers],
            },
            "floor": {"racks": self.floor.racks, "rows": self.floor.rows,
                      "in_row_m2": self.floor.in_row_m2, "area_m2": self.floor.area_m2,
                      "halls": self.floor.halls, "rows_per_hall": self.floor.rows_per_hall},
            "cabling": _cabling_contract(self.cabling),
            "bom": [ln.to_dict() for ln in self.bom],
            "bom_priced_usd": self.bom_priced_usd,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "facility": self.facility,
        }

    def _fabric_contract(self) -> dict[str, Any]:
        f = self.fabric
        return {
            "technology": f.technology, "switch": f.switch_id, "topology": f.topology,
            "radix": f.radix, "endpoint_gbps": f.endpoint_gbps, "planes": f.planes,
            "rails": f.rails, "su_nodes": f.su_nodes, "rail_groups": f.rail_groups,
            "oversubscription": f.oversubscription,
            "tiers": f.tiers, "leaf": f.leaf, "spine": f.spine, "core": f.core,
            "switches": f.switches, "cables": f.cables,
            "node_leaf_links": f.node_leaf_links, "leaf_spine_links": f.leaf_spine_links,
            "spine_core_links": f.spine_core_links, "manager_links": f.manager_links,
            "copper_cables": f.copper_cables, "fiber_cables": f.fiber_cables,
            "switch_transceivers": f.switch_modules, "node_transceivers": f.node_modules,
            "manager_transceivers": f.manager_modules,
            "transceivers": f.transceivers,
            "leaf_switch": f.switch_id, "spine_switch": f.upper_switch_id,
            "dual_tor": f.dual_tor, "pods": f.pods,
            "pod_gpus": (f.pod.pod_nodes * self.layout.gpus_per_node
                         if f.pod is not None else None),
            "pod_oversubscription": (f.pod.pod_oversubscription
                                     if f.pod is not None and f.pod.spine_up else None),
            "cross_pod_ratio": f.cross_pod_ratio,
            "tier_counts": f.tier_table(),
        }

    def _networks_contract(self) -> dict[str, Any]:
        n = self.networks
        return {
            "storage_fabric": {"switch": n.storage.switch_id, "leaf": n.storage.leaf,
                               "spine": n.storage.spine, "core": n.storage.core,
                               "storage_leaves": n.storage.storage_leaves,
                               "converged_inband": n.storage.converged,
                               "cables": n.storage.cables},
            "inband": {"switch": n.inband_switch_id, "switches": n.inband_switches,
                       "links": n.inband_links},
            "oob": {"switch": n.oob_switch_id, "switches": n.oob_switches,
                    "devices": n.oob_devices},
            "ufm_appliances": n.ufm_appliances,
            "management_servers": n.management_servers,
        }


def _cabling_contract(counts: tuple) -> dict:
    from clustertwin.design.site.summary import cabling_contract

    return cabling_contract(counts)
