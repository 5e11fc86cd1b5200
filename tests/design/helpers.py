"""Helpers for design tests: scenarios from the default document, extra catalog entries."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from clustertwin.catalog import load_catalog
from clustertwin.scenario import DEFAULT_SCENARIO, scenario_from_dict

_BASE = yaml.safe_load(DEFAULT_SCENARIO.read_text())


def scenario(catalog, gpus: int, source: str = "<test>", **cluster):
    doc = copy.deepcopy(_BASE)
    # reference designs count no hot spares beyond the pod; tests that want them say so
    doc["cluster"]["spare_nodes"] = 0
    fabric = cluster.pop("fabric", {})
    doc["cluster"].update(cluster)
    doc["cluster"]["gpus"] = gpus
    doc["cluster"]["fabric"].update(fabric)
    return scenario_from_dict(doc, source, catalog)


# Fixture nodes for reference designs whose systems the built-in catalog does not carry.
# Figures from shared/research/datacenter-anchors.md 1.5 and 7 (DGX B300: 8 x 800G ConnectX-8,
# 14.5 kW max, 10U). The GPU is recorded as b200 because the built-in catalog has no B300 GPU;
# the design stage never reads GPU specs.
FIXTURE_CATALOG = {
    "node": [
        {"id": "fixture-dgx-b300", "name": "DGX B300 (test fixture)", "gpu": "b200", "gpus": 8,
         "nvlink_domain_gpus": 8, "compute_nics": 8, "compute_nic_gbps": 800,
         "compute_cages": 8, "storage_nics": 2, "storage_nic_gbps": 400,
         "max_power_kw": 14.5, "rack_units": 10, "cooling": "air",
         "source": "datacenter-anchors.md 1.5, 7 (NVIDIA B300 SuperPOD RAs RA-11337/RA-11339)",
         "as_of": "2025"},
        {"id": "fixture-seed-h100-server", "name": "8 x H100 server (seed step 71 figure)",
         "gpu": "h100-sxm-80gb", "gpus": 8, "nvlink_domain_gpus": 8, "compute_nics": 8,
         "compute_nic_gbps": 400, "compute_cages": 8, "storage_nics": 2,
         "storage_nic_gbps": 400, "max_power_kw": 8.0, "rack_units": 8, "cooling": "air",
         "source": "seed 000 step 71: 8 x H100 (~700 W each) + server overhead = ~7-8 kW",
         "as_of": "2025"},
        {"id": "fixture-hot-node", "name": "an 80 kW air-cooled node (bad input)",
         "gpu": "h100-sxm-80gb", "gpus": 8, "nvlink_domain_gpus": 8, "compute_nics": 8,
         "compute_nic_gbps": 400, "compute_cages": 4, "max_power_kw": 80, "rack_units": 8,
         "cooling": "air", "source": "test", "as_of": "2025"},
    ],
}


def fixture_catalog(tmp_dir: Path):
    (tmp_dir / "fixtures.yaml").write_text(yaml.safe_dump(FIXTURE_CATALOG))
    return load_catalog([tmp_dir])
