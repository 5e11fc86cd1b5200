"""Small SVG helpers: every text goes through :func:`clustertwin.quoting.html_text`."""

from __future__ import annotations

from clustertwin.quoting import html_text

KIND_COLOURS = {"compute": "#4c78a8", "network": "#f58518", "management": "#54a24b",
                "storage": "#b279a2"}


def svg_open(w: float, h: float, title: str, font: float = 10.0) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
            f'viewBox="0 0 {w:.1f} {h:.1f}" font-family="sans-serif" font-size="{font:g}">',
            f"<title>{html_text(title)}</title>"]


def rect(x: float, y: float, w: float, h: float, fill: str, *, cls: str = "",
         title: str = "", stroke: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    s = f' stroke="{stroke}" fill-opacity="1"' if stroke else ""
    t = f"<title>{html_text(title)}</title>" if title else ""
    return (f'<rect{c} x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}" '
            f'fill="{fill}"{s}>{t}</rect>')


def text(x: float, y: float, s: str, *, size: float | None = None, anchor: str = "",
         fill: str = "", cls: str = "") -> str:
    a = f' text-anchor="{anchor}"' if anchor else ""
    f = f' font-size="{size:.2f}"' if size else ""
    c = f' fill="{fill}"' if fill else ""
    k = f' class="{cls}"' if cls else ""
    return f'<text{k} x="{x:.2f}" y="{y:.2f}"{a}{f}{c}>{html_text(s)}</text>'


def line(x1: float, y1: float, x2: float, y2: float, stroke: str = "#333",
         width: float = 1.0) -> str:
    return (f'<line x1="{x1:.2f}" y1="{y1:.2f}" x2="{x2:.2f}" y2="{y2:.2f}" '
            f'stroke="{stroke}" stroke-width="{width:g}"/>')
