"""The ``clustertwin`` command line: the app, its commands (one module each in this package) and
the console entry point. Thin: parse, call the stages, hand results to reports.

Cold start (issue 36): a command's module is imported, and its options built, only when that
command runs or ``--help`` lists the commands (:data:`COMMANDS`); heavy imports (numpy,
pydantic models, plotly) happen inside the commands; help is click's plain text, not typer's
rich panels (their markdown and syntax-highlighting imports were half of ``--help``).
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Iterator, Mapping

# One BLAS thread: the command's arrays are small, and starting a pool of OpenBLAS threads
# is a third of numpy's import time (set before numpy is first imported; a user's own
# setting wins).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# pydantic looks for plugins (every installed distribution's entry points) when it builds its
# first validator, a tenth of a cold plan's pydantic cost; the command line uses none (a
# user's own setting, even empty, wins)
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
import typer  # noqa: E402
from typer.core import TyperGroup  # noqa: E402

#: Every command, in the order of ``--help``, and the module of this package whose
#: ``register(app)`` adds it (tests/core/test_cold_start.py checks the two agree).
COMMANDS: dict[str, str] = {
    "plan": "clustertwin.cli.plan", "validate": "clustertwin.cli.plan",
    "estimate": "clustertwin.cli.perf", "calibration": "clustertwin.cli.perf",
    "design": "clustertwin.cli.design", "reliability": "clustertwin.cli.reliability",
    "buildout": "clustertwin.cli.buildout", "schedule": "clustertwin.cli.schedule",
    "acceptance": "clustertwin.cli.acceptance", "check": "clustertwin.cli.acceptance",
    "sweep": "clustertwin.cli.sweep", "compare": "clustertwin.cli.sweep",
    "export": "clustertwin.cli.export", "serve": "clustertwin.cli.serve",
    "measure": "clustertwin.cli.measure", "track": "clustertwin.cli.track",
    "catalog": "clustertwin.cli.catalog", "traces": "clustertwin.cli.traces",
}
#: Commands whose process ends without the interpreter's teardown once they are done, where
#: the process is the command (:func:`entry`): each writes its files whole before returning
#: (the output folder's files are renamed into place) and leaves no pool, server, thread or
#: open store behind; the forked re-plan child is reaped before ``plan`` returns. A command
#: that starts workers (``sweep``, ``track``, ``serve``) keeps the full exit, whose handlers
#: stop them.
QUICK_EXIT = frozenset({"plan", "validate"})
#: typer's help formatting: None is click's plain text
MARKUP = None
#: module -> its commands, once built
_BUILT: dict[str, dict] = {}


def module_commands(module: str) -> dict:
    """The click commands ``module``'s ``register(app)`` adds, by name (the module imported and
    its typer signatures read here, once per process)."""
    built = _BUILT.get(module)
    if built is None:
        sub = typer.Typer(rich_markup_mode=MARKUP)
        importlib.import_module(module).register(sub)
        built = _BUILT[module] = dict(typer.main.get_group(sub).commands)
    return built


class _Commands(Mapping):
    """:data:`COMMANDS` as the group's name -> click command mapping, each built on first use."""

    def __getitem__(self, name: str):  # noqa: ANN204
        built = module_commands(COMMANDS[name])
        if name not in built:
            raise RuntimeError(f"{COMMANDS[name]} does not register the command {name!r}")
        return built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class LazyGroup(TyperGroup):
    """The top-level group: its commands come from :data:`COMMANDS`, built when asked for."""

    def __init__(self, **attrs) -> None:  # noqa: ANN003
        super().__init__(**attrs)
        self.commands = _Commands()

    def list_commands(self, ctx) -> list[str]:  # noqa: ANN001, ARG002
        return list(COMMANDS)


def _root() -> None:
    """The group's own step before any command: none."""


app = typer.Typer(
    name="clustertwin",
    help="A digital twin of an AI training cluster: training time, physical design, reliability, "
    "economics, build-out and scheduling — from one scenario file, offline, in seconds.",
    cls=LazyGroup,
    callback=_root,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=MARKUP,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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
    # a command is its imports and one computation: at CPython's default (a young collection
    # every 700 allocations) the cycle collector ran ~200 times in a cold `plan --json`
    # (~35 ms, 5 % of it); cycles are still collected, ~70 times less often
    gc.set_threshold(50_000, 20, 20)
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
    except OSError as exc:  # the system refused (a full disk under the output, a port in use)
        typer.echo(f"error: {one_line(str(exc))}", err=True)
        sys.exit(1)
    # done: what is still alive stays until the process ends, so the collections the
    # interpreter runs on its way out need not look at it (a third of a plan's shutdown)
    gc.freeze()
    sys.exit(rc if isinstance(rc, int) else 0)


def _flushed() -> None:
    """Standard output and error flushed; where standard output fails (a full disk under
    ``> file``: the command has said so on stderr already), what it still holds, and anything
    written after, goes to the null device instead, so the interpreter's own flush on the way
    out does not fail again with a traceback of its own."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
        except (OSError, ValueError):
            pass
    try:
        sys.stderr.flush()
    except (OSError, ValueError):  # nowhere left to say anything
        pass


def entry() -> None:
    """The ``clustertwin`` console script (and ``python -m clustertwin``): :func:`main` in a
    process of its own. A :data:`QUICK_EXIT` command's process then ends at once, its output
    flushed: the interpreter's teardown (every module, the models' validators, numpy's objects
    freed one by one) is 15 to 25 ms of a cold ``plan --json`` and changes nothing the command
    wrote. :func:`main` itself, called in a process that goes on, always exits normally (and
    leaves that process's streams alone)."""
    try:
        main()
    except SystemExit as exc:
        _flushed()
        if isinstance(exc.code, int) and sys.argv[1:2] and sys.argv[1] in QUICK_EXIT:
            os._exit(exc.code)
        raise


if __name__ == "__main__":
    entry()
