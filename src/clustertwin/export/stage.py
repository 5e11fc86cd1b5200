"""The design an export is built from."""

from __future__ import annotations


def export_design(scenario, catalog):
    """The scenario's ClusterDesign: sized by ``cluster.gpus`` when given (no training
    estimate needed, so exporting is fast), else by the perf estimate (``deadline_days``)."""
    from clustertwin.design import design

    if scenario.cluster.gpus is not None:
        return design(scenario, catalog, None)
    from clustertwin.perf import estimate

    return design(scenario, catalog, estimate(scenario, catalog))
