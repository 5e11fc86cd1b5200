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
        raise UsageError([Problem("serve", "", "starlette or uvicorn is missing (dependencies "
                                  "of clustertwin): pip install starlette uvicorn")]) from None


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
    # a command: one parameter per command-line option (typer reads this signature)
    @app.command("serve")
    @handle_user_errors
    def serve(
        scenario: Annotated[Optional[list[Path]], typer.Argument(help="scenario files offered in the editor, compare and sweep pages (beside the examples)")] = None,  # noqa: UP045
        host: Annotated[str, typer.Option("--host", help="address to listen on; anything but loopback exposes the twin to the network")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port")] = 8000,
        catalog: CatalogOpt = None,
        timeout: Annotated[float, typer.Option("--timeout", min=1, max=3600, help="seconds one plan may run before its process is stopped and the request answered 503")] = 60.0,
        memory_cap: Annotated[int, typer.Option("--memory-cap", min=512, max=1 << 20, help="MiB of memory one planning process may use; a plan past it is answered 422")] = 1024,
        workers: Annotated[Optional[int], typer.Option("--workers", min=1, max=64, help="planning processes (default: one per core, at most 8)")] = None,  # noqa: UP045
        allow_host: Annotated[Optional[list[str]], typer.Option("--allow-host", help="another name this server answers to (a DNS name of this machine); repeatable")] = None,  # noqa: UP045
    ) -> None:
        """A local web app over the twin: scenario editor with the answer updated in place,
        compare, sweep, and a JSON API (POST /api/plan, POST /api/validate, GET /api/catalog)."""
        from clustertwin.serve.guard import canonical_name, is_loopback

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
        from clustertwin.serve.conn import bound_logs, raise_open_files, server_config

        bad_names = [n for n in allow_host or [] if canonical_name(n.strip()) is None]
        if bad_names:
            from clustertwin.errors import Problem, UsageError

            raise UsageError([Problem("--allow-host", n[:60], "expected a DNS name or an IP address") for n in bad_names])
        raise_open_files()
        web = create_app(list(scenario or []), tuple(str(c) for c in catalog or []), host, timeout, warm=True,
                         port=port, allow_hosts=tuple(allow_host or ()), workers=workers, memory_mb=memory_cap)
        config = server_config(web, host.strip("[]"), port)
        bound_logs()  # after uvicorn set up its loggers
        shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
        typer.echo(f"clustertwin serve: http://{shown}:{port}/  (Ctrl-C stops it)", err=True)
        try:
            uvicorn.Server(config).run()
        finally:
            web.state.sweeps.close()
            web.state.runner.close()
