"""Resolution of a validated document against the catalog: the model preset merged with
explicit fields and every catalog id checked; problems collected and raised together."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from clustertwin.catalog import Catalog
from clustertwin.catalog.lookup import (
    cloud_usd_per_gpu_hour,
    default_profile_id,
    find_stack,
    unknown_stack,
)
from clustertwin.errors import Problem, ScenarioError
from clustertwin.io import pydantic_problems
from clustertwin.scenario.checks import (
    check_budget,
    check_dates,
    check_model,
    check_sizes,
    check_spares,
    job_unit_gpus,
)
from clustertwin.scenario.document import Scenario, ScenarioFile
from clustertwin.scenario.model import ResolvedModel

MODEL_FIELDS = ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "mlp", "moe", "tied_embeddings")


def resolve_model(doc: ScenarioFile, catalog: Catalog, source: str, problems: list[Problem]) -> ResolvedModel | None:
    """The preset merged with explicit fields; problems appended (None when there are any)."""
    assert doc.model is not None
    merged: dict[str, Any] = {}
    name = doc.model.preset or "custom"
    if doc.model.preset is not None:
        if catalog.has("model", doc.model.preset):
            preset = catalog.get("model", doc.model.preset)
            merged = {k: getattr(preset, k) for k in MODEL_FIELDS}
        else:
            problems.append(Problem(source, "model.preset", catalog.unknown_message("model", doc.model.preset)))
    for k in MODEL_FIELDS:
        v = getattr(doc.model, k)
        if v is not None:
            merged[k] = v
    if doc.model.kv_heads is None and "kv_heads" not in merged and doc.model.heads is not None:
        merged["kv_heads"] = doc.model.heads
    model: ResolvedModel | None = None
    if not problems:
        missing = [k for k in MODEL_FIELDS if k not in merged and k not in ("moe", "tied_embeddings")]
        for k in missing:
            problems.append(Problem(source, f"model.{k}", "required (no preset gives it)"))
        if not missing:
            try:  # a preset from a user catalog is bounded like explicit fields
                model = ResolvedModel(name=name, **merged)
            except ValidationError as exc:
                problems.extend(pydantic_problems(exc, source, "model"))
                return None
            problems.extend(check_model(model, source))
    return model


def resolve_scenario(doc: ScenarioFile, catalog: Catalog, source: str) -> Scenario:
    problems: list[Problem] = []
    model = resolve_model(doc, catalog, source, problems) if doc.model is not None else None
    cl = doc.cluster
    gpu_ok = catalog.has("gpu", cl.gpu)
    if not gpu_ok:
        problems.append(Problem(source, "cluster.gpu", catalog.unknown_message("gpu", cl.gpu)))
    if not catalog.has("node", cl.node):
        problems.append(Problem(source, "cluster.node", catalog.unknown_message("node", cl.node)))
    else:
        node = catalog.get("node", cl.node)
        if gpu_ok and node.gpu != cl.gpu:
            fits = [n.id for n in catalog.all("node") if n.gpu == cl.gpu]
            hint = (f"nodes built on it: {', '.join(fits)}" if fits else
                    f"the catalog has no node built on {cl.gpu!r}; add one with --catalog DIR")
            problems.append(Problem(source, "cluster.node",
                                    f"node {cl.node!r} holds {node.gpu!r}, not {cl.gpu!r}; {hint}"))
        unit = job_unit_gpus(node)  # whole nodes; a rack-scale system's last rack may be partly filled
        if cl.gpus is not None and cl.gpus % unit and cl.gpus > unit:  # fewer: one node, part full
            lo = cl.gpus // unit * unit
            hint = f"{lo} or {lo + unit}" if lo else f"{unit}"
            what = f"GPUs per {cl.node}" if unit == node.gpus else f"GPUs per compute tray of {cl.node}"
            problems.append(Problem(source, "cluster.gpus",
                                    f"{cl.gpus} is not a multiple of the {unit} {what}; try {hint}"))
        problems.extend(check_sizes(doc, node, source))
        problems.extend(check_spares(doc, node, source))
    problems.extend(check_budget(doc, source))
    problems.extend(check_dates(doc, source))
    if gpu_ok and doc.training is not None:
        gpu = catalog.get("gpu", cl.gpu)
        if doc.training.precision not in gpu.peak_tflops:
            have = ", ".join(p for p in ("fp8", "bf16", "fp16") if p in gpu.peak_tflops)
            problems.append(Problem(source, "training.precision",
                                    f"{cl.gpu} has no {doc.training.precision} tensor-core peak; it supports {have}"))
    for key, sw in (("leaf_switch", cl.fabric.leaf_switch), ("spine_switch", cl.fabric.spine_switch)):
        if sw is not None and not catalog.has("switch", sw):
            problems.append(Problem(source, f"cluster.fabric.{key}", catalog.unknown_message("switch", sw)))
    if doc.training is not None:
        if doc.training.stack.strip().lower() != "auto" and find_stack(catalog, doc.training.stack) is None:
            problems.append(unknown_stack(catalog, doc.training.stack, source, "training.stack"))
    if not catalog.has("fabric", cl.fabric.technology):
        problems.append(Problem(source, "cluster.fabric.technology", catalog.unknown_message("fabric", cl.fabric.technology)))
    reliability = doc.reliability
    if reliability.failure_profile == "auto" and catalog.has("gpu", cl.gpu):
        reliability = reliability.model_copy(
            update={"failure_profile": default_profile_id(catalog, cl.gpu)})
    if not catalog.has("failure_profile", reliability.failure_profile):
        problems.append(Problem(source, "reliability.failure_profile",
                                catalog.unknown_message("failure_profile", reliability.failure_profile)))
    if not catalog.has("costs", doc.economics.costs):
        problems.append(Problem(source, "economics.costs", catalog.unknown_message("costs", doc.economics.costs)))
    if doc.decision is not None and not catalog.has("region", doc.decision.region):
        problems.append(Problem(source, "decision.region", catalog.unknown_message("region", doc.decision.region)))
    if problems:
        raise ScenarioError(problems)
    economics = doc.economics
    if "cloud_usd_per_gpu_hour" not in economics.model_fields_set and gpu_ok:
        price = cloud_usd_per_gpu_hour(catalog, catalog.get("gpu", cl.gpu).generation)
        if price is not None:  # unset: the catalog's on-demand price for the generation (issue 38)
            economics = economics.model_copy(update={"cloud_usd_per_gpu_hour": price})
    return Scenario(name=doc.name, model=model, training=doc.training, cluster=doc.cluster,
                    reliability=reliability, economics=economics, buildout=doc.buildout, decision=doc.decision,
                    source=source)
