"""One figure style for every page (plan.html, compare.html, sweep.html, the web app).

Colours: the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"), distinguishable
with the common colour-vision deficiencies; grey for "other". Figures are given a fixed
height and a white background so they print; the page's print script narrows them to the
paper instead of cutting them.
"""

from __future__ import annotations

from typing import Any

#: Okabe-Ito, black dropped (it is the text colour) and the order chosen so neighbours contrast
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
OTHER = "#999999"
ACCENT = "#D55E00"  #: marks such as "used interval", capacity lines
FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"
DEFAULT_HEIGHT = 420


def color(i: int) -> str:
    """The i-th series colour."""
    return PALETTE[i % len(PALETTE)]


def apply(fig: Any) -> Any:
    """Give ``fig`` the house style in place (and return it). Keeps a height the figure set."""
    fig.update_layout(
        font={"family": FONT, "size": 13, "color": "#222"},
        colorway=list(PALETTE),
        paper_bgcolor="white", plot_bgcolor="white",
        title={"x": 0, "xanchor": "left", "font": {"size": 16}},
        margin={"l": 70, "r": 30, "t": 60, "b": 60},
        legend={"bgcolor": "rgba(255,255,255,0.8)"},
        hoverlabel={"font": {"family": FONT}},
    )
    if fig.layout.height is None:
        fig.update_layout(height=DEFAULT_HEIGHT)
    fig.update_xaxes(gridcolor="#e5e5e5", zerolinecolor="#bbb", automargin=True)
    fig.update_yaxes(gridcolor="#e5e5e5", zerolinecolor="#bbb", automargin=True)
    return fig
