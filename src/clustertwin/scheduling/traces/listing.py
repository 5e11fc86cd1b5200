"""The packaged traces as a table (``clustertwin traces list``): name, jobs, source, licence.

``data/index.yaml`` names each packaged trace, its folder, the file(s) of its default form and
its source and licence; the job count is read from those files (data rows, after the header
where the file has one), so the table cannot drift from what ships.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from clustertwin.scheduling.traces.common import read_trace_text
from clustertwin.scheduling.traces.locate import PACKAGED

INDEX = PACKAGED / "index.yaml"


@dataclass(frozen=True)
class PackagedTrace:
    name: str  #: the ``--trace`` name; reference data no loader replays is in [brackets]
    folder: str
    jobs: int  #: data rows of the default file(s)
    unit: str  #: what a row is (pods, jobs, machines, ...)
    source: str
    license: str  #: the licence, as the contract spells the key
    cite: str


def _rows(entry: dict) -> int:
    folder = PACKAGED / entry["folder"]
    header = 1 if entry.get("header", True) else 0
    total = 0
    for pattern in entry["files"]:
        for path in sorted(folder.glob(pattern)):
            lines = [ln for ln in read_trace_text(path).splitlines() if ln.strip()]
            total += max(len(lines) - header, 0)
    return total


@lru_cache(maxsize=1)
def packaged_traces() -> tuple[PackagedTrace, ...]:
    """Every entry of ``data/index.yaml`` with its counted rows."""
    import yaml

    entries = yaml.safe_load(INDEX.read_text(encoding="utf-8"))
    return tuple(PackagedTrace(name=e["name"], folder=e["folder"], jobs=_rows(e), unit=e["unit"],
                               source=e["source"], license=e["licence"], cite=e["cite"])
                 for e in entries)
