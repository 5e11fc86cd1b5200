"""Power as a flow (utility -> switchgear -> UPS -> PDUs -> racks, cooling and facility
overhead drawn off) and the economics figures with their categories in words.

The design gives the facility load (IT x PUE) and the IT load by consumer; it carries no
per-stage electrical efficiency, so the facility overhead (cooling, lighting and electrical
losses together: what PUE counts) leaves the flow in one branch at the switchgear rather than
being split between the UPS and the transformers with invented efficiencies.
"""

from __future__ import annotations

from typing import Any

from clustertwin.report import style
from clustertwin.report.labels import SERIES


def power_links(power: Any) -> tuple[list[str], list[tuple[int, int, float]]]:
    """Nodes and (source, target, kW) links of the power flow; the loads sum to the IT load."""
    loads = [("Compute nodes", power.nodes_kw), ("Compute fabric", power.compute_fabric_kw),
             ("Storage and its fabric", power.storage_kw + power.storage_fabric_kw),
             ("Management", power.management_kw)]
    nodes = ["Utility feed", "Switchgear", "Cooling and facility overhead", "UPS", "Rack PDUs"]
    links = [(0, 1, power.facility_kw), (1, 2, max(power.facility_kw - power.it_kw, 0.0)),
             (1, 3, power.it_kw), (3, 4, power.it_kw)]
    for name, kw in loads:
        if kw > 0:
            nodes.append(name)
            links.append((4, len(nodes) - 1, kw))
    return nodes, links


def power_flow_figure(design: Any) -> Any:
    """Sankey of the power chain at maximum draw, MW on every node."""
    import plotly.graph_objects as go

    p = design.power
    nodes, links = power_links(p)
    through = [0.0] * len(nodes)
    for _, t, kw in links:
        through[t] += kw
    through[0] = p.facility_kw
    colors = ["#555555", "#555555", style.OTHER, style.color(0), style.color(0)]
    colors += [style.color(i + 1) for i in range(len(nodes) - len(colors))]
    # fixed columns: labels of the right half print left of their node, clear of the next column
    xs = [0.001, 0.2, 0.999, 0.4, 0.62] + [0.999] * (len(nodes) - 5)
    ys = [0.55, 0.55, 0.08, 0.6, 0.6] + [0.55, 0.86, 0.93, 0.99][: len(nodes) - 5]
    fig = go.Figure(go.Sankey(
        arrangement="fixed", valueformat=",.2f", valuesuffix=" MW",
        node={"label": [f"{n}: {kw / 1000:,.2f} MW" for n, kw in zip(nodes, through, strict=True)],
              "color": colors, "pad": 18, "thickness": 16, "x": xs, "y": ys},
        link={"source": [s for s, _, _ in links], "target": [t for _, t, _ in links],
              "value": [kw / 1000 for _, _, kw in links],
              "color": ["rgba(153,153,153,0.45)" if t == 2 else "rgba(0,114,178,0.25)"
                        for _, t, _ in links]}))
    fig.update_layout(height=420, title=f"Power at maximum draw: {p.facility_kw / 1000:,.1f} MW from "
                                        f"the utility, {p.it_kw / 1000:,.1f} MW to the racks "
                                        f"(PUE {p.pue:.2f})")
    return style.apply(fig)


def fabric_figure(design: Any) -> Any:
    """Switch counts per tier of the compute fabric beside the nodes they connect (linear scale,
    the count written on each bar), until the topology drawing takes its place."""
    import plotly.graph_objects as go

    f = design.fabric
    top = "Aggregation switches" if f.pod is not None else "Core switches"
    tiers = [("Nodes", design.nodes), ("Leaf switches", f.leaf), ("Spine switches", f.spine)]
    if f.core:
        tiers.append((top, f.core))
    fig = go.Figure(go.Bar(y=[t[0] for t in tiers], x=[t[1] for t in tiers], orientation="h",
                           text=[f"{t[1]:,}" for t in tiers], textposition="auto",
                           marker={"color": [style.color(0)] + [style.color(1)] * (len(tiers) - 1)},
                           hovertemplate="%{y}: %{x:,}<extra></extra>"))
    planes = f", {f.planes} planes" if f.planes > 1 else ""
    fig.update_layout(title=f"Compute fabric: {f.technology}, {f.tiers} tiers{planes}, "
                            f"{f.cables:,} cables",
                      xaxis_title="count", yaxis={"autorange": "reversed"}, height=300)
    return style.apply(fig)


def cash_figure(decision: Any) -> Any:
    """Cumulative cash out per route, month by month (the decision stage's cash flows); routes
    named in words, the best one drawn thicker."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for i, o in enumerate(decision.options):
        total, ys = 0.0, []
        for v in o.cash_flow_usd_per_month:
            total += v
            ys.append(total / 1e6)
        best = o.mode == decision.best
        fig.add_trace(go.Scatter(x=list(range(1, len(ys) + 1)), y=ys, mode="lines",
                                 name=_words(o.mode) + (" (best)" if best else ""),
                                 line={"color": style.color(i), "width": 4 if best else 2},
                                 hovertemplate="month %{x}: $%{y:,.1f}M<extra></extra>"))
    fig.update_layout(title="Cumulative cash out by route (resale of owned hardware at the end)",
                      xaxis_title="month from the start", yaxis_title="$ million", height=400)
    return style.apply(fig)


def _words(key: str) -> str:
    return SERIES[key][0] if key in SERIES else key.replace("_", " ").capitalize()


def economics_figures(eco: Any) -> list[tuple[str, Any]]:
    """Capex by category, opex per month by category and the cost of the run, in words."""
    import plotly.graph_objects as go

    cap = {k: v for k, v in eco.capex_by_category_usd.items() if v > 0}
    opx = {k: v for k, v in eco.opex_by_category_usd_per_month.items() if v > 0}
    fig = go.Figure(go.Bar(x=[_words(k) for k in cap], y=[v / 1e6 for v in cap.values()],
                           marker={"color": style.color(0)},
                           hovertemplate="%{x}: $%{y:,.1f}M<extra></extra>"))
    fig.update_layout(title="Capital cost by category", yaxis_title="$ million", height=380)
    fig2 = go.Figure(go.Bar(x=[_words(k) for k in opx], y=[v / 1e3 for v in opx.values()],
                            marker={"color": style.color(1)},
                            hovertemplate="%{x}: $%{y:,.0f}k per month<extra></extra>"))
    fig2.update_layout(title="Operating cost per month by category", yaxis_title="$ thousand per month",
                       height=380)
    out = [("Capex", style.apply(fig)), ("Opex", style.apply(fig2))]
    runs = (eco.run_cost_owned_usd, eco.run_cost_cloud_ideal_usd, eco.run_cost_cloud_usd)
    if any(v is None for v in runs):   # design-only plan: no run to price
        return out
    fig3 = go.Figure(go.Bar(x=["Owned cluster", "Cloud, no failures", "Cloud, with failures"],
                            y=[float(v) / 1e6 for v in runs],
                            marker={"color": [style.color(0), style.color(4), style.color(5)]},
                            hovertemplate="%{x}: $%{y:,.1f}M<extra></extra>"))
    fig3.update_layout(title="Cost of the training run", yaxis_title="$ million", height=380)
    return out + [("Run cost", style.apply(fig3))]
