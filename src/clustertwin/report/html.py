"""Self-contained HTML report: plotly.js is embedded once, so the page opens with no network.

plan.html reads answer first: the headline (report/headline.py), then the warnings, a table of
contents, the stage sections, each drawn by its stage's view (report/views/), and the drawings. Every
figure on every page (plan, compare, sweep, acceptance) gets the one house style
(report/style.py). Strings reach the page only through jinja2 autoescaping or ``clustertwin.quoting.html_text``.
"""

from __future__ import annotations

import re
from typing import Any

from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from clustertwin.quoting import html_text
from clustertwin.report.labels import humanize
from clustertwin.report.text import TITLES

#: a key a note or value tells the reader to set or look up: a dotted scenario/plan key
#: (``training.batch_rounding``) or a catalog/cost-book item (``staff_fte_min``)
_KEY_RE = re.compile(r"\b(?:scenario|model|training|cluster|reliability|economics|buildout|design|decision)"
                     r"(?:\.[a-z0-9_]+)+\b|\b[a-z0-9]+(?:_[a-z0-9]+)+\b")


def keys_as_code(text: str) -> str:
    """``text`` escaped for HTML, the keys in it set as ``<code>``: something the reader types or
    looks up, not a label (row labels, headings and figure text stay words, and are checked)."""
    return _KEY_RE.sub(lambda m: f"<code>{m.group(0)}</code>", html_text(text))


def _rows_table(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{html_text(k)}</th><td>{keys_as_code(v)}</td></tr>" for k, v in rows)
    return f"<table class='kv'>{body}</table>"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def _figure_div(fig: Any) -> str:
    from clustertwin.report import style

    style.apply(fig)
    return fig.to_html(full_html=False, include_plotlyjs=False,
                       config={"displaylogo": False, "responsive": True})


def drawings_section(drawings: dict[str, str] | None) -> list[dict[str, str]]:
    """The drawings slot: ``{title: svg markup}`` (made by ``clustertwin.drawings``, which escapes
    what it draws) -> items for the template; nothing when no drawings are given."""
    if not drawings:
        return []
    return [{"title": t, "id": "drawing-" + _slug(t), "svg": svg} for t, svg in drawings.items() if svg]


def _through_quoting(value: Any) -> Any:
    """Every text a template prints goes through clustertwin.quoting.html_text (controls and
    lone surrogates included); what the code marked safe (our own markup) passes as it is."""
    return value if isinstance(value, Markup) or not isinstance(value, str) else Markup(html_text(value))


def render_page(title: str, sections: list[dict[str, Any]], subtitle: str = "",
                warnings: list[str] | None = None, headline: dict[str, Any] | None = None,
                drawings: dict[str, str] | None = None) -> str:
    """Render sections ``{"title", "rows": [(k, v)], "figures": [(title, fig)], "html": str}``;
    with ``headline`` (report/headline.py) the answer comes first, then the warnings and a table
    of contents; ``drawings`` fill the drawings section."""
    from plotly.offline import get_plotlyjs

    # escape everything by default: select_autoescape(["html"]) left ``report.html.j2`` (the name
    # ends in .j2) unescaped, so a scenario or catalog name could put script into the page
    env = Environment(loader=PackageLoader("clustertwin", "report/templates"), autoescape=True,
                      finalize=_through_quoting)
    rendered = []
    for sec in sections:
        figs = [{"title": ftitle, "div": _figure_div(fig)} for ftitle, fig in sec.get("figures", [])]
        rendered.append({"title": sec["title"], "id": "sec-" + _slug(sec["title"]),
                         "table": _rows_table(sec.get("rows", [])),
                         "extra": sec.get("html", ""), "figures": figs})
    return env.get_template("report.html.j2").render(
        title=title, subtitle=subtitle, sections=rendered,
        warnings=[Markup(keys_as_code(w)) for w in warnings or []],
        headline=headline, drawings=drawings_section(drawings), plotlyjs=get_plotlyjs())


def default_drawings(plan: Any) -> dict[str, str]:
    """The drawings plan.html shows (from :mod:`clustertwin.drawings`, which escapes every name
    it draws): the floor plan sheet (a multi-hall site's key plan, then its first hall's sheet),
    the fabric topology and the rack elevations of every rack type."""
    if plan.design is None:
        return {}
    from clustertwin.drawings import rack_elevations_svg, sheet_date, topology_svg
    from clustertwin.drawings.floor import floor_plan_sheets, inventory_of

    name = plan.scenario.name
    date = sheet_date(plan.scenario)
    inv, _ = inventory_of(plan.design, None, name)
    sheets = floor_plan_sheets(plan.design, inv, name, date=date)
    out = {"Floor plan": sheets[0][1]}
    if len(sheets) > 1:
        out["Floor plan, hall 1"] = sheets[1][1]
    return out | {"Fabric topology": topology_svg(plan.design, name),
                  "Rack elevations": rack_elevations_svg(plan.design, inv, name, date=date)}


def stage_sections(plan: Any, catalog: Any = None) -> list[dict[str, Any]]:
    """Each stage's section ``{"name", "title", "rows", "figures", "html"}``, drawn by the
    stage's view (:mod:`clustertwin.report.views`); ``catalog``: the one the plan was made
    with (None: the built-in catalog)."""
    from clustertwin.report import views

    where = views.Where(plan.scenario, catalog, plan.economics)
    out = []
    for name, res in plan.blocks():
        view = views.view_of(res)
        out.append({"name": name, "title": TITLES.get(name, humanize(name)), "rows": view.rows(res),
                    "figures": view.figures(res, where), "html": view.html(res, where)})
    return out


def render(plan: Any, drawings: dict[str, str] | None = None, catalog: Any = None) -> str:
    """plan.html: ``drawings`` ({title: svg}) default to :func:`default_drawings`; ``catalog``
    is the one the plan was made with (None: the built-in catalog)."""
    from clustertwin.report.headline import headline

    s = plan.scenario
    sections = stage_sections(plan, catalog)
    job = (f"{s.model.name} · {s.training.tokens:.3g} tokens · "
           if s.model is not None and s.training is not None
           else "design only · ")
    subtitle = f"{job}{s.cluster.gpu} in {s.cluster.node}"
    return render_page(f"clustertwin plan: {s.name}", sections, subtitle, list(plan.warnings),
                       headline=headline(plan.to_dict()),
                       drawings=default_drawings(plan) if drawings is None else drawings)
