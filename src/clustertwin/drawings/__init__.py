"""Drawings to scale, as standalone SVG text (no scripts, no external references), on sheets a
designer can print: ISO A paper in mm (``width="841mm"``), a standard scale, a title block
(project, scenario, drawing, date, scale, revision, sheet n of N) and no text under 2 mm at
the sheet's size (:mod:`clustertwin.drawings.sheet`).

* ``floor_plan_sheets(design, inventory=None, name="", trunks=None, date="")`` - one sheet per
  hall (:mod:`clustertwin.drawings.floor`): the white space with its rows, cold and contained
  hot aisles, racks (``class="rack"``, named where 2 mm text fits, else row labels), rear-door
  heat exchangers on contained compute racks, row-end CDUs, A and B overhead busway over every
  row, the side galleries with the hall's CRAHs (N+1) where they physically fit, dimensions, a
  scale bar, a legend and the hall's schedule; a multi-hall site gets a key plan first (every
  hall to scale, the inter-hall cable trunks from ``trunks``). What a hall sheet draws is
  :func:`clustertwin.drawings.hall_layout.hall_layouts`, which ``check_layout`` checks: every
  unit inside its hall, no two overlapping, no aisle through a rack.
  ``floor_plan_svg(...)`` is the first sheet.
* ``rack_elevations_svg(design, inventory=None, name="")`` - the front of every rack type the
  site holds with its device stack, count, maximum draw and PDU capacity
  (:mod:`clustertwin.drawings.elevations`).
* ``topology_svg(design, name="")`` - the compute fabric: every tier and plane as blocks
  (switch counts and models), the edges labelled with link counts and speeds, one scalable
  unit drawn link by link, and the storage / in-band / out-of-band networks.

Without an ``inventory`` the drawings build one from the built-in catalog (names as
``clustertwin export`` writes them). :func:`drawing_files` gives the files ``export`` writes.
"""

from __future__ import annotations

from clustertwin.drawings.floor import floor_plan_svg
from clustertwin.drawings.topology import topology_svg

__all__ = ["drawing_files", "floor_plan_svg", "rack_elevations_svg", "topology_svg"]


def rack_elevations_svg(design, inventory=None, name: str = "", *, date: str = "") -> str:
    from clustertwin.design.rules import load_rules
    from clustertwin.drawings.elevations import elevations_svg
    from clustertwin.drawings.floor import inventory_of

    inv, cat = inventory_of(design, inventory, name)
    return elevations_svg(design, inv, cat, load_rules(), project=name or inv.name, date=date)


def drawing_files(ctx, links=None) -> dict[str, str]:
    """``floor-plan.svg`` (with ``floor-plan-hall-NN.svg`` per hall of a multi-hall site),
    ``rack-elevations.svg`` and ``topology.svg`` of an export context; ``links()`` gives the
    cabling map's columns (used for the inter-hall trunks of a multi-hall site). The sheets'
    date is the scenario's ``buildout.start_date`` (the same scenario, the same files)."""
    from clustertwin.drawings.floor import floor_plan_sheets, inter_hall_counts

    name = ctx.inventory.name
    date = sheet_date(ctx.scenario)
    trunks = (inter_hall_counts(ctx.inventory, links()) if links is not None
              and ctx.design.floor.halls > 1 else None)
    sheets = floor_plan_sheets(ctx.design, ctx.inventory, name, trunks=trunks, date=date)
    return {f"{stem}.svg": svg for stem, svg in sheets} | {
        "rack-elevations.svg": rack_elevations_svg(ctx.design, ctx.inventory, name, date=date),
        "topology.svg": topology_svg(ctx.design, name)}


def sheet_date(scenario) -> str:
    """A sheet's date: the scenario's ``buildout.start_date`` (ISO), else empty."""
    start = scenario.buildout.start_date
    return start.isoformat() if start is not None else ""
