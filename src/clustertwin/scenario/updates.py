"""Copies of a scenario with some fields replaced, re-validated and re-resolved."""

from __future__ import annotations

from typing import Any

from clustertwin.scenario.document import Scenario
from clustertwin.scenario.load import scenario_from_dict


def with_updates(s: Scenario, **section_updates: dict[str, Any]) -> Scenario:
    """A copy of ``s`` with some section fields replaced and re-validated (used by sweeps,
    what-ifs and the deadline solver). ``with_updates(s, cluster={"gpus": 8192})``."""
    data = s.model_dump(mode="python")
    if data["model"] is not None:
        data["model"] = {k: v for k, v in data["model"].items() if k != "name"}
        data["model"]["preset"] = None
    for section, upd in section_updates.items():
        data[section] = {**(data[section] or {}), **upd}
    if "cluster" in section_updates and section_updates["cluster"].get("gpus") is not None:
        data["cluster"]["deadline_days"] = None
    t = data["training"]
    if t is not None and t["global_batch_tokens"] is not None and t["global_batch_seqs"] is not None:
        data["training"]["global_batch_tokens"] = None
    out = scenario_from_dict(data, s.source)
    return out.model_copy(update={"model": s.model})
