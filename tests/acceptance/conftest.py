"""Shared fixtures: a 64-node DGX H100 NDR scenario, its acceptance plan, model and cabling."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

SMALL = {
    "schema_version": 1,
    "name": "small-h100",
    "model": {"preset": "llama3-8b"},
    "training": {"tokens": 1.0e12, "seq_len": 8192, "global_batch_tokens": 4194304, "precision": "bf16"},
    "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": 512, "spare_nodes": 0,
                "fabric": {"technology": "ib-ndr", "topology": "rail-optimized-fat-tree"}},
}


@pytest.fixture(scope="session")
def small(catalog):
    from clustertwin.scenario import scenario_from_dict

    return scenario_from_dict(SMALL, "small.yaml", catalog)


@pytest.fixture(scope="session")
def small_file(tmp_path_factory):
    import yaml

    p = tmp_path_factory.mktemp("scen") / "small.yaml"
    p.write_text(yaml.safe_dump(SMALL))
    return p


@pytest.fixture(scope="session")
def plan(small, catalog):
    from clustertwin.acceptance.plan import build_plan

    return build_plan(small, catalog)


@pytest.fixture(scope="session")
def model(small, catalog):
    from clustertwin.acceptance.model import model_for

    return model_for(small, catalog)


@pytest.fixture(scope="session")
def designed(small, catalog):
    from clustertwin.acceptance.wiring import expected_compute_links

    return expected_compute_links(small, catalog)


@pytest.fixture(scope="session")
def nodes(designed):
    return sorted({a for a, ap, *_ in designed if not str(ap).isdigit()})
