"""Light stand-ins for Scenario and Catalog so the build-out tests do not depend on the
catalog data or the scenario schema landing first (the stage reads them with getattr)."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from clustertwin.errors import Problem, ScenarioError

NODES = {
    # DGX H100: 8 GPUs, 10.2 kW max, 8U, 8 compute NICs, air-cooled (DGX H100 SuperPOD RA)
    "dgx-h100": SimpleNamespace(
        id="dgx-h100",
        gpus=8,
        max_power_kw=10.2,
        rack_units=8,
        compute_nics=8,
        rack_scale=False,
        cooling="air",
    ),
    # Supermicro 4U liquid-cooled HGX H100 as in xAI Colossus (8 per rack, datacenter-anchors 3.3)
    "hgx-h100-liquid": SimpleNamespace(
        id="hgx-h100-liquid",
        gpus=8,
        max_power_kw=11.0,
        rack_units=4,
        compute_nics=9,
        rack_scale=False,
        cooling="liquid",
    ),
}


class FakeCatalog:
    def node(self, entry_id, **kw):
        try:
            return NODES[entry_id]
        except KeyError:
            raise ScenarioError(
                [Problem("catalog", "cluster.node", f"unknown node {entry_id!r}")]
            ) from None

    def fabric(self, entry_id, **kw):
        return SimpleNamespace(id=entry_id, switch="qm9700")

    def get(self, kind, entry_id, **kw):
        if kind == "switch":
            return SimpleNamespace(id=entry_id, ports=64, power_kw_max=1.7)
        raise ScenarioError([Problem("catalog", kind, f"unknown {kind} {entry_id!r}")])


def scenario(gpus=16384, profile="new-build", node="dgx-h100", seed=0, start=dt.date(2027, 1, 5),
             site="greenfield"):
    return SimpleNamespace(
        name="fake",
        cluster=SimpleNamespace(
            gpus=gpus,
            node=node,
            gpu="h100-sxm-80gb",
            spare_nodes=0,
            deadline_days=None,
            fabric=SimpleNamespace(technology="ib-ndr", oversubscription=1.0),
        ),
        buildout=SimpleNamespace(profile=profile, start_date=start),
        reliability=SimpleNamespace(seed=seed),
        decision=SimpleNamespace(site=site),
    )
