"""``clustertwin serve``: the twin in a browser (consumer layer, over the same Plan as the CLI).

A Starlette app served by uvicorn on 127.0.0.1: a JSON API (``POST /api/plan``,
``POST /api/validate``, ``GET /api/catalog``), a scenario editor whose answer updates in place
(htmx, vendored in ``static/``), a compare page and a sweep page. Everything the pages load is
served by this process (htmx and plotly.js included): it works with no network.

Modules: :mod:`.engine` the warm planner and its LRU cache; :mod:`.guard` the request limits
(body size, Host, Origin, run time); :mod:`.app` the app and the API; :mod:`.pages` /
:mod:`.form` / :mod:`.answer` the editor and answer; :mod:`.compare`; :mod:`.sweeps` /
:mod:`.sweep_pages` background sweeps; :mod:`.render` the templates; :mod:`.library` the saved scenarios; :mod:`.cli` the
command. starlette and uvicorn are the ``serve`` extra, imported only here.
``clustertwin.serve.app.create_app()`` builds the ASGI app (e.g. for another ASGI server).
"""

from __future__ import annotations
