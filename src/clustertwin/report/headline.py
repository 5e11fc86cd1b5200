"""The answer a planner reads first, from the plan JSON document (contract sections 2 and 5).

With a ``decision`` block: "Trained by DATE (P90) via ROUTE for $X" and the routes side by side.
Without one: wall-clock days, days without failures, cost of the run and go-live. A design-only
plan: capital cost, facility power and go-live. Pure: a dict in, a dict of strings out; the
page template escapes every string.
"""

from __future__ import annotations

from typing import Any

from clustertwin.fmt import dotted as _get
from clustertwin.fmt import usd
from clustertwin.report.labels import label

#: columns of the options table, in order (contract section 5 keys of decision.options)
OPTION_COLUMNS = ("mode", "gpus", "ready_date", "start_date", "trained_by_p50", "trained_by_p90",
                  "cost_usd", "cost_usage_usd", "cost_exit_usd", "meets_target")


def _tile(doc: dict[str, Any], key: str, text: str) -> dict[str, str]:
    return {"key": key, "label": label(key), "value": text}


def _cell(key: str, v: Any) -> str:
    if v is None:
        return "—"
    if key == "mode":
        return label(str(v)) if str(v) in ("build", "colo", "lease", "cloud") else str(v)
    if key.endswith("_usd"):
        return usd(float(v))
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _confidence(doc: dict[str, Any]) -> str:
    conf = _get(doc, "decision.confidence") or _get(doc, "scenario.decision.confidence")
    return conf if conf in ("p50", "p90") else "p90"


def decision_headline(doc: dict[str, Any]) -> dict[str, Any]:
    """Headline and options table from ``decision`` (best route, or the earliest if none meets
    the target)."""
    dec = doc["decision"]
    options = [o for o in dec.get("options") or [] if isinstance(o, dict)]
    conf = _confidence(doc)
    by = f"trained_by_{conf}"
    best = next((o for o in options if o.get("mode") == dec.get("best")), None)
    if best is not None:
        title = (f"Trained by {best.get(by)} ({conf.upper()}) via {_cell('mode', best.get('mode'))} "
                 f"for {_cell('cost_usd', best.get('cost_usd'))}")
    elif options:
        first = min(options, key=lambda o: str(o.get(by) or "9999"))
        target = dec.get("target_date")
        title = (f"No route trains by {target}" if target else "No route meets the target date")
        title += (f"; earliest: trained by {first.get(by)} ({conf.upper()}) via "
                  f"{_cell('mode', first.get('mode'))} for {_cell('cost_usd', first.get('cost_usd'))}")
    else:
        title = "No route could be planned"
    if isinstance(dec.get("headline"), str):  # the decision's own words (closeness, days sooner)
        title = dec["headline"]
    header = [label(f"decision.options.{c}") for c in OPTION_COLUMNS]
    rows = [{"best": o is best, "cells": [_cell(c, o.get(c)) for c in OPTION_COLUMNS]} for o in options]
    chosen = next((o for o in options if o.get("mode") == dec.get("mode")), best)
    return {"title": title, "tiles": _route_tiles(dec, chosen) if chosen else _run_tiles(doc, costs=False),
            "options": {"header": header, "rows": rows}}


def _route_tiles(dec: dict[str, Any], o: dict[str, Any]) -> list[dict[str, str]]:
    """The recommended route's figures (its GPUs, wall-clock days, $/GPU-hour, MFU, chances),
    not the scenario's owned cluster (issue 38)."""
    fmt = {"gpus": "{:,}", "wall_clock_days_p50": "{:,.0f} days", "usd_per_gpu_hour": "${:.2f}",
           "mfu": "{:.1%}", "p_best": "{:.0%}", "p_meets_target": "{:.0%}"}
    tiles = []
    for key, f in fmt.items():
        v = o.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            tiles.append({"key": f"decision.options.{key}", "label": label(f"decision.options.{key}"),
                          "value": f.format(v)})
    if isinstance(dec.get("margin_usd"), (int, float)):
        tiles.append({"key": "decision.margin_usd", "label": label("decision.margin_usd"),
                      "value": usd(float(dec["margin_usd"]))})
    return tiles


def _run_tiles(doc: dict[str, Any], costs: bool = True) -> list[dict[str, str]]:
    """Headline figures; ``costs=False`` leaves out the run-cost tiles (the routes' costs, on
    their own basis, are in the options table beside them)."""
    tiles = []
    for key, fmt in (("reliability.effective_days", "{:,.0f} days"), ("training.days", "{:,.0f} days"),
                     ("training.gpus", "{:,}"), ("economics.run_cost_owned_usd", None),
                     ("economics.run_cost_cloud_usd", None), ("economics.capex_usd", None),
                     ("design.power.facility_kw", "mw"), ("buildout.go_live_date_p90", "{}")):
        v = _get(doc, key)
        if v is None or (not costs and key.startswith("economics.run_cost")):
            continue
        text = usd(v) if fmt is None else f"{v / 1000:,.1f} MW" if fmt == "mw" else fmt.format(v)
        tiles.append(_tile(doc, key, text))
    return tiles


def plain_headline(doc: dict[str, Any]) -> dict[str, Any]:
    """Headline without a decision block: the run's days and cost, and when the cluster is live."""
    wall, ideal = _get(doc, "reliability.effective_days"), _get(doc, "training.days")
    cost, live = _get(doc, "economics.run_cost_owned_usd"), _get(doc, "buildout.go_live_date_p90")
    if ideal is None:  # design-only plan
        capex, mw = _get(doc, "economics.capex_usd"), _get(doc, "design.power.facility_kw")
        parts = [f"capital cost {usd(capex)}" if capex is not None else "",
                 f"{mw / 1000:,.1f} MW facility" if mw is not None else "",
                 f"live by {live} (P90)" if live else ""]
        title = "Cluster design: " + ", ".join(p for p in parts if p)
    else:
        days = wall if wall is not None else ideal
        title = f"{days:,.0f} wall-clock days to train"
        if wall is not None:
            title += f" ({ideal:,.0f} without failures)"
        if cost is not None:
            title += f" for {usd(cost)} on the owned cluster"
        if live:
            title += f"; cluster live by {live} (P90)"
    return {"title": title, "tiles": _run_tiles(doc), "options": None}


def headline(doc: dict[str, Any]) -> dict[str, Any]:
    """``{"title": str, "tiles": [{key, label, value}], "options": None | {header, rows}}``."""
    if isinstance(doc.get("decision"), dict):
        return decision_headline(doc)
    return plain_headline(doc)
