"""Sweeps at scale: points streamed, rows appended to Parquet as they finish, resumable.

``clustertwin sweep --stream`` (and :func:`stream_sweep`) never holds the grid or the table:

* the points are built as they are read (:class:`clustertwin.sweep.grid.LazyPoints`) and
  handed out in windows of ``window`` points; each window is validated as ``sweep`` validates a
  whole grid (a bad value stops the run with one line; a value judged only within its window)
  and run on the executor;
* finished rows are buffered up to ``group_rows`` and written as one Parquet file of one row
  group under ``sweep.parts/`` (written to a temporary name and renamed, so a kill leaves only
  whole parts); every part carries the points' ``index`` column;
* a run started again on the same folder reads the ``index`` column of the parts already there
  and skips those points (``resumed`` in run.json): a killed sweep loses at most the rows not
  yet written;
* at the end the parts are joined into ``sweep.parquet`` part by part (one row group each, the
  columns unified across parts), so the driver holds one window and one part at a time,
  whatever the count.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clustertwin.sweep.run import Runner

PARTS = "sweep.parts"
INDEX = "index"


def done_indexes(parts: Path) -> set[int]:
    """The point indexes already written under ``parts`` (resuming a killed sweep)."""
    import pyarrow.parquet as pq

    done: set[int] = set()
    for f in sorted(parts.glob("part-*.parquet")):
        done.update(pq.read_table(f, columns=[INDEX]).column(INDEX).to_pylist())
    return done


def _write_part(parts: Path, keys: list[str], points: list[Any], rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from clustertwin.sweep.table import build_table

    table = build_table(keys, [p.assignments for p in points], rows, [p.label for p in points])
    table = table.add_column(0, INDEX, pa.array([p.index for p in points], type=pa.int64()))
    seq = len(list(parts.glob("part-*.parquet")))
    final = parts / f"part-{seq:06d}.parquet"
    tmp = parts / f".part-{seq:06d}.parquet.tmp"
    pq.write_table(table, tmp, row_group_size=max(1, table.num_rows))
    os.replace(tmp, final)


def stream_sweep(sw: Any, out: Path, runner: Runner = Runner(), window: int = 4096,
                 group_rows: int = 2048) -> int:
    """Run every point of ``sw`` (lazy points welcome) into ``out/sweep.parts`` as ``runner``
    says; return the number of points run now (points already there are skipped and counted
    in the runner's ``log``)."""
    from clustertwin.sweep.run import cached_catalog, stream

    on_progress, log = runner.on_progress, runner.log
    from clustertwin.sweep.validate import validate_points

    parts = out / PARTS
    parts.mkdir(parents=True, exist_ok=True)
    done = done_indexes(parts)
    if log is not None:
        log.resumed = len(done)
    if on_progress and done:
        on_progress(len(done))
    cat = cached_catalog(runner.catalog_dirs)
    todo = (i for i in range(len(sw.points)) if i not in done)
    ran = 0
    buf_points: list[Any] = []
    buf_rows: list[dict[str, Any]] = []
    while batch := list(itertools.islice(todo, window)):
        points = [sw.points[i] for i in batch]
        by_index = {p.index: p for p in points}
        skip = validate_points(points, cat, sw.source)
        for i, row in stream([(p.index, p.doc) for p in points], sw.source, runner, skip):
            buf_points.append(by_index[i])
            buf_rows.append(row)
            if len(buf_rows) >= group_rows:
                _write_part(parts, sw.keys, buf_points, buf_rows)
                buf_points, buf_rows = [], []
        ran += len(points)
    if buf_rows:
        _write_part(parts, sw.keys, buf_points, buf_rows)
    return ran


def join_parts(parts: Path, target: Path) -> int:
    """Write the parts as one Parquet file (a row group per part, rows in index order within
    each part, columns unified: a number column that is text in some part becomes text);
    return the row count. Memory: one part at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(parts.glob("part-*.parquet"))
    schema = pa.unify_schemas([pq.read_schema(f) for f in files], promote_options="permissive") \
        if files else pa.schema([(INDEX, pa.int64())])
    rows = 0
    with pq.ParquetWriter(target, schema) as writer:
        for f in files:
            t = pq.read_table(f)
            t = t.sort_by(INDEX)
            cols = [t.column(n).cast(schema.field(n).type) if n in t.column_names
                    else pa.nulls(t.num_rows, schema.field(n).type) for n in schema.names]
            writer.write_table(pa.Table.from_arrays(cols, schema=schema), row_group_size=max(1, t.num_rows))
            rows += t.num_rows
    return rows


def stream_command(sw: Any, out: Path, runner: Runner, force: bool,
                   progress: Callable[[int], tuple[Any, Any]]) -> str:
    """``clustertwin sweep --stream`` of the (lazy) study ``sw``: run into ``out/sweep.parts``
    (resuming what is there), then write ``out/sweep.parquet`` and ``out/run.json``; return a
    one-line summary."""
    from dataclasses import replace

    from clustertwin.outputs import OutputDir
    from clustertwin.sweep.runlog import RunLog

    folder = OutputDir(out, ["sweep.parquet", "run.json"], force)
    log = RunLog(runner.executor)
    prog, advance = progress(len(sw.points))
    with prog:
        stream_sweep(sw, out, replace(runner, on_progress=advance, log=log))
    with folder.staged("sweep.parquet") as tmp:
        rows = join_parts(out / PARTS, tmp)
    log.finish()
    folder.write("run.json", log.to_json())
    folder.commit()
    return (f"{rows:,} rows ({log.resumed:,} from an earlier run) in {log.wall_s:.1f} s; "
            f"wrote {folder.path / 'sweep.parquet'}, {folder.path / 'run.json'} "
            f"(parts in {out / PARTS})")


#: the most points a streamed sweep may make unless --max-scenarios says otherwise
STREAM_MAX = 10_000_000


__all__ = ["join_parts", "stream_sweep", "done_indexes"]
