"""Real scenarios and catalog entries for the build-out tests, with the entries' figures pinned
to the ones these tests were written against (so a catalog edit does not move them).

``scenario()`` is a real, validated :class:`Scenario` (the built-in default with the cluster,
profile, seed and start given). ``PinnedCatalog`` answers the three look-ups the build-out
makes (node, fabric, switch) with real catalog models whose figures are the sources' below, and
has no ``route`` kind, so step 1 keeps the step book's own GPU lead time."""

from __future__ import annotations

import datetime as dt
from functools import cache

import yaml

from clustertwin.errors import Problem, ScenarioError

#: node id -> pinned figures
NODE_FIGURES = {
    # DGX H100: 8 GPUs, 10.2 kW max, 8U, 8 compute NICs, air-cooled (DGX H100 SuperPOD RA)
    "dgx-h100": {"gpus": 8, "max_power_kw": 10.2, "rack_units": 8, "compute_nics": 8,
                 "rack_scale": False, "cooling": "air", "ships_assembled": False},
    # Supermicro 4U liquid-cooled HGX H100 as in xAI Colossus (8 per rack, datacenter-anchors 3.3)
    "hgx-h100-liquid-4u": {"gpus": 8, "max_power_kw": 11.0, "rack_units": 4, "compute_nics": 9,
                           "rack_scale": False, "cooling": "liquid", "ships_assembled": False},
}
#: the NDR leaf/spine: 64 ports, 1.7 kW max (QM9700 data sheet, rounded as the tests were written)
SWITCH_FIGURES = {"ports": 64, "power_kw_max": 1.7}


@cache
def real_catalog():
    from clustertwin.catalog import load_catalog

    return load_catalog()


class PinnedCatalog:
    """The build-out's catalog look-ups, answered with real entries carrying the pinned figures."""

    def kinds(self) -> list[str]:
        return ["fabric", "node", "switch"]

    def node(self, entry_id, **kw):
        if entry_id not in NODE_FIGURES:
            raise ScenarioError([Problem("catalog", "cluster.node", f"unknown node {entry_id!r}")])
        return real_catalog().node(entry_id).model_copy(update=NODE_FIGURES[entry_id])

    def fabric(self, entry_id, **kw):
        return real_catalog().fabric(entry_id)

    def get(self, kind, entry_id, **kw):
        if kind == "switch":
            return real_catalog().get("switch", entry_id).model_copy(update=SWITCH_FIGURES)
        raise ScenarioError([Problem("catalog", kind, f"unknown {kind} {entry_id!r}")])


def scenario(gpus=16384, profile="new-build", node="dgx-h100", seed=0, start=dt.date(2027, 1, 5),
             site="greenfield"):
    """The default scenario on ``gpus`` GPUs of ``node`` (no spares, a non-blocking NDR
    fabric), built out by ``profile`` from ``start``."""
    from clustertwin.scenario import DEFAULT_SCENARIO, scenario_from_dict

    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    doc["cluster"].update(gpus=gpus, node=node, gpu="h100-sxm-80gb", spare_nodes=0)
    doc["cluster"]["fabric"] = {"technology": "ib-ndr", "oversubscription": 1.0}
    doc["buildout"] = {**doc.get("buildout", {}), "profile": profile, "start_date": start.isoformat()}
    doc["reliability"] = {**doc.get("reliability", {}), "seed": seed}
    doc["decision"] = {**doc.get("decision", {}), "site": site}
    return scenario_from_dict(doc, "fake.yaml", real_catalog())
