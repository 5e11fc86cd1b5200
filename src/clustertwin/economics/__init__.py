"""Economics: capex from the bill of materials, opex, owned $/GPU-hour, run cost owned vs cloud."""

from clustertwin.economics.model import EconomicsResult, economics, run_cost_cloud

__all__ = ["EconomicsResult", "economics", "run_cost_cloud"]
