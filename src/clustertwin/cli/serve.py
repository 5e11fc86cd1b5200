"""The ``clustertwin serve`` command: check the request, build the app, run uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from clustertwin.cli.common import CatalogOpt, handle_user_errors


def _need_server() -> None:
    from clustertwin.errors import Problem, UsageError

    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UsageError([Problem("serve", "", "the web server is an extra: "
                                  "pip install 'clustertwin[serve]' (starlette, uvicorn)")]) from None


def _check_port(host: str, port: int) -> None:
    """Refuse a port that is taken before building anything (one line, exit 2)."""
    import socket

    from clustertwin.errors import Problem, UsageError

    fam = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host.strip("[]"), port))
        except OSError as exc:
            raise UsageError([Problem("--port", str(port), f"cannot listen on {host}:{port} "
                                      f"({exc.strerror or exc}); pick another --port")]) from None


def register(app: typer.Typer) -> None:
    @app.command("serve")
    @handle_user_errors
    def serve(
        scenario: Annotated[Optional[list[Path]], typer.Argument(help="scenario files offered in the editor, compare and sweep pages (beside the examples)")] = None,  # noqa: UP045
        host: Annotated[str, typer.Option("--host", help="address to listen on; anything but loopback exposes the twin to the network")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port")] = 8000,
        catalog: CatalogOpt = None,
        timeout: Annotated[float, typer.Option("--timeout", min=1, max=3600, help="seconds one request may plan before it is answered 504")] = 60.0,
    ) -> None:
        """A local web app over the twin: scenario editor with the answer updated in place,
        compare, sweep, and a JSON API (POST /api/plan, POST /api/validate, GET /api/catalog)."""
        from clustertwin.serve.guard import is_loopback

        if not host.strip():  # '' binds every interface: an unset $HOST must not expose the twin
            from clustertwin.errors import Problem, UsageError

            raise UsageError([Problem("--host", "", "empty; give an address such as 127.0.0.1 "
                                      "(0.0.0.0 listens on every interface)")])
        _need_server()
        _check_port(host, port)
        if not is_loopback(host):
            typer.echo(f"warning: listening on {host}, not loopback: anyone who can reach this "
                       "address can use the twin (there is no login)", err=True)
        import uvicorn

        from clustertwin.serve.app import create_app
        from clustertwin.serve.library import Library

        bad = Library(list(scenario or [])).problems  # a file named here must be readable
        if bad:
            from clustertwin.errors import Problem, UsageError

            raise UsageError([Problem("", "", line) for line in bad])
        web = create_app(list(scenario or []), tuple(str(c) for c in catalog or []), host, timeout, warm=True)
        shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
        typer.echo(f"clustertwin serve: http://{shown}:{port}/  (Ctrl-C stops it)", err=True)
        uvicorn.run(web, host=host.strip("[]"), port=port, log_level="warning")
