"""The ``clustertwin`` command line: the app, its commands (one module each in this package) and
the console entry point. Thin: parse, call the stages, hand results to reports.

Heavy imports (numpy, pydantic models, plotly) happen inside the commands so that
``clustertwin --help`` stays fast.
"""

from __future__ import annotations

import os
import sys

# One BLAS thread: the command's arrays are small, and starting a pool of OpenBLAS threads
# is a third of numpy's import time (set before numpy is first imported; a user's own
# setting wins).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import typer  # noqa: E402

from clustertwin.cli import (  # noqa: E402
    acceptance,
    buildout,
    catalog,
    design,
    export,
    measure,
    perf,
    plan,
    reliability,
    schedule,
    serve,
    sweep,
    traces,
    track,
)

app = typer.Typer(
    name="clustertwin",
    help="A digital twin of an AI training cluster: training time, physical design, reliability, "
    "economics, build-out and scheduling — from one scenario file, offline, in seconds.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Each command module exposes register(app); the order is the order of --help.
for _command in (plan, catalog, perf, design, reliability, buildout, schedule, traces, acceptance,
                 sweep, export, serve, measure, track):
    _command.register(app)


def _no_empty_out(argv: list[str]) -> None:
    """``--out ''`` would become the current folder once parsed as a path: refuse it here,
    where the text is still what the user typed."""
    from clustertwin.errors import Problem, UsageError

    for i, arg in enumerate(argv):
        value = arg[len("--out="):] if arg.startswith("--out=") else (
            argv[i + 1] if arg == "--out" and i + 1 < len(argv) else None)
        if value is not None and not value.strip():
            raise UsageError([Problem("command line", "--out", "is empty; give a folder name")])


def _one_line_warnings() -> None:
    """A numerical library's warning (overflow, a cast) reaches the terminal as one of our
    ``warning:`` lines, once per message, never as a source line and a module path."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001, ARG001
        from clustertwin.errors import one_line

        if issubclass(category, RuntimeWarning):
            typer.echo(f"warning: numerical: {one_line(str(message))} (a result near a limit "
                       "may be inexact)", err=True)
        else:
            typer.echo(f"warning: {category.__name__}: {one_line(str(message))}", err=True)

    warnings.showwarning = show


def main() -> None:
    """The console entry point: every input error is one ``error:`` line and exit 2, click's
    own (a bad option value such as ``--workers 0``, an unknown option) included."""
    from clustertwin.errors import UserError, one_line

    # the command-line library's exceptions, wherever this typer release keeps them (typer
    # >= 0.20 vendors click as typer._click; older releases use click itself)
    cx = sys.modules[typer.BadParameter.__module__]

    _one_line_warnings()
    try:
        _no_empty_out(sys.argv[1:])
        rc = app(standalone_mode=False)
    except UserError as exc:  # backstop for commands without the decorator
        for line in exc.lines():
            typer.echo(f"error: {line}", err=True)
        sys.exit(2)
    # bare `clustertwin CMD`: its help (click 8.2 raises NoArgsIsHelpError; older click has none)
    except getattr(cx, "NoArgsIsHelpError", ()) as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except cx.ClickException as exc:
        typer.echo(f"error: {one_line(exc.format_message(), 600)}", err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(1)
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
