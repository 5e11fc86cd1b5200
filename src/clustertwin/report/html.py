"""Self-contained HTML report: plotly.js is embedded once, so the page opens with no network."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader

from clustertwin.quoting import html_text
from clustertwin.report.text import TITLES


def _rows_table(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{html_text(k)}</th><td>{html_text(v)}</td></tr>" for k, v in rows)
    return f"<table class='kv'>{body}</table>"


def _through_quoting(value: Any) -> Any:
    """Every text a template prints goes through clustertwin.quoting.html_text (controls and
    lone surrogates included); what the code marked safe (our own markup) passes as it is."""
    from markupsafe import Markup

    return value if isinstance(value, Markup) or not isinstance(value, str) else Markup(html_text(value))


def render_page(title: str, sections: list[dict[str, Any]], subtitle: str = "",
                warnings: list[str] | None = None) -> str:
    """Render sections ``{"title", "rows": [(k, v)], "figures": [(title, fig)], "html": str}``."""
    from plotly.offline import get_plotlyjs

    # escape everything by default: select_autoescape(["html"]) left ``report.html.j2`` (the name
    # ends in .j2) unescaped, so a scenario or catalog name could put script into the page
    env = Environment(loader=PackageLoader("clustertwin", "report/templates"), autoescape=True,
                      finalize=_through_quoting)
    rendered = []
    for sec in sections:
        figs = []
        for ftitle, fig in sec.get("figures", []):
            figs.append({"title": ftitle,
                         "div": fig.to_html(full_html=False, include_plotlyjs=False,
                                            config={"displaylogo": False, "responsive": True})})
        rendered.append({"title": sec["title"], "table": _rows_table(sec.get("rows", [])),
                         "extra": sec.get("html", ""), "figures": figs})
    return env.get_template("report.html.j2").render(
        title=title, subtitle=subtitle, sections=rendered, warnings=warnings or [],
        plotlyjs=get_plotlyjs())


def render(plan: Any) -> str:
    s = plan.scenario
    sections = []
    for name, res in plan.blocks():
        extra = res.html_extra() if hasattr(res, "html_extra") else ""
        if name == "design":  # the floor plan, as `clustertwin export inventory` writes it
            from clustertwin.export.svg import design_floor_plan

            extra += "<h3>Floor plan</h3>" + design_floor_plan(res, s.name)
        sections.append({"title": TITLES.get(name, name), "rows": res.summary_rows(),
                         "figures": res.figures(), "html": extra})
    job = (f"{s.model.name} · {s.training.tokens:.3g} tokens · "
           if getattr(s, "model", None) is not None and getattr(s, "training", None) is not None
           else "design only · ")
    subtitle = f"{job}{s.cluster.gpu} in {s.cluster.node}"
    return render_page(f"clustertwin plan: {s.name}", sections, subtitle, list(plan.warnings))
