"""Rows of a sweep -> one typed table (pyarrow) and its CSV / Parquet files.

A row is a plan flattened with dots: nested mappings become ``block.key.sub`` columns, lists
of plain values (``buildout.critical_path``, ``warnings``) become a JSON text, and per-item
tables (lists of mappings such as ``buildout.steps`` and ``design.bom``) are left to
``clustertwin plan --json``: each would add ~100 kB to every row. Columns are: the swept keys,
then the plan's keys in the order the first rows give them, then ``point`` (the
scenario's label in the grid) and ``error``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from clustertwin.quoting import csv_writer

#: a swept key that is also a plan key (``training.gpus``) takes its column from the scenario block
SCENARIO_PREFIX = "scenario."


def flatten(doc: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists of scalars -> JSON text; lists of mappings dropped."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif isinstance(value, list | tuple):
            if any(isinstance(v, dict | list | tuple) for v in value):
                continue
            out[name] = json.dumps(list(value), default=str)
        elif isinstance(value, float) and not math.isfinite(value):
            out[name] = None
        else:
            out[name] = value
    return out


def swept_columns(keys: list[str], plan_columns: set[str]) -> list[str]:
    """The column of each swept key: its own name, or ``scenario.<key>`` when a plan key has it."""
    return [SCENARIO_PREFIX + k if k in plan_columns else k for k in keys]


def _column_type(values: list[Any]) -> str:
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return "null"
    if kinds == {bool}:
        return "bool"
    if kinds == {int}:
        return "int"
    if kinds <= {int, float}:
        return "float"
    return "str"


def _as(kind: str, v: Any) -> Any:
    if v is None:
        return None
    if kind == "float":
        return float(v)
    if kind == "str":
        return v if isinstance(v, str) else json.dumps(v, default=str)
    return v


def build_table(keys: list[str], points: list[dict[str, Any]], rows: list[dict[str, Any]],
                labels: list[str] | None = None) -> Any:
    """The sweep table: one row per point (``points[i]`` its swept values, ``rows[i]`` its
    flattened plan), columns typed from their values (mixed numbers are float, anything
    mixed with text is text)."""
    import pyarrow as pa

    plan_cols: dict[str, None] = {}
    for r in rows:
        for c in r:
            if c != "error":
                plan_cols.setdefault(c, None)
    sweep_cols = swept_columns(keys, set(plan_cols))
    data: dict[str, list[Any]] = {}
    for key, col in zip(keys, sweep_cols, strict=True):
        data[col] = [p.get(key) for p in points]
    for c in plan_cols:
        if c not in data:
            data[c] = [r.get(c) for r in rows]
    if labels is not None:
        data["point"] = list(labels)
    data["error"] = [r.get("error") for r in rows]
    arrays, names = [], []
    types = {"null": pa.null(), "bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "str": pa.string()}
    for name, values in data.items():
        kind = _column_type(values)
        arrays.append(pa.array([_as(kind, v) for v in values], type=types[kind]))
        names.append(name)
    meta = {"clustertwin.swept": json.dumps(sweep_cols)}
    return pa.Table.from_arrays(arrays, names=names).replace_schema_metadata(meta)


def swept_of(table: Any) -> list[str]:
    """The swept columns of a sweep table (from its metadata)."""
    meta = table.schema.metadata or {}
    raw = meta.get(b"clustertwin.swept")
    return json.loads(raw) if raw else []


def csv_text(table: Any) -> str:
    """CSV with a header row; floats written with repr precision (round-trip exact)."""
    import io

    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(table.column_names)
    cols = [c.to_pylist() for c in table.columns]
    for i in range(table.num_rows):
        w.writerow(["" if col[i] is None else _csv_cell(col[i]) for col in cols])
    return buf.getvalue()


def _csv_cell(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)   # the writer escapes text


def parquet_bytes(table: Any) -> bytes:
    """The table as Parquet (deterministic: no timestamps, fixed writer settings)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", write_statistics=False)
    return sink.getvalue().to_pybytes()
