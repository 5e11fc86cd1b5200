"""The big export files are made a chunk of rows at a time (issue 22c, peak memory at 10^5
GPUs): the text must not depend on where the chunks break, and an empty table keeps the
layout the one-piece join gave (header, then one blank line)."""

from __future__ import annotations

import pytest

from clustertwin.export import netbox, tables
from clustertwin.export.stage import make_context

from .helpers import catalog, example


def _one_piece(cols) -> str:
    """cabling.csv as one join over the whole table (the layout before chunking)."""
    text = [cols[f].astype(str) if cols[f].dtype != object else cols[f] for f in tables.FIELDS]
    rows = map(",".join, zip(*(c.tolist() for c in text), strict=True))
    return ",".join(tables.FIELDS) + "\n" + "\n".join(rows) + "\n"


@pytest.mark.parametrize("chunk", [1, 7, 1000, 10**9])
def test_cabling_csv_is_the_same_whatever_the_chunk(monkeypatch, chunk):
    scen, d, inv, links = example("default")
    ctx = make_context(scen, catalog(), d)
    from clustertwin.design.site.cabling import cabling_columns

    cols = cabling_columns(ctx.inventory, ctx.design)
    monkeypatch.setattr(tables, "CHUNK", chunk)
    assert tables.cabling_csv(ctx, cols) == _one_piece(cols)
    empty = {k: v[:0] for k, v in cols.items()}
    assert tables.cabling_csv(ctx, empty) == _one_piece(empty) == ",".join(tables.FIELDS) + "\n\n"


@pytest.mark.parametrize("size", [1, 2, 5, 100])
def test_chunked_join_keeps_every_line_in_order(size):
    lines = [f"row{i}\n" for i in range(23)]
    assert netbox._chunked(iter(lines), size) == "".join(lines)
    assert netbox._chunked(iter([]), size) == "\n"


def test_first_ports_keeps_the_first_of_each_pair():
    devs = ["a", "b", "a", "c", "b", "a"]
    ports = ["p1", "p1", "p2", "p1", "p1", "p1"]
    assert netbox._first_ports(devs, ports).tolist() == [0, 1, 2, 3]
