"""The same sweep on every executor and worker count gives the same table, byte for byte."""

from __future__ import annotations

import importlib.util

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustertwin.sweep.api import run_sweep_table
from clustertwin.sweep.run import Runner
from clustertwin.sweep.study import build
from clustertwin.sweep.table import csv_text, parquet_bytes
from tests.sweep.conftest import GRID, SMALL


@pytest.fixture(scope="module")
def reference():
    """The 2 x 2 sweep in this process (one worker)."""
    return run_sweep_table(build(SMALL, GRID), Runner(executor="local", workers=1))


def test_reference_rows_planned(reference):
    assert reference.num_rows == 4
    assert reference.column("error").to_pylist() == [None] * 4
    # economics.cloud_usd_per_gpu_hour is also a plan key: the swept column is the scenario's
    assert reference.column_names[:2] == ["cluster.gpus", "scenario.economics.cloud_usd_per_gpu_hour"]
    days = reference.column("training.days").to_pylist()
    assert days[0] == days[1] and days[2] < days[0]  # price does not change time; 2x GPUs is faster
    cloud = reference.column("economics.run_cost_cloud_usd").to_pylist()
    assert cloud[1] > cloud[0]


def test_two_workers_same_bytes(reference):
    table = run_sweep_table(build(SMALL, GRID), Runner(executor="local", workers=2))
    assert _differences(table, reference) == []
    assert table.equals(reference, check_metadata=True)
    assert csv_text(table) == csv_text(reference)
    assert parquet_bytes(table) == parquet_bytes(reference)


@pytest.mark.ray
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (pip install 'clustertwin[ray]')")
def test_ray_local_same_bytes(reference):
    table = run_sweep_table(build(SMALL, GRID), Runner(executor="ray", workers=2))
    assert table.column("error").to_pylist() == [None] * 4
    assert _differences(table, reference) == []
    assert table.equals(reference, check_metadata=True)
    assert parquet_bytes(table) == parquet_bytes(reference)


def _differences(a, b) -> list:
    """Columns whose values differ (for a readable failure)."""
    if a.column_names != b.column_names:
        return [("columns", sorted(set(a.column_names) ^ set(b.column_names)))]
    return [(n, a.column(n).to_pylist(), b.column(n).to_pylist()) for n in a.column_names
            if not a.column(n).equals(b.column(n))]


def _by_point(table) -> dict:
    keys = ["cluster.gpus", "scenario.economics.cloud_usd_per_gpu_hour"]
    rows = table.to_pylist()
    return {tuple(r[k] for k in keys): {k: v for k, v in r.items() if k not in ("point", "scenario.name")}
            for r in rows}


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gpus=st.permutations([64, 128]), prices=st.permutations([2.0, 3.5]),
       keys_flipped=st.booleans(), workers=st.sampled_from([1, 2]))
def test_order_and_workers_do_not_change_any_row(reference, gpus, prices, keys_flipped, workers):
    grid = {"cluster.gpus": gpus, "economics.cloud_usd_per_gpu_hour": prices}
    if keys_flipped:
        grid = dict(reversed(list(grid.items())))
    table = run_sweep_table(build(SMALL, grid), Runner(executor="local", workers=workers))
    assert _by_point(table) == _by_point(reference)
