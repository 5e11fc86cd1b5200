"""DCGM diagnostics (``dcgmi diag -r N -j``) JSON, both generations:

* DCGM <= 3.x: ``{"DCGM GPU Diagnostic": {"test_categories": [{category, tests: [{name,
  results: [{gpu_ids | gpu_id, status, warnings}]}]}], "version"}}``;
* DCGM 4.x: ``{"DCGM Diagnostic": {"test_categories": [... results: [{entity_group,
  entity_id, status, warnings}], test_summary]}, "entity_groups": [{entity_group, entities:
  [{entity_id, serial_num}]}], "metadata": {version, "Driver Version Detected"}}``.

One file is one node's run; the node is named by the file (``dcgm-NODE.json`` or
``NODE.json``). Statuses are case-folded; a word the importer does not know is graded ``warn``
(an unknown word is not evidence of health), Skip is not a failure.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clustertwin.acceptance.importers.common import ImportReport, fail, load_json, read_text
from clustertwin.errors import Problem

_STATUS = {"pass": "pass", "skip": "skip", "skipped": "skip", "fail": "fail", "failed": "fail",
           "warn": "warn", "warning": "warn", "not run": "skip", "notrun": "skip"}
_RANK = {"pass": 0, "skip": 0, "warn": 1, "fail": 2}


@dataclass(frozen=True)
class DcgmRun:
    source: str
    node: str
    generation: str                       #: "3.x" or "4.x"
    version: str
    gpu_status: dict[int, str]            #: worst status per GPU index: pass | warn | fail
    findings: tuple[tuple[int, str, str, str], ...] = ()   #: (gpu, test, status, warning)
    serials: dict[int, str] = field(default_factory=dict)
    tests: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "node": self.node, "generation": self.generation,
                "version": self.version, "tests": self.tests,
                "gpus": {str(k): v for k, v in sorted(self.gpu_status.items())},
                "findings": [{"gpu": g, "test": t, "status": s, "warning": w} for g, t, s, w in self.findings],
                "serials": {str(k): v for k, v in sorted(self.serials.items())}}


def node_of(source: str) -> str:
    stem = os.path.basename(source).split(".")[0]
    return re.sub(r"^(dcgm|diag|dcgmi)[-_]", "", stem)


def _gpu_ids(result: dict[str, Any]) -> list[int] | None:
    eid = result.get("entity_id")
    if type(eid) is int and eid >= 0 and result.get("entity_group", "GPU") == "GPU":
        return [eid]  # the common 4.x case, first
    if "entity_id" in result:
        if str(result.get("entity_group", "GPU")).upper() != "GPU":
            return []
        raw: Any = result["entity_id"]
    else:
        raw = result.get("gpu_ids", result.get("gpu_id"))
    if isinstance(raw, int) and raw >= 0:
        return [raw]
    if isinstance(raw, str) and raw.strip():
        parts = [p.strip() for p in raw.split(",")]
        if all(p.isdigit() for p in parts):
            return [int(p) for p in parts]
    return None


def _warnings(result: dict[str, Any]) -> str:
    w = result.get("warnings", result.get("warning", []))
    if isinstance(w, list):
        return "; ".join(str(x.get("warning", x)) if isinstance(x, dict) else str(x) for x in w)
    return str(w) if w else ""


def _real(serial: Any) -> bool:
    """A serial number, not DCGM's ``<<<NOT_SUPPORTED>>>`` placeholder."""
    return bool(serial) and not str(serial).startswith("<<<")


def _serials(doc: dict[str, Any], body: dict[str, Any]) -> dict[int, str]:
    out: dict[int, str] = {}
    for grp in doc.get("entity_groups", []) or []:
        if isinstance(grp, dict) and str(grp.get("entity_group", "")).upper() == "GPU":
            for e in grp.get("entities", []) or []:
                if isinstance(e, dict) and isinstance(e.get("entity_id"), int) and _real(e.get("serial_num")):
                    out[e["entity_id"]] = str(e["serial_num"])
    ser = body.get("GPU Device Serials")
    if isinstance(ser, dict):
        out.update({int(k): str(v) for k, v in ser.items() if str(k).isdigit()})
    return out


_PASS = ("Pass", "PASS", "pass")


def _results(name: str, results: list[Any], status: dict[int, str],
             findings: list[tuple[int, str, str, str]], rep: ImportReport) -> None:
    """Fold one test's per-GPU results into ``status`` (worst wins) and ``findings``."""
    for res in results:
        ids = _gpu_ids(res) if isinstance(res, dict) else None
        if ids is None:
            rep.reject("result without a GPU id")
            continue
        raw = res.get("status", "")
        if raw in _PASS:  # nearly every result: nothing to record beyond "seen"
            for g in ids:
                status.setdefault(g, "pass")
            continue
        word = str(raw).strip().lower()
        st = _STATUS.get(word, "warn")
        if word not in _STATUS:
            rep.reasons[f"unknown status {word!r} graded warn"] += 1
        for g in ids:
            if _RANK[st] >= _RANK[status.get(g, "pass")]:
                status[g] = "pass" if st == "skip" else st
            if st in ("fail", "warn"):
                findings.append((g, name, st, _warnings(res)))


def parse(text: str, source: str) -> tuple[DcgmRun, ImportReport]:
    rep = ImportReport(source, "dcgm-diag")
    start = text.find("{")  # dcgmi may print a banner line before the document
    doc = load_json(text[start:] if start >= 0 else text, source, "--dcgm")
    if not isinstance(doc, dict):
        fail([Problem(source, "--dcgm", "expected a JSON object from dcgmi diag -j")])
    gen = "4.x" if "DCGM Diagnostic" in doc else "3.x" if "DCGM GPU Diagnostic" in doc else ""
    body = doc.get("DCGM Diagnostic") or doc.get("DCGM GPU Diagnostic")
    if not gen or not isinstance(body, dict) or not isinstance(body.get("test_categories"), list):
        fail([Problem(source, "DCGM Diagnostic", "expected 'DCGM Diagnostic' (4.x) or 'DCGM GPU "
                      "Diagnostic' (<=3.x) holding a 'test_categories' list")])
    status: dict[int, str] = {}
    findings: list[tuple[int, str, str, str]] = []
    tests = 0
    for cat in body["test_categories"]:
        for test in (cat.get("tests") or []) if isinstance(cat, dict) else []:
            if not isinstance(test, dict):
                continue
            tests += 1
            results = test.get("results") or []
            rep.rows_read += len(results)
            _results(str(test.get("name", "?")), results, status, findings, rep)
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    version = str(meta.get("version") or body.get("version") or doc.get("version") or "")
    run = DcgmRun(source, node_of(source), gen, version, status, tuple(findings), _serials(doc, body), tests)
    return run, rep


def load(path: str | Path) -> tuple[DcgmRun, ImportReport]:
    return parse(read_text(path, "--dcgm"), str(path))
