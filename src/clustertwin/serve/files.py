"""The files the CLI writes, for download from the page: made by the CLI's own functions, so
each is byte for byte the file ``clustertwin plan --out`` / ``clustertwin export`` writes for
the same scenario (tests/serve/test_files.py compares them).

- ``plan.json``, ``plan.html``: as ``plan --out`` (``to_json`` of the plan document + a line
  break; :func:`clustertwin.report.html.render`).
- ``bom.csv``, ``bom.xlsx``: ``export bom``; ``floor-plan.svg``, ``rack-elevations.svg``,
  ``topology.svg``: ``export drawings``; ``export-all.zip``: every file of ``export all``
  (:func:`clustertwin.export.build.build_files`, default naming and policy), zipped with fixed
  dates and sorted names, so the same scenario gives the same archive.

They are made in a planning worker (memory-capped, timed like a plan; :mod:`.workers`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

#: download name -> (what makes it, media type)
FILES: dict[str, tuple[str, str]] = {
    "plan.json": ("plan", "application/json"),
    "plan.html": ("plan", "text/html; charset=utf-8"),
    "bom.csv": ("bom", "text/csv; charset=utf-8"),
    "bom.xlsx": ("bom", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    "floor-plan.svg": ("drawings", "image/svg+xml"),
    "rack-elevations.svg": ("drawings", "image/svg+xml"),
    "topology.svg": ("drawings", "image/svg+xml"),
    "export-all.zip": ("all", "application/zip"),
}
_EPOCH = (1980, 1, 1, 0, 0, 0)  #: the earliest date a zip entry can carry


def _bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)  # as OutputDir.write


def plan_files(result: Any) -> dict[str, bytes]:
    from clustertwin.fmt import json_document
    from clustertwin.report import html as html_report

    return {"plan.json": _bytes(json_document(result.to_dict()) + "\n"), "plan.html": _bytes(html_report.render(result))}


def export_files(result: Any, catalog: Any, kind: str) -> dict[str, bytes]:
    """``export KIND`` 's files for the planned scenario (the CLI's defaults)."""
    from clustertwin.design.site.naming import parse_naming
    from clustertwin.export.build import build_files
    from clustertwin.export.stage import make_context

    ctx = make_context(result.scenario, catalog, naming=parse_naming(None))
    files, _warnings = build_files(kind, ctx)
    return {name: _bytes(data) for name, data in files.items()}


def zipped(files: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, _EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name])
    return buf.getvalue()


_MADE: OrderedDict[tuple[str, str], dict[str, bytes]] = OrderedDict()
_KEEP = 2  #: (scenario, kind) sets kept: the BOM's csv and xlsx, the three drawings come together


def make_file(answer: Any, catalog: Any, name: str) -> bytes:
    """One download by name (a key of :data:`FILES`) for a planned scenario (an
    :class:`~clustertwin.serve.engine.Answer`); a worker keeps the last sets it made."""
    kind = FILES[name][0]
    hit = _MADE.get((answer.key, kind))
    if hit is None:
        if kind == "plan":
            hit = plan_files(answer.plan)
        elif kind == "all":
            hit = {name: zipped(export_files(answer.plan, catalog, "all"))}
        else:
            hit = export_files(answer.plan, catalog, kind)
        _MADE[(answer.key, kind)] = hit
        while len(_MADE) > _KEEP:
            _MADE.popitem(last=False)
    return hit[name]
