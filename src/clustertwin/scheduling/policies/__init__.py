"""Scheduling policies: a registry of queue orders plus modifiers.

A policy string is ``ORDER[+MODIFIER...]``, for example ``fifo``, ``sjf+backfill``,
``priority+preempt``, ``multifactor+backfill+preempt``. Orders (one small module each):

* ``fifo`` - submit time (Slurm ``priority/basic``);
* ``priority`` - QoS level, then the job's priority value, then submit time;
* ``multifactor`` - Slurm-style weighted sum of age, fair share (with decayed usage), job size
  and QoS, recomputed every ``calc_period_s``;
* ``sjf`` / ``sjf-gpu`` - shortest requested time (or requested GPU-time) first: what a real
  scheduler knows; ``sjf-oracle`` uses the actual duration and is labelled as an oracle.

Modifiers (how the ordered queue is served):

* none - strict: the first job that does not fit blocks everyone behind it (``sched/builtin``);
* ``greedy`` - skip jobs that do not fit and try the next, with no reservation (may starve
  large jobs; the Alibaba PAI-2020 simulator's behaviour);
* ``backfill`` - EASY backfill: the first blocked job gets a reservation at the earliest time
  it can start (from the running attempts' actual end times, which the simulator knows; Slurm
  plans with their time limits, so this backfill is somewhat optimistic); later jobs start
  only if they do not delay it;
* ``preempt`` - a blocked job may requeue running jobs of lower (QoS, priority), which restart
  from their last checkpoint.

``easy`` is an alias of ``fifo+backfill``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from clustertwin.errors import Problem, UsageError
from clustertwin.scheduling.policies.base import ORDERS, Order

MODIFIERS = ("backfill", "greedy", "preempt")
ALIASES = {"easy": "fifo+backfill", "easy-backfill": "fifo+backfill"}

__all__ = ["ALIASES", "MODIFIERS", "ORDERS", "Order", "PolicySpec", "parse_policy", "policy_names"]


@dataclass(frozen=True)
class PolicySpec:
    """A parsed ``--policy`` value."""

    label: str
    order: str
    backfill: bool = False
    greedy: bool = False
    preempt: bool = False
    params: dict[str, float] = field(default_factory=dict)

    @property
    def mode(self) -> str:
        return "backfill" if self.backfill else "greedy" if self.greedy else "strict"

    def build(self) -> Order:
        cls = ORDERS.get(self.order, path="--policy")
        obj = cls()
        for k, v in self.params.items():
            if not hasattr(obj, k):
                raise UsageError([Problem("command line", "--policy",
                                          f"policy {self.order!r} has no parameter {k!r}")])
            setattr(obj, k, v)
        return obj


def parse_policy(text: str) -> PolicySpec:
    """``sjf+backfill`` -> PolicySpec; parameters as ``multifactor:fairshare=5000,age=100``."""
    raw = text.strip()
    base = ALIASES.get(raw, raw)
    head, *mods = base.split("+")
    name, _, ptxt = head.partition(":")
    params = _policy_params(ORDERS.get(name, path="--policy"), ptxt)
    bad = [m for m in mods if m not in MODIFIERS]
    if bad:
        raise UsageError([Problem("command line", "--policy",
                                  f"unknown modifier {bad[0]!r}; known: {', '.join(MODIFIERS)}")])
    twice = sorted({m for m in mods if mods.count(m) > 1})
    if twice:
        raise UsageError([Problem("command line", "--policy",
                                  f"modifier {twice[0]!r} given twice; give each once")])
    if "backfill" in mods and "greedy" in mods:
        raise UsageError([Problem("command line", "--policy", "choose backfill or greedy, not both")])
    return PolicySpec(label=raw, order=name, backfill="backfill" in mods,
                      greedy="greedy" in mods, preempt="preempt" in mods, params=params)


def _policy_params(order: type[Order], text: str) -> dict[str, float]:
    """``age=100,fairshare=5000`` -> {name: value}: known names only, finite numbers within
    the order's bounds (:attr:`Order.PARAMS`); one UsageError listing every bad item."""
    params: dict[str, float] = {}
    problems: list[Problem] = []
    for item in filter(None, text.split(",")):
        k, _, v = (x.strip() for x in item.partition("="))
        bounds = order.PARAMS.get(k)
        if bounds is None:
            known = ", ".join(order.PARAMS) or "none"
            problems.append(Problem("command line", "--policy", f"policy {order.name!r} has no "
                                    f"parameter {k!r}; known: {known}"))
            continue
        try:
            value = float(v)
        except ValueError:
            value = math.nan
        if not bounds[0] <= value <= bounds[1]:
            problems.append(Problem("command line", "--policy", f"{item!r}: {k} must be a finite number "
                                    f"from {bounds[0]:g} to {bounds[1]:g}"))
        params[k] = value
    if problems:
        raise UsageError(problems)
    return params


def policy_names() -> list[str]:
    return ORDERS.names()


# register the built-in orders (each module adds itself)
from clustertwin.scheduling.policies import fifo, multifactor, priority, sjf  # noqa: E402,F401
