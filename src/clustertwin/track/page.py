"""track.html: the tracked run drawn through its view (:mod:`clustertwin.report.views.track`:
the observed-vs-planned tiles, the burn-up chart with the forecast fan, the interruption
timeline, the step time per day, the drift flags). Offline (plotly.js embedded by
:func:`clustertwin.report.html.render_page`)."""

from __future__ import annotations

from clustertwin.track.core import TrackResult
from clustertwin.track.report import to_doc


def render(res: TrackResult) -> str:
    from clustertwin.report.html import render_page
    from clustertwin.report.views import track as view

    doc = to_doc(res)
    headline = {"title": f"Observed vs planned, as of {doc['as_of']}", "tiles": view.tiles(res, doc), "options": None}
    return render_page(f"Tracking: {res.scenario_name or 'training run'}", view.sections(res, doc),
                       subtitle="clustertwin track: the real run against its plan",
                       warnings=[f"{d['metric']}: {d['evidence']}" for d in doc["drift"]], headline=headline)
