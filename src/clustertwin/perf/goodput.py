"""Whole-run goodput besides failures: evaluation, data-loader stalls and batch ramp-up.

The perf stage's throughput is steady state. A real run also stops for evaluation, waits on its
data loader and starts with a smaller batch; the reliability stage's ETTR charges failures,
restarts, lost work and checkpoint stalls (:mod:`clustertwin.reliability.goodput` multiplies it
in). Each part here is a factor in (0, 1]: steady-state time over wall-clock time with only that
part charged. Their product is the goodput before failures.

* **Evaluation**: every ``eval_interval_steps`` optimizer steps, ``eval_steps`` forward-only
  batches. A forward pass costs 2 of the 6 model FLOPs per parameter and token of a training
  step (and none of the recompute), so one evaluation batch takes ``step_time x mfu / (3 hfu)``.
  Overhead = eval_steps / eval_interval_steps x mfu / (3 hfu).
* **Data-loader stalls**: a share ``f`` of wall-clock time; factor ``1 - f``.
* **Batch ramp-up** (Megatron ``--rampup-batch-size``, GPT-3, BLOOM): the batch grows linearly in
  samples from ``x0`` of the full batch to the full batch over ``S`` tokens. A step's time is a
  part that does not shrink with the batch (pipeline bubble, exposed gradient reduction,
  optimizer step: a share ``phi`` of the steady step) plus a part proportional to it. Per token,
  a batch ``x`` costs ``phi / x + (1 - phi)`` of a steady token; integrated over the linear ramp,
  the extra time is ``phi x S x (ln(1/x0) / (1 - x0) - 1)`` steady-token times, over ``T``
  training tokens. ``x0`` is held at no less than one micro-batch per data-parallel replica.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from clustertwin.errors import Problem, ScenarioError

#: per-step time that does not shrink with the batch (perf stage time_breakdown_s keys)
FIXED_STEP_KEYS = ("bubble_s", "dp_exposed_s", "zero3_exposed_s", "optimizer_s")
#: plan JSON names of the parts, in the order they are charged
PART_NAMES = ("evaluation", "data_loader", "batch_rampup")


@dataclass(frozen=True)
class GoodputSettings:
    """The goodput losses besides failures: evaluation, data stalls, batch ramp-up."""

    eval_interval_steps: int
    eval_steps: int
    data_stall_fraction: float
    rampup_start_fraction: float
    rampup_tokens: float
    profile: str = "default"


def settings_of(scenario: Any, catalog: Any) -> GoodputSettings:
    """The scenario's ``training.goodput`` with ``auto`` keys from its catalog profile."""
    g = scenario.training.goodput
    if not catalog.has("goodput", g.profile):
        raise ScenarioError([Problem(scenario.source, "training.goodput.profile",
                                     catalog.unknown_message("goodput", g.profile))])
    prof = catalog.get("goodput", g.profile)
    vals = {k: (getattr(prof, k) if getattr(g, k) == "auto" else getattr(g, k))
            for k in ("eval_interval_steps", "eval_steps", "data_stall_fraction",
                      "rampup_start_fraction", "rampup_tokens")}
    return GoodputSettings(**vals, profile=g.profile)


def eval_factor(s: GoodputSettings, mfu: float, hfu: float) -> float:
    """Steady time over steady + evaluation time."""
    if s.eval_steps <= 0:
        return 1.0
    forward = mfu / (3.0 * hfu) if hfu > 0 else 1.0 / 3.0
    return 1.0 / (1.0 + s.eval_steps / s.eval_interval_steps * forward)


def rampup_overhead(phi: float, x0: float, ramp_tokens: float, tokens: float) -> float:
    """Extra time of the ramp-up as a share of the steady run (see the module docstring)."""
    if ramp_tokens <= 0 or tokens <= 0 or x0 >= 1.0 or phi <= 0:
        return 0.0
    ramp = min(ramp_tokens, tokens)
    return phi * ramp * (math.log(1.0 / x0) / (1.0 - x0) - 1.0) / tokens


def fixed_share(breakdown: dict[str, float], step_s: float) -> float:
    """Share of a steady step that does not shrink with the batch."""
    if step_s <= 0:
        return 0.0
    return min(1.0, sum(max(0.0, float(breakdown.get(k, 0.0))) for k in FIXED_STEP_KEYS) / step_s)


def parts(s: GoodputSettings, *, mfu: float, hfu: float, breakdown: dict[str, float],
          step_s: float, tokens: float, micro_batches: float) -> dict[str, float]:
    """The factors of :data:`PART_NAMES`. ``micro_batches``: micro-batches per replica per
    step at the full batch (the ramp-up cannot go below one)."""
    x0 = max(s.rampup_start_fraction, 1.0 / micro_batches if micro_batches >= 1 else 1.0)
    ramp = rampup_overhead(fixed_share(breakdown, step_s), x0, s.rampup_tokens, tokens)
    return {
        "evaluation": eval_factor(s, mfu, hfu),
        "data_loader": 1.0 - s.data_stall_fraction,
        "batch_rampup": 1.0 / (1.0 + ramp),
    }


def product(factors: dict[str, float]) -> float:
    return math.prod(factors.values())
