"""``clustertwin serve``: the twin in a browser (consumer layer, over the same Plan as the CLI).

A Starlette app served by uvicorn on 127.0.0.1: a JSON API (``POST /api/plan``,
``POST /api/validate``, ``GET /api/catalog``), a scenario editor whose answer updates in place
(htmx, vendored in ``static/``), a compare page and a sweep page. Everything the pages load is
served by this process (htmx and plotly.js included): it works with no network.

Modules: :mod:`.engine` the warm planner and its LRU cache; :mod:`.guard` the request limits
(body size, Host, Origin, run time); :mod:`.app` the app and the API; :mod:`.pages` /
:mod:`.form` / :mod:`.answer` the editor and answer; :mod:`.compare`; :mod:`.sweeps` /
:mod:`.sweep_pages` background sweeps; :mod:`.library` the saved scenarios; :mod:`.cli` the
command. starlette and uvicorn are the ``serve`` extra, imported only here.
"""

from __future__ import annotations

from typing import Any


def create_app(*args: Any, **kwargs: Any) -> Any:
    """See :func:`clustertwin.serve.app.create_app`."""
    from clustertwin.serve.app import create_app as _create

    return _create(*args, **kwargs)


__all__ = ["create_app"]
