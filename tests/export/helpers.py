"""Helpers for export tests: designs of the examples and of generated scenarios."""

from __future__ import annotations

import copy
from collections import Counter
from functools import lru_cache
from pathlib import Path

import yaml

from clustertwin.catalog import load_catalog
from clustertwin.scenario import DEFAULT_SCENARIO, scenario_from_dict

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
_BASE = yaml.safe_load(DEFAULT_SCENARIO.read_text())


@lru_cache(maxsize=1)
def catalog():
    return load_catalog()


def scenario(gpus: int, spare_nodes: int = 0, **cluster):
    doc = copy.deepcopy(_BASE)
    fabric = cluster.pop("fabric", {})
    doc["cluster"].update(cluster)
    doc["cluster"]["gpus"] = gpus
    doc["cluster"]["spare_nodes"] = spare_nodes
    doc["cluster"]["fabric"].update(fabric)
    return scenario_from_dict(doc, "<test>", catalog())


def design_of(scen):
    from clustertwin.design import design

    return design(scen, catalog(), None)


@lru_cache(maxsize=8)
def example(name: str):
    """(scenario, design, inventory, links) of examples/NAME.yaml, designed as
    ``clustertwin export`` does."""
    from clustertwin.design.site.cabling import build_cabling
    from clustertwin.design.site.inventory import build_inventory
    from clustertwin.export.stage import export_design
    from clustertwin.scenario import load_scenario

    cat = catalog()
    scen = load_scenario(EXAMPLES / f"{name}.yaml", cat)
    d = export_design(scen, cat)
    inv = build_inventory(scen, cat, d)
    return scen, d, inv, build_cabling(inv, d)


def count_check(d, inv, links=None) -> list[str]:
    """Every disagreement between the design's counts and the inventory / cabling map
    (``links`` None = the map's columns, built here; faster for property tests)."""
    import numpy as np

    from clustertwin.design.site.cabling import FIELDS, cabling_columns

    if links is None:
        cols = cabling_columns(inv, d)
    else:
        cols = {f: np.array([getattr(lk, f) for lk in links], dtype=object) for f in FIELDS}
    f, n = d.fabric, d.networks
    kinds = Counter(cols["kind"].tolist())
    fab = Counter(cols["fabric"].tolist())
    compute_cables = len(set(cols["cable_id"][cols["fabric"] == "compute"].tolist()))
    want = {
        "nodes": (inv.count("node"), d.nodes * inv.trays_per_system),
        "gpus": (sum(x.gpus for x in inv.nodes), d.gpus),
        "racks": (len(inv.racks), d.racks),
        "leaf": (inv.count("leaf"), f.leaf), "spine": (inv.count("spine"), f.spine),
        "core": (inv.count("core"), f.core),
        "storage switches": (sum(inv.count(r) for r in ("storage-leaf", "storage-spine",
                                                          "storage-core")), n.storage.switches),
        "inband switches": (inv.count("inband"), n.inband_switches),
        "oob switches": (inv.count("oob"), n.oob_switches),
        "pdus": (inv.count("pdu"), d.power.pdus), "cdus": (inv.count("cdu"), d.cooling.cdu_units),
        "node_leaf_links": (kinds["node-leaf"] + kinds["manager-leaf"], f.node_leaf_links),
        "leaf_spine_links": (kinds["leaf-spine"] + kinds["leaf-leaf"], f.leaf_spine_links),
        "spine_core_links": (kinds["spine-core"] + kinds["core-core"], f.spine_core_links),
        "compute cables": (compute_cables, f.cables),
        "storage cables": (fab["storage"], n.storage.storage_links if n.storage.converged
                           else n.storage.cables),
        "inband links": (fab["inband"], n.inband_links),
        "oob links": (fab["oob"], n.oob_devices),
    }
    # cable ids per medium against the bill of materials' cable lines (catalog ids too)
    for line in d.bom:
        for prefix, fabric, media in (("compute-fabric optical cables", "compute", "optical"),
                                      ("compute-fabric copper cables", "compute", "copper"),
                                      ("storage-fabric cables", "storage", None)):
            if not line.item.startswith(prefix):
                continue
            sel = cols["fabric"] == fabric
            if media:
                sel &= cols["media"] == media
            want[f"BOM {prefix}"] = (len(set(cols["cable_id"][sel].tolist())), line.quantity)
            want[f"BOM {prefix} id"] = (set(cols["cable"][sel].tolist()) or {line.catalog_id},
                                        {line.catalog_id})
    bad = [f"{k}: exported {got} != design {exp}" for k, (got, exp) in want.items()
           if got != exp]
    ends = np.concatenate([cols["a_device"] + "/" + cols["a_port"],
                           cols["b_device"] + "/" + cols["b_port"]]).astype(str)
    uniq, counts = np.unique(ends, return_counts=True)
    bad += [f"port used twice: {e}" for e in uniq[counts > 1][:5]]
    if f.pod is None:   # one port speed: no compute switch uses more ports than it has
        sw = np.isin(cols["kind"], ["node-leaf", "manager-leaf", "leaf-spine", "leaf-leaf",
                                    "spine-core", "core-core"])
        top = max((int(x) for x in cols["b_port"][sw].tolist()), default=0)
        top_a = max((int(x) for x in cols["a_port"][sw & (cols["kind"] != "node-leaf")
                                                   & (cols["kind"] != "manager-leaf")]
                     .tolist()), default=0)
        if max(top, top_a) > f.radix:
            bad.append(f"compute switch port {max(top, top_a)} > radix {f.radix}")
    names = Counter(x.name for x in inv.devices)
    bad += [f"name used twice: {nm}" for nm, c in names.items() if c > 1][:5]
    return bad
