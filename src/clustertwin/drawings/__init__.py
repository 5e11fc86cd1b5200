"""Drawings to scale, as standalone SVG text (no scripts, no external references).

Pure functions of a design (``ClusterDesign``) and, where given, its export inventory; each
returns one SVG document as a ``str``, ready to write to a file or embed in ``plan.html``:

* ``floor_plan_svg(design, inventory=None, name="", trunks=None) -> str`` - every hall seen
  from above, to
  scale (``floor.SCALE_PX_PER_M`` pixels per metre; a 10 m scale bar is drawn): hall outline
  with its width and depth in metres, rows of racks (each a ``class="rack"`` rect labelled with
  its inventory name), cold aisles and contained hot aisles, network rows, row-end RPPs (power
  panels feeding the racks' PDUs), CDUs at the row ends they serve and CRAHs along the hall's
  mechanical gallery; ``trunks`` ({(hall, hall): links}, :func:`floor.inter_hall_counts`)
  draws the inter-hall cable trunks with their link counts. Rack spacing along a row is
  ``rack_width_m``; rows are
  ``rack_depth_m + hot_aisle_m`` apart around a hot aisle and ``rack_depth_m + cold_aisle_m``
  around a cold aisle (design rules; :mod:`clustertwin.design.geometry`).
* ``rack_elevations_svg(design, inventory=None, name="") -> str`` - the front elevation of the
  first rack of each kind with every device in its U position.
* ``topology_svg(design, name="") -> str`` - the compute fabric: every tier and plane as
  blocks (switch counts and models), the edges labelled with link counts and speeds, one
  scalable unit drawn link by link, and the storage / in-band / out-of-band networks.

Without an ``inventory`` the drawings build one from the built-in catalog (names as
``clustertwin export`` writes them). :func:`drawing_files` gives the three files ``export``
writes.
"""

from __future__ import annotations

from clustertwin.drawings.floor import floor_plan_svg
from clustertwin.drawings.topology import topology_svg

__all__ = ["drawing_files", "floor_plan_svg", "rack_elevations_svg", "topology_svg"]


def rack_elevations_svg(design, inventory=None, name: str = "") -> str:
    from types import SimpleNamespace

    from clustertwin.drawings.floor import inventory_of
    from clustertwin.export.svg import rack_elevations_svg as elevations

    inv, cat = inventory_of(design, inventory, name)
    node = cat.node(design.node_id)
    return elevations(SimpleNamespace(inventory=inv, node=node, catalog=cat))


def drawing_files(ctx, links=None) -> dict[str, str]:
    """``floor-plan.svg``, ``rack-elevations.svg`` and ``topology.svg`` of an export context;
    ``links()`` gives the cabling map's columns (used for the inter-hall trunks of a
    multi-hall site)."""
    from clustertwin.drawings.floor import inter_hall_counts
    from clustertwin.export.svg import rack_elevations_svg as elevations

    name = ctx.inventory.name
    trunks = (inter_hall_counts(ctx.inventory, links()) if links is not None
              and getattr(ctx.design.floor, "halls", 1) > 1 else None)
    return {"floor-plan.svg": floor_plan_svg(ctx.design, ctx.inventory, name, trunks=trunks),
            "rack-elevations.svg": elevations(ctx),
            "topology.svg": topology_svg(ctx.design, name)}
