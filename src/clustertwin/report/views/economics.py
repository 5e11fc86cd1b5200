"""The economics view: its rows; capex, opex and the run's cost as figures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clustertwin.report import figures_flow

if TYPE_CHECKING:
    from clustertwin.economics.model import EconomicsResult
    from clustertwin.report.views.base import Where


def rows(res: EconomicsResult) -> list[tuple[str, str]]:
    from clustertwin.fmt import usd

    rows = [
        ("capex", usd(res.capex_usd) + f" ({res.facility})"),
        ("opex", f"{usd(res.opex_usd_per_month)} / month"),
        ("owned cost", f"${res.owned_usd_per_gpu_hour:.2f} / GPU-hour"),
    ]
    if res.run_cost_owned_usd is None or res.run_cost_cloud_usd is None:
        return rows + [("run cost", "no training run (design-only plan)")]
    return rows + [
        ("run cost owned", usd(res.run_cost_owned_usd)),
        ("run cost cloud", f"{usd(res.run_cost_cloud_usd)} at "
                           f"${res.cloud_usd_per_gpu_hour:.2f}/GPU-h"),
        ("wasted compute", f"{res.wasted_compute_frac:.0%} ({res.wasted_compute_source})"),
    ]


def figures(res: EconomicsResult, where: Where | None = None) -> list[tuple[str, Any]]:  # noqa: ARG001
    """Capex by category, opex per month by category and the cost of the run."""
    return figures_flow.economics_figures(res)
