"""The decision stage: the buyer's question. When is the model trained, by which route (build a
facility, colocate, lease reserved capacity, rent on demand), for how much; runs after the
build-out and before the plan. ``decide(...) -> DecisionResult``."""

from clustertwin.decision.result import DecisionOption, DecisionResult
from clustertwin.decision.stage import decide

__all__ = ["DecisionOption", "DecisionResult", "decide"]
