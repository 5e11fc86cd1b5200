"""Measured values within physics: what the importers read is bounded by the catalog and the
design before anything is graded (issue 19).

A row outside the bounds is not a slow or a fast GPU; it is a broken log or a hostile file,
and grading it would call a 1e308 TFLOP/s GPU healthy. Such rows are dropped, counted in
their file's import report (``rows_rejected``, ``reasons``) and named there
(``out_of_bounds``: up to :data:`MAX_NAMED` entries), so ``check.json`` shows them.

Bounds, each from the catalog entry or the design the scenario names:

* burn-in row: ``node`` one of the design's node names; ``gpu`` an index ``0 <= gpu <`` GPUs
  per node; ``0 <= tflops <=`` the GPU's dense tensor peak at the file's precision (x
  :data:`SLACK`); ``max_temp_c`` -40..150 C (the range GPU sensors report); ``errors`` >= 0;
  ``hours`` 0..10 years.
* DCGM run: its node one of the design's nodes; GPU indices below GPUs per node.
* nccl-tests run: every bus bandwidth 0 ..(a GPU's NVLink bandwidth, both directions, plus its
  share of the node's compute NIC line rate, both directions) x :data:`SLACK`. busbw counts the
  bytes one GPU moves per second (nccl-tests ``PERFORMANCE.md``), so no algorithm, NVLink
  SHARP included, can exceed what its links carry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

SLACK = 1.05        #: measured figures may round above a datasheet figure, not more
MAX_NAMED = 50      #: rejected rows named per file in check.json
TEMP_C = (-40.0, 150.0)
MAX_HOURS = 10 * 8760.0


@dataclasses.dataclass(frozen=True)
class Limits:
    """The physical bounds of one scenario's cluster."""

    nodes: frozenset[str]
    gpus_per_node: int
    peak_tflops: dict[str, float]     #: dense tensor peak per precision
    busbw_gbps: float                 #: ceiling of any nccl-tests bus bandwidth, GB/s


def limits_for(scenario: Any, catalog: Any, design: Any = None) -> Limits:
    """Bounds from the catalog GPU, node and fabric and the design's inventory."""
    from clustertwin.export.inventory import build_inventory

    if design is None:
        from clustertwin.export.stage import export_design

        design = export_design(scenario, catalog)
    inv = build_inventory(scenario, catalog, design)
    gpu = catalog.gpu(design.gpu_id)
    node = catalog.node(design.node_id)
    fabric = catalog.fabric(scenario.cluster.fabric.technology)
    nic_gbs = node.compute_nics * min(node.compute_nic_gbps, fabric.link_gbps) / 8.0
    per_gpu = float(gpu.nvlink_gb_per_s) + 2.0 * nic_gbs / max(1, node.gpus)
    return Limits(frozenset(n.name for n in inv.nodes), int(inv.gpus_per_node),
                  {k: float(v) for k, v in gpu.peak_tflops.items()}, per_gpu * SLACK)


def _note(reports: list[dict], source: str, kind: str, named: list[str],
          counts: dict[str, int]) -> None:
    """Count rejected rows of one file (``counts``: rule -> rows) under its import report and
    name the first of them."""
    rep = next((r for r in reports if r.get("source") == source), None)
    if rep is None:
        rep = {"source": source, "kind": kind, "rows_read": 0, "rows_rejected": 0, "reasons": {}}
        reports.append(rep)
    rep["rows_rejected"] = rep.get("rows_rejected", 0) + sum(counts.values())
    reasons = rep.setdefault("reasons", {})
    for rule, n in counts.items():
        key = f"outside physical bounds: {rule}"
        reasons[key] = reasons.get(key, 0) + n
    listed = rep.setdefault("out_of_bounds", [])
    listed.extend(named[: max(0, MAX_NAMED - len(listed))])


def _burnin_checks(b: Any, lim: Limits) -> list[tuple[str, np.ndarray, Callable[[int], str]]]:
    """(rule, bad-row mask, what row i shows) per rule."""
    peak = lim.peak_tflops.get(b.precision) or max(lim.peak_tflops.values(), default=0.0)
    gpu = np.asarray(b.gpu, dtype=np.float64)
    errors = np.asarray(b.errors, dtype=np.float64)
    checks = [
        ("node not in the design", ~np.isin(b.node.astype(str), list(lim.nodes)),
         lambda i: f"node {str(b.node[i])!r}"),
        (f"GPU index not 0..{lim.gpus_per_node - 1}",
         (gpu < 0) | (gpu >= lim.gpus_per_node) | (gpu != np.floor(gpu)),
         lambda i: f"GPU index {b.gpu[i]}"),
        (f"TFLOP/s not 0..{peak * SLACK:g} (dense {b.precision} peak {peak:g})",
         ~((b.tflops >= 0) & (b.tflops <= peak * SLACK)), lambda i: f"{b.tflops[i]:.4g} TFLOP/s"),
        (f"max_temp_c not {TEMP_C[0]:g}..{TEMP_C[1]:g}",
         ~((b.max_temp_c >= TEMP_C[0]) & (b.max_temp_c <= TEMP_C[1])),
         lambda i: f"{b.max_temp_c[i]:.4g} C"),
        ("negative error count", ~(errors >= 0), lambda i: f"{b.errors[i]} errors"),
    ]
    if b.hours is not None:
        h = np.asarray(b.hours, dtype=np.float64)
        checks.append((f"hours not 0..{MAX_HOURS:g}", (h < 0) | (h > MAX_HOURS),
                       lambda i: f"{h[i]:.4g} hours"))
    return checks


def bound_burnin(b: Any, lim: Limits, reports: list[dict]) -> Any:
    """The burn-in rows within bounds (a new BurnIn); the others noted in ``reports``."""
    bad = np.zeros(len(b), dtype=bool)
    named: list[str] = []
    counts: dict[str, int] = {}
    for rule, mask, shown in _burnin_checks(b, lim):
        rows = np.flatnonzero(mask & ~bad)
        if rows.size:
            counts[rule] = int(rows.size)
            named += [f"row {int(i) + 1} ({b.node[i]} GPU {b.gpu[i]}): {shown(int(i))}; {rule}"
                      for i in rows[: max(0, MAX_NAMED - len(named))]]
        bad |= mask
    if not bad.any():
        return b
    _note(reports, b.source, "burn-in", named, counts)
    keep = ~bad
    arrays = {f: getattr(b, f)[keep] for f in ("node", "gpu", "serial", "tflops", "max_temp_c", "errors")}
    hours = b.hours[keep] if b.hours is not None else None
    return dataclasses.replace(b, hours=hours, **arrays)


def bound_dcgm(run: Any, lim: Limits, reports: list[dict]) -> Any | None:
    """The DCGM run with GPU indices in range, or None when its node is not in the design."""
    if run.node not in lim.nodes:
        _note(reports, run.source, "dcgm-diag", [f"node {run.node!r}: not a node of the design"],
              {"node not in the design": max(1, len(run.gpu_status))})
        return None
    bad = [g for g in run.gpu_status if not 0 <= g < lim.gpus_per_node]
    if not bad:
        return run
    rule = f"GPU index not 0..{lim.gpus_per_node - 1}"
    _note(reports, run.source, "dcgm-diag", [f"GPU index {g}; {rule}" for g in bad],
          {rule: len(bad)})
    ok = lambda g: 0 <= g < lim.gpus_per_node  # noqa: E731
    return dataclasses.replace(run, gpu_status={g: s for g, s in run.gpu_status.items() if ok(g)},
                               findings=tuple(f for f in run.findings if ok(f[0])),
                               serials={g: s for g, s in run.serials.items() if ok(g)})


def bound_nccl(run: Any, lim: Limits, reports: list[dict]) -> Any | None:
    """The nccl-tests run, or None when a bus bandwidth in it is beyond what links carry."""
    bw = np.concatenate([run.busbw_oop, run.busbw_ip[np.isfinite(run.busbw_ip)]])
    rep = run.avg_busbw_reported
    vals = bw if rep is None else np.append(bw, rep)
    worst = vals[~((vals >= 0) & (vals <= lim.busbw_gbps))]
    if worst.size == 0:
        return run
    rule = f"bus bandwidth not 0..{lim.busbw_gbps:.0f} GB/s (NVLink + NIC share of one GPU)"
    _note(reports, run.source, "nccl-tests",
          [f"{run.op} on {', '.join(run.hosts) or '?'}: {float(worst[0]):.4g} GB/s; {rule}"],
          {rule: int(run.size.size) or 1})
    return None


def apply_bounds(got: dict[str, list[Any]], reports: list[dict], lim: Limits) -> dict[str, list[Any]]:
    """``got`` (importer output by kind) with every out-of-bounds row or run removed; the
    import ``reports`` (dicts, as check.json lists them) count and name what was removed."""
    out = dict(got)
    out["burnin"] = [bound_burnin(b, lim, reports) for b in got.get("burnin", [])]
    out["dcgm"] = [r for r in (bound_dcgm(x, lim, reports) for x in got.get("dcgm", [])) if r]
    out["nccl"] = [r for r in (bound_nccl(x, lim, reports) for x in got.get("nccl", [])) if r]
    return out
