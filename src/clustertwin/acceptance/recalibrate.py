"""Re-predict the training run from what acceptance measured (``plan --measured check.json``).

The catalog plan uses the perf stage's calibration constants. Recalibration scales them by the
measured / expected ratios of the health report (:mod:`clustertwin.acceptance.measured`):

* GEMM ratio -> ``gemm_efficiency``, ``fp8_gemm_efficiency`` and ``attention_efficiency`` of the
  GPU generation (the same tensor cores run all three);
* NVLink ratio -> ``nvlink_efficiency``;
* fabric ratio -> the fabric technology's ``bus_efficiency`` and ``alltoall_efficiency``;

and removes drained nodes: hot spares take their place first; past the spares the installed
GPU count (and ``training.gpus`` when pinned above it) shrinks by whole nodes. Everything else
is the ordinary pipeline, so the step time changes by exactly what the model implies.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clustertwin.errors import Problem, UsageError

GEN_KEYS = ("gemm_efficiency", "fp8_gemm_efficiency", "attention_efficiency")


@dataclass(frozen=True)
class Recalibration:
    base: Any        #: Plan from the catalog
    measured: Any    #: Plan from the measured figures
    figures: dict[str, Any]

    def rows(self) -> list[tuple[str, str, str]]:
        """(quantity, catalog plan, measured plan) for the terminal and HTML."""
        def get(plan: Any, block: str, key: str) -> Any:
            res = dict(plan.blocks()).get(block)
            return None if res is None else res.to_contract().get(key)

        out = [("GPUs in the run", get(self.base, "training", "gpus"), get(self.measured, "training", "gpus"))]
        for label, block, key, fmt in (("step time (s)", "training", "step_time_s", "{:.3f}"),
                                       ("MFU", "training", "mfu", "{:.1%}"),
                                       ("days to train (no failures)", "training", "days", "{:.2f}"),
                                       ("wall-clock days", "reliability", "effective_days", "{:.2f}")):
            a, b = get(self.base, block, key), get(self.measured, block, key)
            out.append((label, "-" if a is None else fmt.format(a), "-" if b is None else fmt.format(b)))
        return [(q, str(a), str(b)) for q, a, b in out]

    def to_dict(self) -> dict[str, Any]:
        def tr(plan: Any) -> dict[str, Any]:
            t = plan.training.to_contract() if plan.training is not None else {}
            rel = plan.reliability.to_contract() if plan.reliability is not None else {}
            return {k: t.get(k) for k in ("gpus", "step_time_s", "mfu", "days")} | {
                "effective_days": rel.get("effective_days")}

        base, new = tr(self.base), tr(self.measured)
        change = None
        if base.get("step_time_s") and new.get("step_time_s"):
            change = new["step_time_s"] / base["step_time_s"] - 1.0
        return {"measured": self.figures, "catalog_plan": base, "measured_plan": new,
                "step_time_change": change}


def read_measured(path: str | Path) -> dict[str, Any]:
    """The ``measured`` block of a check.json (UsageError naming what is wrong)."""
    from clustertwin.acceptance.importers.common import load_json, read_text

    doc = load_json(read_text(path, "--measured"), str(path), "--measured")
    m = doc.get("measured") if isinstance(doc, dict) else None
    if not isinstance(m, dict):
        raise UsageError([Problem(str(path), "measured", "expected a check.json written by 'clustertwin check'")])
    problems = []
    for key in ("gemm_ratio", "nvlink_ratio", "fabric_ratio"):
        v = m.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or not 0.05 <= v <= 5.0):
            problems.append(Problem(str(path), f"measured.{key}", f"a ratio between 0.05 and 5 or null, got {v!r}"))
    drained = m.get("drained_nodes", [])
    if not isinstance(drained, list) or not all(isinstance(n, str) for n in drained) \
            or len(set(drained)) != len(drained):
        problems.append(Problem(str(path), "measured.drained_nodes", "a list of distinct node names"))
    if problems:
        raise UsageError(problems)
    return m


def scaled_catalog(catalog: Any, generation: str, technology: str, figures: dict[str, Any]) -> Any:
    """A copy of ``catalog`` whose perf calibration for this generation and fabric is scaled."""
    from clustertwin.catalog.loader import Catalog
    from clustertwin.perf.system import calibration_constants

    g, nv, f = (figures.get(k) for k in ("gemm_ratio", "nvlink_ratio", "fabric_ratio"))
    entries = {k: {e.id: e for e in catalog.all(k)} for k in catalog.kinds()}
    cal = entries.get("perf_calibration", {})
    for scope, key, scale in (("gpu-generation", generation, {k: g for k in GEN_KEYS} | {"nvlink_efficiency": nv}),
                              ("fabric", technology, {"bus_efficiency": f, "alltoall_efficiency": f})):
        scale = {k: v for k, v in scale.items() if v is not None}
        if not scale:
            continue
        merged, _ = calibration_constants(catalog, scope, key)
        new = {k: (v * scale[k] if k in scale else v) for k, v in merged.items()}
        own = [e for e in cal.values() if e.scope == scope and e.applies_to == key]
        if own:
            for e in own:
                cal[e.id] = e.model_copy(update={"constants": new})
        else:
            base = next(e for e in cal.values() if e.scope == scope and e.applies_to == "default")
            cal[f"measured-{key}"] = base.model_copy(update={"id": f"measured-{key}", "applies_to": key, "constants": new})
    entries["perf_calibration"] = cal
    return Catalog(entries, dict(catalog.origins), list(catalog.overridden))


def _without_drained(scenario: Any, base: Any, drained: int, gpn: int) -> tuple[Any, str]:
    cl = scenario.cluster
    if drained == 0 or cl.gpus is None:
        return scenario, ""
    spares = cl.spare_nodes if isinstance(cl.spare_nodes, int) else (
        base.design.spare_nodes if base.design is not None else 0)
    short = max(0, drained - int(spares))
    if short == 0:
        return scenario, f"{drained} drained node(s) replaced by hot spares"
    gpus = cl.gpus - short * gpn
    if gpus <= 0:
        raise UsageError([Problem("--measured", "measured.drained_nodes",
                                  f"{drained} drained nodes leave no GPUs of the {cl.gpus} installed")])
    update: dict[str, Any] = {"cluster": cl.model_copy(update={"gpus": gpus})}
    t = scenario.training
    if t is not None and isinstance(t.gpus, int) and t.gpus > gpus:
        update["training"] = t.model_copy(update={"gpus": gpus})
    return scenario.model_copy(update=update), f"{short} drained node(s) beyond the spares: {gpus} GPUs installed"


def recalibrate(scenario: Any, catalog: Any, figures: dict[str, Any], base: Any = None) -> Recalibration:
    """(catalog plan, measured plan) of ``scenario`` given the health report's ``figures``."""
    from clustertwin.plan import make_plan

    base = base if base is not None else make_plan(scenario, catalog)
    gpu = catalog.gpu(scenario.cluster.gpu)
    tech = catalog.fabric(scenario.cluster.fabric.technology).technology
    cat2 = scaled_catalog(catalog, gpu.generation, tech, figures)
    gpn = catalog.node(scenario.cluster.node).gpus
    scen2, note = _without_drained(scenario, base, len(figures.get("drained_nodes") or []), gpn)
    new = make_plan(scen2, cat2)
    fig = dict(figures)
    notes = [note] if note else []
    if figures.get("scenario") not in (None, scenario.name):
        notes.append(f"measured on scenario {figures['scenario']!r}, applied to {scenario.name!r}")
    if notes:
        fig["note"] = "; ".join(notes)
    return Recalibration(base, new, fig)
