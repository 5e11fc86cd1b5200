"""Rendering of every page and fragment: one jinja2 environment over ``serve/templates`` with
autoescape on and every printed text through :func:`clustertwin.quoting.html_text`."""

from __future__ import annotations

import functools
from typing import Any


def _through_quoting(value: Any) -> Any:
    """Every text a template prints goes through clustertwin.quoting.html_text (the one rule:
    controls and lone surrogates included); our own markup (``Markup``, ``| safe``) passes."""
    from markupsafe import Markup

    from clustertwin.quoting import html_text

    return value if isinstance(value, Markup) or not isinstance(value, str) else Markup(html_text(value))


@functools.lru_cache(maxsize=1)
def env() -> Any:
    from jinja2 import Environment, PackageLoader

    from clustertwin.serve.form import dom_id

    e = Environment(loader=PackageLoader("clustertwin", "serve/templates"), autoescape=True,
                    finalize=_through_quoting)

    e.filters["dom_id"] = dom_id
    return e


def html(template: str, status: int = 200, headers: dict[str, str] | None = None, **ctx: Any) -> Any:
    from starlette.responses import HTMLResponse

    return HTMLResponse(env().get_template(template).render(**ctx), status_code=status, headers=headers)
