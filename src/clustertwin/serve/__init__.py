"""``clustertwin serve``: the twin in a browser (consumer layer, over the same Plan as the CLI).

A Starlette app served by uvicorn on 127.0.0.1: a JSON API (``POST /api/plan``,
``POST /api/validate``, ``GET /api/catalog``), a scenario editor whose answer updates in place
(htmx, vendored in ``static/``), a compare page and a sweep page. Everything the pages load is
served by this process (htmx and plotly.js included): it works with no network.

Modules: :mod:`.engine` the warm planner, its LRU cache and the JSON reader; :mod:`.guard` the
request rules (exact Host/Origin allow-list, body size and time); :mod:`.runner` the bounded
queue in front of the planning processes; :mod:`.workers` those processes (memory cap,
wall-clock kill, replacement); :mod:`.conn` the connection limits and the bounded log;
:mod:`.app` the app and the API; :mod:`.pages` / :mod:`.form` / :mod:`.answer` the editor and
answer; :mod:`.compare`; :mod:`.sweeps` / :mod:`.sweep_pages` background sweeps (in a capped
process); :mod:`.render` the templates; :mod:`.library` the saved scenarios; :mod:`.cli` the
command. starlette and uvicorn are the ``serve`` extra, imported only here.
``clustertwin.serve.app.create_app()`` builds the ASGI app (e.g. for another ASGI server).
"""

from __future__ import annotations
