"""Streamed sweeps (issue 36): rows appended to Parquet parts as they finish, resumable after
an interruption, joined into one file equal to the in-memory table row for row."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from clustertwin.sweep.api import run_sweep_table
from clustertwin.sweep.grid import LazyPoints, make_points
from clustertwin.sweep.run import Runner
from clustertwin.sweep.runlog import RunLog
from clustertwin.sweep.stream import PARTS, join_parts, stream_sweep
from clustertwin.sweep.study import build
from tests.sweep.conftest import SMALL

GRID = {"cluster.gpus": [64, 128, 256], "economics.cloud_usd_per_gpu_hour": [2.0, 2.5, 3.5]}


def test_lazy_points_are_the_points() -> None:
    cases = [("a", {"reliability.restart_min": 5}), ("b", {"reliability.restart_min": 20})]
    eager = make_points(SMALL, GRID, cases)
    lazy = LazyPoints(SMALL, GRID, cases)
    assert len(lazy) == len(eager) == 18
    assert list(lazy) == eager and lazy[7] == eager[7]
    with pytest.raises(IndexError):
        lazy[18]


@pytest.fixture(scope="module")
def reference():
    return run_sweep_table(build(SMALL, GRID), Runner(executor="local", workers=1))


def _same_rows(joined, reference) -> None:
    t = joined.sort_by("index")
    assert t.column("index").to_pylist() == list(range(reference.num_rows))
    for name in reference.column_names:
        assert t.column(name).to_pylist() == reference.column(name).to_pylist(), name


class Stop(Exception):
    pass


def test_interrupted_stream_resumes_and_equals_the_table(reference, tmp_path) -> None:
    sw = build(SMALL, GRID, lazy=True)
    seen = []

    def stop_after_five(n: int) -> None:
        seen.append(n)
        if sum(seen) >= 5:
            raise Stop  # as a kill would: rows not yet in a part are lost, parts stay

    with pytest.raises(Stop):
        stream_sweep(sw, tmp_path, Runner(workers=1, on_progress=stop_after_five), window=4, group_rows=2)
    parts = sorted((tmp_path / PARTS).glob("part-*.parquet"))
    assert parts and all(pq.ParquetFile(p).metadata.num_row_groups == 1 for p in parts)
    written = sum(pq.ParquetFile(p).metadata.num_rows for p in parts)
    assert 0 < written < 9 and not list((tmp_path / PARTS).glob(".*tmp"))
    log = RunLog("local")
    ran = stream_sweep(sw, tmp_path, Runner(workers=1, log=log), window=4, group_rows=2)
    assert log.resumed == written and ran == 9 - written
    rows = join_parts(tmp_path / PARTS, tmp_path / "sweep.parquet")
    assert rows == 9
    _same_rows(pq.read_table(tmp_path / "sweep.parquet"), reference)
    assert pq.ParquetFile(tmp_path / "sweep.parquet").metadata.num_row_groups == len(
        list((tmp_path / PARTS).glob("part-*.parquet")))


def test_stream_on_two_workers(reference, tmp_path) -> None:
    sw = build(SMALL, GRID, lazy=True)
    stream_sweep(sw, tmp_path, Runner(workers=2), window=5, group_rows=3)
    join_parts(tmp_path / PARTS, tmp_path / "sweep.parquet")
    _same_rows(pq.read_table(tmp_path / "sweep.parquet"), reference)
