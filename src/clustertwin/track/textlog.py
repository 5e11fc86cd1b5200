"""In-memory logs (the back-test, the tests): the same readers over a string."""

from __future__ import annotations

from collections.abc import Iterator

from clustertwin.track import hf, readers
from clustertwin.track.records import LineStats


def text_items(text: str, fmt: str, stats: LineStats) -> Iterator[object]:
    lines = ((i, line) for i, line in enumerate(text.splitlines(), start=1))
    if fmt == "hf-state":
        import json

        yield from hf.read_state(json.loads(text), stats)
        return
    reader = {"megatron": readers.read_megatron, "torchtitan": readers.read_torchtitan,
              "hf-lines": hf.read_lines, "csv": readers.read_csv}.get(fmt)
    if reader is None:
        stats.reject(1, "no training log format recognised")
        return
    yield from reader(lines, stats)
