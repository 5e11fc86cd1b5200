"""Shared helpers for trace loaders: CSV reading with column checks, strict mode, profiles."""

from __future__ import annotations

import csv
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from clustertwin.errors import Problem, ScenarioError, UsageError
from clustertwin.scheduling.jobs import Rejections, TraceReport, Workload

PROFILES_FILE = Path(__file__).with_name("profiles.yaml")


@lru_cache(maxsize=1)
def profiles() -> dict[str, dict[str, Any]]:
    with PROFILES_FILE.open(encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def profile(name: str) -> dict[str, Any]:
    p = profiles()
    if name not in p:
        raise UsageError([Problem("--trace", "profile", f"unknown trace profile {name!r}; "
                                  f"known: {', '.join(sorted(p))}")])
    return p[name]


#: Largest trace file read, bytes (the Alibaba openb lists are ~1 MB; a year of a busy Slurm
#: cluster's sacct export is ~100 MB).
MAX_TRACE_BYTES = 512 * 1024 * 1024


def read_trace_text(path: Path) -> str:
    """A trace file's text through the input layer: regular file, size cap, UTF-8, one line
    per problem. A ``.gz`` file (the packaged traces) is decompressed as a stream, the cap
    applying to the decompressed text."""
    from clustertwin.io import read_text

    if not Path(path).name.endswith(".gz"):
        return read_text(path, MAX_TRACE_BYTES, "trace")
    return _read_gzip_text(Path(path))


def _read_gzip_text(p: Path) -> str:
    import gzip
    import zlib

    from clustertwin.io import read_text

    if not p.is_file():  # missing, a folder, a device: the input layer's one-line refusal
        read_text(p, MAX_TRACE_BYTES, "trace")
    try:
        with gzip.open(p, "rb") as fh:
            raw = fh.read(MAX_TRACE_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise ScenarioError([Problem(str(p), "", f"not a readable gzip file: {exc}")]) from None
    if len(raw) > MAX_TRACE_BYTES:
        raise ScenarioError([Problem(str(p), "", "a trace may be at most "
                                     f"{MAX_TRACE_BYTES:,} bytes decompressed")])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError([Problem(str(p), "", f"not UTF-8 text (byte {exc.start}); save it "
                                     "as UTF-8")]) from None


def read_csv(path: Path, required: list[str],
             text: str | None = None) -> tuple[list[dict[str, str]], list[str]]:
    """Rows as dicts; a missing required column is an error (nothing can be replayed).
    ``text``: the file's text when the caller has read it already."""
    import io

    if text is None:
        text = read_trace_text(path)
    try:
        reader = csv.DictReader(io.StringIO(text))
        rows = list(reader)
        cols = list(reader.fieldnames or [])
    except csv.Error as exc:
        raise ScenarioError([Problem(str(path), "", f"cannot read trace: {exc}")]) from None
    missing = [c for c in required if c not in cols]
    if missing:
        raise ScenarioError([Problem(str(path), "columns",
                                     f"missing column(s) {', '.join(missing)}; found "
                                     f"{', '.join(cols) or 'none'}")])
    return rows, cols


def finish_report(source: str, rows_read: int, jobs: int, rej: Rejections,
                  notes: list[str], strict: bool, skipped: dict[str, int] | None = None) -> TraceReport:
    """Build the report; in strict mode any rejected row is an error."""
    rep = TraceReport(source, rows_read, jobs, dict(rej.counts),
                      {k: list(v) for k, v in rej.examples.items()}, tuple(notes), dict(skipped or {}))
    if strict and rep.rows_rejected:
        raise ScenarioError(strict_problems(rep))
    return rep


def strict_problems(rep: TraceReport) -> list[Problem]:
    out = []
    for reason, n in sorted(rep.rejected.items()):
        ex = "; ".join(rep.examples.get(reason, []))
        out.append(Problem(rep.source, ex.split(":")[0] if ex else "",
                           f"{n} row(s) rejected: {reason} (e.g. {ex})"))
    return out


def lognormal_quantiles(q: np.ndarray, median: float, mean: float, cap: float) -> np.ndarray:
    """Lognormal with this median and mean (sigma^2 = 2 ln(mean/median)), at quantiles q,
    capped at ``cap``."""
    from statistics import NormalDist

    sigma = math.sqrt(2.0 * math.log(max(mean / median, 1.0 + 1e-9)))
    nd = NormalDist()
    z = np.array([nd.inv_cdf(float(x)) for x in np.clip(q, 1e-9, 1 - 1e-9)])
    return np.minimum(median * np.exp(sigma * z), cap)


def lognormal_sample(rng: np.random.Generator, n: int, median: float, mean: float,
                     cap: float) -> np.ndarray:
    sigma = math.sqrt(2.0 * math.log(max(mean / median, 1.0 + 1e-9)))
    return np.minimum(rng.lognormal(math.log(median), sigma, size=n), cap)


def drop_too_large(w: Workload, cluster_gpus: int, max_node_gpus: int, strict: bool,
                   source: str, pooled: bool = False) -> Workload:
    """Remove jobs that can never run on this cluster, reporting them (errors when strict)."""
    milli = w.gpus_milli
    bad = milli > cluster_gpus * 1000
    if not pooled:
        bad |= (milli > 1000) & (milli % 1000 != 0)
    if not bad.any():
        return w
    rej = Rejections()
    for i in np.flatnonzero(bad)[:1000]:
        rej.add(f"larger than the cluster ({cluster_gpus} GPUs) or not whole GPUs",
                f"{w.names[i]}: {milli[i] / 1000:g} GPUs")
    reason = next(iter(rej.counts))
    rej.counts[reason] = int(bad.sum())
    rep = TraceReport(source, 0, -int(bad.sum()), dict(rej.counts), rej.examples)
    if strict:
        raise ScenarioError(strict_problems(rep))
    kept = w.subset(np.flatnonzero(~bad))
    base = w.report or TraceReport(source, len(w), len(w))
    from dataclasses import replace

    return replace(kept, report=base.merged(rep))
