"""A small, fast base scenario (Llama-3-8B on 64 H100, 100B tokens, 100 trials: ~0.1 s a plan)."""

from __future__ import annotations

import pytest
import yaml

SMALL = {
    "schema_version": 1,
    "name": "small",
    "model": {"preset": "llama3-8b"},
    "training": {"tokens": 1e11, "seq_len": 8192, "global_batch_tokens": 4194304},
    "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": 64},
    "reliability": {"trials": 100, "seed": 7},
    "buildout": {"profile": "existing-facility"},
}
#: a 2 x 2 grid over a size key and a price key
GRID = {"cluster.gpus": [64, 128], "economics.cloud_usd_per_gpu_hour": [2.0, 3.5]}


@pytest.fixture
def small_doc() -> dict:
    import copy

    return copy.deepcopy(SMALL)


@pytest.fixture
def small_file(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(SMALL))
    return path
