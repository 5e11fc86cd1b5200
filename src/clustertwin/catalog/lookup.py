"""Catalog ids the scenario resolves and the later stages read: software stacks (by id or
alias) and the failure profile ``auto`` stands for. They live here, in the catalog layer, so
that resolving a scenario needs nothing from the training or reliability stages."""

from __future__ import annotations

import difflib
from typing import Any

from clustertwin.errors import Problem

#: the software stack of ``training.stack: auto`` and of a scenario that names none
DEFAULT_STACK = "megatron"
#: the failure profile of last resort when no catalog profile names the GPU's generation
FALLBACK_PROFILE = "llama3-h100"


def _find(catalog: Any, kind: str, name: str) -> Any | None:
    if kind not in catalog.kinds():
        return None
    want = name.strip().lower()
    for e in catalog.all(kind):
        if e.id == want or want in (a.lower() for a in e.aliases):
            return e
    return None


def find_kernels(catalog: Any, name: str) -> Any | None:
    """The kernel-generation entry (catalog kind ``kernels``) named ``name``, else None."""
    return _find(catalog, "kernels", name)


def find_stack(catalog: Any, stack_id: str) -> Any | None:
    """The catalog entry whose id or alias is ``stack_id`` (case-insensitive), else None; for
    ``FRAMEWORK+KERNELS`` the framework's entry when both parts are known."""
    head, plus, tail = stack_id.partition("+")
    if plus and find_kernels(catalog, tail) is None:
        return None
    return _find(catalog, "stack", head)


def stack_ids(catalog: Any) -> list[str]:
    """Every id and alias a scenario may name."""
    if "stack" not in catalog.kinds():
        return []
    out: list[str] = []
    for e in catalog.all("stack"):
        out += [e.id, *e.aliases]
    for k in catalog.all("kernels") if "kernels" in catalog.kinds() else []:
        out.append(f"megatron+{k.id}")
    return out


def unknown_stack(catalog: Any, stack_id: str, source: str, key: str) -> Problem:
    """The one-line problem for a stack id the catalog does not know, with close matches."""
    close = difflib.get_close_matches(str(stack_id).lower(), stack_ids(catalog), n=3, cutoff=0.4)
    ids = [e.id for e in catalog.all("stack")] if "stack" in catalog.kinds() else []
    hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(ids)}"
    return Problem(source, key, f"unknown software stack {stack_id!r}; {hint}")


def default_profile_id(catalog: Any, gpu_id: str) -> str:
    """Failure profile for ``failure_profile: auto``: the catalog profile whose ``default_for``
    names the GPU's generation (lowest id first), else :data:`FALLBACK_PROFILE`."""
    generation = catalog.gpu(gpu_id).generation
    for p in sorted(catalog.all("failure_profile"), key=lambda p: p.id):
        if generation in p.default_for:
            return p.id
    return FALLBACK_PROFILE


#: a generation without its own route figure takes hopper's (the generation most figures cover)
FALLBACK_GENERATION = "hopper"


def gpu_lead_days(catalog: Any, generation: str) -> tuple[float, float, bool]:
    """(P50, P90) days from a GPU server order to its delivery, for ``generation`` (catalog
    ``route hardware``: ``lead_days_p50_<generation>``), and whether hopper's was used instead.
    The one GPU lead time the build-out's first step and every decision route read."""
    hw = catalog.get("route", "hardware", path="route hardware")
    own = f"lead_days_p50_{generation}" in hw.items
    gen = generation if own else FALLBACK_GENERATION
    p50 = hw.value(f"lead_days_p50_{gen}")
    return p50, max(p50, hw.value(f"lead_days_p90_{gen}")), not own


def cloud_usd_per_gpu_hour(catalog: Any, generation: str) -> float | None:
    """The catalog's on-demand price per GPU-hour for ``generation`` (``route cloud``; hopper's
    when it has none), None without route figures. What ``economics.cloud_usd_per_gpu_hour``
    is when a scenario leaves it unset: the one price economics, reliability and the decision read."""
    if not hasattr(catalog, "kinds") or "route" not in catalog.kinds() or not catalog.has("route", "cloud"):
        return None
    cl = catalog.get("route", "cloud", path="route cloud")
    own = f"usd_per_gpu_hour_{generation}"
    return float(cl.value(own if own in cl.items else f"usd_per_gpu_hour_{FALLBACK_GENERATION}"))


def era_profile_id(catalog: Any, gpu_id: str, year: int | None) -> str:
    """Failure profile of a run on ``gpu_id`` in ``year``: the profile whose ``era_for`` names
    the GPU's generation and whose ``era_years`` hold the year (lowest id first), else the
    generation's :func:`default_profile_id`."""
    generation = catalog.gpu(gpu_id).generation
    if year is not None:
        for p in sorted(catalog.all("failure_profile"), key=lambda p: p.id):
            span = p.era_years
            if generation in p.era_for and span and span[0] <= year <= span[-1]:
                return p.id
    return default_profile_id(catalog, gpu_id)
