"""The cluster design's view: its rows, the power-flow and fabric figures, the bill of
materials as an HTML table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clustertwin.fmt import plural, usd
from clustertwin.report import figures_flow

if TYPE_CHECKING:
    from clustertwin.design.result import ClusterDesign
    from clustertwin.report.views.base import Where


def rows(res: ClusterDesign) -> list[tuple[str, str]]:
    f, p, c, s = res.fabric, res.power, res.cooling, res.storage
    top = "aggregation" if f.pod is not None else "core"
    tiers = f"{f.leaf:,} leaf / {f.spine:,} spine" + (f" / {f.core:,} {top}" if f.core else "")
    planes = f" x {f.planes} planes" if f.planes > 1 else ""
    if f.pod is not None:
        ratio = f.cross_pod_ratio
        tiers += (f"; {f.pods} pod{'s' if f.pods > 1 else ''} of "
                  f"{f.pod.pod_nodes * res.layout.gpus_per_node:,} GPUs"
                  + (f", cross-pod {ratio:.2f}:1" if ratio else ""))
    return [
        ("nodes", f"{plural(res.nodes, 'node')} ({res.spare_nodes} spare"
                  + (f", {res.layout.idle_nodes} idle" if res.layout.idle_nodes else "")
                  + f"), {res.layout.nodes_per_rack} per rack"),
        ("racks", f"{res.racks:,} ({res.rack_counts.compute:,} compute), "
                  f"{res.floor.rows} rows, {res.floor.area_m2:,.0f} m2"),
        ("scalable units", f"{res.scalable_units} of {f.su_nodes} nodes"),
        ("compute fabric", f"{f.technology} {f.tiers}-tier{planes}: {tiers}" if f.switches
         else "none: one node, its GPUs on NVLink"),
        ("fabric cables", f"{f.cables:,} ({f.fiber_cables:,} optical), "
                          f"{f.transceivers:,} transceivers"),
        ("storage", f"{s.capacity_pb:.2f} PB, write {s.write_gbps:,.0f} GB/s, "
                    f"read {s.read_gbps:,.0f} GB/s"
                    + (f" (checkpoint {s.checkpoint_tb:.2f} TB)" if s.checkpoint_tb
                       else " (no job checkpoint: design only)")
                    + (", on the nodes' NVMe" if s.on_nodes else "")),
        ("IT power", f"{p.it_kw / 1000:,.2f} MW max, "
                     f"{p.it_typical_kw / 1000:,.2f} MW typical; "
                     f"{p.rack_kw:.1f} kW per compute rack"),
        ("facility power", f"{p.facility_kw / 1000:,.2f} MW at PUE {p.pue:.2f}; "
                           + ("in an existing facility (its UPS and generators)"
                              if res.facility == "existing-facility" else
                              f"UPS {p.ups_modules} x {p.ups_module_kw:,.0f} kW "
                              f"({p.ups_redundancy}), {p.generators} generators")),
        ("cooling", f"{c.mode}, {c.crah_units} CRAH"
                    + (f", {c.rdhx_units} rear doors" if c.rdhx_units else "")
                    + (f", {c.cdu_units} CDU" if c.cdu_units else "")
                    + (f", {c.chillers} chillers" if c.chillers else "")
                    + (" (the facility's)" if res.facility == "existing-facility" else "")),
        ("bill of materials", f"{usd(res.bom_priced_usd)} priced "
                              f"({sum(1 for b in res.bom if not b.priced)} lines unpriced)"),
    ]


def html(res: ClusterDesign, where: Where | None = None) -> str:
    """The bill of materials as an HTML table (for plan.html): with the plan's economics, the one
    priced BOM (``vendor_bom``: the lines ``bom.csv`` and ``bom.xlsx`` write, summing to
    ``economics.capex_usd``), else the design's own lines."""
    from clustertwin.quoting import html_text

    if where is not None and where.economics is not None:
        from clustertwin.economics.bom import bom_html, vendor_bom

        return bom_html(vendor_bom(res, where.economics))

    def money(v: float | None) -> str:
        return "unpriced" if v is None else f"${v:,.0f}"

    rows = "".join(
        f"<tr><td>{html_text(b.category)}</td><td>{html_text(b.item)}</td>"
        f"<td>{html_text(b.part_number or b.part_number_reason)}</td>"
        f"<td>{b.quantity:,.0f}</td>"
        f"<td>{money(b.unit_usd)}</td><td>{money(b.total_usd)}</td>"
        f"<td title='{html_text(b.source)}'>{html_text(b.source[:60])}</td>"
        f"<td>{html_text(b.as_of)}</td></tr>"
        for b in res.bom)
    return ("<h3>Bill of materials</h3><table class='data'><tr><th>category</th><th>item</th>"
            "<th>part number</th><th>quantity</th><th>unit</th><th>total</th><th>source</th>"
            "<th>as of</th></tr>"
            f"{rows}</table>")


def figures(res: ClusterDesign, where: Where | None = None) -> list[tuple[str, Any]]:  # noqa: ARG001
    """Power as a flow from the utility to the racks, and the fabric's tiers."""
    return [("power flow", figures_flow.power_flow_figure(res)),
            ("fabric", figures_flow.fabric_figure(res))]
