"""nccl-tests results: the text table (its variants) and the ``-J`` JSON document.

Text variants handled: ``[1,0]<stdout>:`` prefixes from mpirun, ``N/A`` in ``#wrong``,
``OK``/``FAILED`` after "Avg bus bandwidth" (``NCCL_TESTS_MIN_BW``), older tables without the
``root`` column and with ``error`` instead of ``#wrong``, extra per-iteration columns (``-I 1``),
NCCL INFO lines interleaved. Columns are located by the header line, so layouts differ freely.

The average nccl-tests prints is the mean of every bus bandwidth in the table, out-of-place and
in-place; :attr:`NcclRun.avg_busbw` recomputes it from the rows read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clustertwin.acceptance.importers.common import ImportReport, fail, load_json, number, read_text
from clustertwin.errors import Problem

_PREFIX = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:\s?")
# older releases print no "Group N" in the rank lines
_RANK = re.compile(r"#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)")
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?")
_OP = re.compile(r"\b(all_reduce|all_gather|alltoall|reduce_scatter|broadcast|reduce|sendrecv|scatter|gather|hypercube)_perf\b")
_OP_NAME = re.compile(r"(all_reduce|all_gather|alltoall|reduce_scatter|broadcast|sendrecv|hypercube)")
_ALGO = re.compile(r"NCCL_ALGO=([A-Za-z,]+)")
_DEFAULT_COLS = "size count type redop root time algbw busbw #wrong time algbw busbw #wrong".split()


@dataclass(frozen=True)
class NcclRun:
    """One nccl-tests run: its table (arrays, GB/s and bytes) and the figures it printed."""

    source: str
    op: str
    hosts: tuple[str, ...]
    nranks: int
    size: np.ndarray
    busbw_oop: np.ndarray
    busbw_ip: np.ndarray
    algbw_oop: np.ndarray
    wrong: int                      #: wrong results counted over the table (N/A = 0)
    avg_busbw_reported: float | None
    avg_ok: bool | None             #: the OK/FAILED nccl-tests printed against its own minimum
    version: str = ""
    algo: str = ""                  #: NCCL_ALGO named in the log's header (command echo), if any

    @property
    def avg_busbw(self) -> float:
        vals = np.concatenate([self.busbw_oop, self.busbw_ip[np.isfinite(self.busbw_ip)]])
        return float(vals.mean()) if vals.size else 0.0

    def peak(self) -> tuple[int, float]:
        """(size, busbw) of the largest message: the bandwidth figure acceptance grades."""
        if self.size.size == 0:
            return 0, 0.0
        i = int(self.size.argmax())
        ip = float(self.busbw_ip[i])
        best = max(float(self.busbw_oop[i]), ip if ip == ip else 0.0)  # ip is NaN without in-place
        return int(self.size[i]), best

    def to_dict(self) -> dict:
        size, bw = self.peak()
        return {"source": self.source, "op": self.op, "hosts": list(self.hosts), "nranks": self.nranks,
                "rows": int(self.size.size), "avg_busbw_gbps": round(self.avg_busbw, 4),
                "avg_busbw_reported_gbps": self.avg_busbw_reported, "avg_ok": self.avg_ok,
                "largest_size_bytes": size, "busbw_at_largest_gbps": bw, "wrong": self.wrong,
                "nccl_version": self.version, "nccl_algo": self.algo}


def _op_from(text_head: str, source: str) -> str:
    m = _OP.search(text_head) or _OP_NAME.search(os.path.basename(source))
    return m.group(1) if m else "unknown"


def infer_op(cols: dict[str, list[int]], first: list[str], busbw: np.ndarray,
             algbw: np.ndarray, nranks: int) -> tuple[str, int]:
    """(op, ranks) from the table itself when neither the log nor the file name names the
    test: nccl-tests reports busbw = algbw x 2(n-1)/n for all_reduce and x (n-1)/n for
    reduce_scatter (doc/PERFORMANCE.md), and only reductions fill the ``redop`` column; a
    rooted op (``root`` >= 0) or a table without ``redop`` stays unknown (all_gather and
    alltoall share their factor). ``ranks`` is solved from the factor when no rank lines
    were printed."""
    def cell(name: str) -> str:
        i = cols.get(name, [None])[0]
        return first[i] if i is not None and i < len(first) else ""

    ok = np.isfinite(algbw) & (algbw > 0)
    if not ok.any() or cell("redop") in ("", "none", "-") or cell("root") not in ("", "-1", "-"):
        return "unknown", nranks
    r = float(np.median(busbw[ok] / algbw[ok]))
    if r >= 1.0 - 1e-3:        # 2(n-1)/n >= 1 for n >= 2
        n = nranks or (round(2 / (2 - r)) if r < 1.99 else 0)
        return "all_reduce", n
    return "reduce_scatter", nranks or (round(1 / (1 - r)) if r > 0 else 0)


def _columns(header: list[str]) -> dict[str, list[int]]:
    cols: dict[str, list[int]] = {}
    for i, name in enumerate(header):
        key = "wrong" if name in ("#wrong", "wrong") else name  # old tables' "error" is a max deviation, not a count
        cols.setdefault(key, []).append(i)
    return cols


def _row(tokens: list[str], cols: dict[str, list[int]], rep: ImportReport):
    need = max(i for v in cols.values() for i in v) + 1
    if len(tokens) < need:
        rep.reject(f"row has {len(tokens)} columns, the header {need}")
        return None
    size = number(tokens[cols["size"][0]])
    bws = [number(tokens[i]) for i in cols["busbw"]]
    algs = [number(tokens[i]) for i in cols.get("algbw", [])]
    if size is None or size <= 0 or not bws or bws[0] is None:
        rep.reject("size or busbw not a finite number")
        return None
    if any(v is not None and v < 0 for v in bws + algs):
        rep.reject("negative bandwidth")
        return None
    wrong = 0
    for i in cols.get("wrong", []):
        w = number(tokens[i])
        wrong += int(w) if w is not None and w > 0 and tokens[i] != "N/A" else 0
    ip = bws[1] if len(bws) > 1 and bws[1] is not None else float("nan")
    return size, bws[0], ip, (algs[0] if algs and algs[0] is not None else float("nan")), wrong


def parse_text(text: str, source: str) -> tuple[NcclRun, ImportReport]:
    rep = ImportReport(source, "nccl-tests")
    cols: dict[str, list[int]] | None = None
    hosts: dict[int, str] = {}
    rows, avg, avg_ok, version, head, first = [], None, None, "", [], []
    for raw in text.splitlines():
        line = _PREFIX.sub("", raw).strip()
        if not line:
            continue
        if line.startswith("#"):
            if "busbw" in line and "size" in line:
                cols = _columns(line.lstrip("#").split())
            elif (m := _RANK.search(line)):
                hosts[int(m.group(1))] = m.group(2)
            elif (m := _AVG.search(line)):
                avg = number(m.group(1))
                avg_ok = None if m.group(2) is None else m.group(2) == "OK"
            if not rows:
                head.append(line)
            continue
        if line.startswith("NCCL version"):
            version = line.split()[2] if len(line.split()) > 2 else ""
            continue
        tokens = line.split()
        if not tokens[0].isdigit():
            if not rows:
                head.append(line)
            continue  # NCCL INFO lines, command echoes, banners
        rep.rows_read += 1
        r = _row(tokens, cols or _columns(_DEFAULT_COLS), rep)
        if r is not None:
            rows.append(r)
            first = first or tokens
    if not rows:
        fail([Problem(source, "--nccl", "no nccl-tests result rows found (expected the table "
                      "'size count type redop root time algbw busbw #wrong ...' or a -J JSON file)")])
    arr = np.array([r[:4] for r in rows], dtype=np.float64)
    head_text = "\n".join(head)
    algo = m.group(1).lower() if (m := _ALGO.search(head_text)) else ""
    op, nranks = _op_from(head_text, source), len(hosts)
    if op == "unknown" or not nranks:   # the table says what the log did not
        seen, n = infer_op(cols or _columns(_DEFAULT_COLS), first, arr[:, 1], arr[:, 3], nranks)
        if seen != "unknown" and op in ("unknown", seen):
            op, nranks = seen, n
            rep.note = f"recognised from the table: {op} on {nranks} ranks"
    run = NcclRun(source, op, tuple(dict.fromkeys(hosts.values())), nranks, arr[:, 0],
                  arr[:, 1], arr[:, 2], arr[:, 3], sum(r[4] for r in rows), avg, avg_ok,
                  version, algo)
    return run, rep


def _json_place(d: object) -> tuple[float | None, float | None]:
    if not isinstance(d, dict):
        return None, None
    return number(d.get("bus_bw")), number(d.get("alg_bw"))


def parse_json(text: str, source: str) -> tuple[NcclRun, ImportReport]:
    """The ``-J`` document: ``results[{size, out_of_place{alg_bw, bus_bw, nwrong}, in_place}]``,
    ``average_bus_bandwidth{bandwidth, okay}``, ``devices[{hostname}]``."""
    rep = ImportReport(source, "nccl-tests-json")
    doc = load_json(text, source, "--nccl")
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        fail([Problem(source, "results", "expected a nccl-tests -J document with a 'results' list")])
    rows, wrong = [], 0
    for item in doc["results"]:
        rep.rows_read += 1
        size = number(item.get("size")) if isinstance(item, dict) else None
        oop, alg = _json_place(item.get("out_of_place")) if isinstance(item, dict) else (None, None)
        ip, _ = _json_place(item.get("in_place")) if isinstance(item, dict) else (None, None)
        if size is None or size <= 0 or oop is None:
            rep.reject("size or out_of_place.bus_bw missing or not a finite number")
            continue
        if oop < 0 or (ip is not None and ip < 0):
            rep.reject("negative bandwidth")
            continue
        for place in ("out_of_place", "in_place"):
            n = item.get(place, {}).get("nwrong") if isinstance(item.get(place), dict) else None
            wrong += int(n) if isinstance(n, int | float) and n > 0 else 0
        rows.append((size, oop, ip if ip is not None else float("nan"), alg if alg is not None else float("nan")))
    if not rows:
        fail([Problem(source, "results", "no result row with size and out_of_place.bus_bw")])
    avg_doc = doc.get("average_bus_bandwidth")
    avg = number(avg_doc.get("bandwidth")) if isinstance(avg_doc, dict) else number(avg_doc)
    okay = avg_doc.get("okay") if isinstance(avg_doc, dict) else None
    devices = doc.get("devices") if isinstance(doc.get("devices"), list) else []
    hosts = tuple(dict.fromkeys(str(d.get("hostname")) for d in devices if isinstance(d, dict) and d.get("hostname")))
    cfg = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    head = " ".join(str(doc.get(k, "")) for k in ("program", "name", "collective")) + " " + str(cfg.get("collective", ""))
    arr = np.array(rows, dtype=np.float64)
    run = NcclRun(source, _op_from(head, source), hosts, len(devices), arr[:, 0], arr[:, 1], arr[:, 2],
                  arr[:, 3], wrong, avg, okay if isinstance(okay, bool) else None, str(doc.get("nccl_version", "")))
    return run, rep


def load(path: str | Path) -> tuple[NcclRun, ImportReport]:
    text = read_text(path, "--nccl")
    if text.lstrip().startswith("{"):
        return parse_json(text, str(path))
    return parse_text(text, str(path))
