"""Cold start (issue 36): what ``clustertwin --help`` and ``clustertwin plan --json`` import, and the
table of commands the top-level group builds lazily.

The imports are read from ``sys.modules`` in a fresh interpreter, never timed (timings are in
``benchmarks/bench_coldstart.py``): a heavy library imported at a module's top, or a command
module imported for another command, fails here whatever the machine's load.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer

from clustertwin.cli.main import COMMANDS, app
from tests.conftest import EXAMPLES

#: libraries no command's start pays for: the web app, Parquet, plots, Ray, rich's help panels
NEVER_AT_START = ("plotly", "pyarrow", "starlette", "uvicorn", "ray", "pandas", "openpyxl",
                  "markdown_it", "pygments", "typer.rich_utils")
#: what ``--help`` must not import besides: the stages' libraries and rich itself
NOT_FOR_HELP = ("numpy", "pydantic", "yaml", "rich", "clustertwin.catalog", "clustertwin.scenario",
                "clustertwin.plan")

_PROBE = """
import io, json, sys, contextlib
sys.argv = ["clustertwin", *json.loads(sys.argv[1])]
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        from clustertwin.cli.main import main
        main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "out": out.getvalue()[:200], "modules": sorted(sys.modules)}))
"""


def _imported(*args: str) -> tuple[int, set[str]]:
    """Exit status and every module imported by ``clustertwin ARGS`` in a fresh interpreter."""
    r = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(list(args))], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout.strip().splitlines()[-1])
    return found["code"], set(found["modules"])


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The names (packages included with their submodules) that are in ``modules``."""
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


def test_help_imports_no_stage_and_no_heavy_library():
    code, modules = _imported("--help")
    assert code == 0
    assert _loaded(modules, NEVER_AT_START + NOT_FOR_HELP) == []


def test_plan_json_imports_only_its_own_command():
    code, modules = _imported("plan", str(EXAMPLES / "default.yaml"), "--json")
    assert code == 0
    assert _loaded(modules, NEVER_AT_START + ("rich",)) == []
    others = sorted({m for name, m in COMMANDS.items() if m != "clustertwin.cli.plan"})
    assert _loaded(modules, tuple(others)) == [], "another command's module was imported"


def test_a_command_imports_its_module_alone():
    code, modules = _imported("catalog", "--help")
    assert code == 0
    assert "clustertwin.cli.catalog" in modules
    assert _loaded(modules, ("clustertwin.cli.plan", "clustertwin.cli.serve", "clustertwin.cli.sweep")) == []


def test_command_table_matches_what_the_modules_register():
    """COMMANDS names each command once, with the module whose register() adds it, and no module
    registers a command the table does not list."""
    registered: dict[str, str] = {}
    for module in dict.fromkeys(COMMANDS.values()):
        sub = typer.Typer()
        __import__(module, fromlist=["register"]).register(sub)
        for name in typer.main.get_group(sub).commands:
            assert name not in registered, f"{name} registered by {registered.get(name)} and {module}"
            registered[name] = module
    assert registered == COMMANDS


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_answers_help(name):
    from typer.testing import CliRunner

    r = CliRunner().invoke(app, [name, "--help"])
    assert r.exit_code == 0 and f"clustertwin {name}" in r.output, r.output


def test_an_unknown_command_is_refused_with_a_suggestion():
    from typer.testing import CliRunner

    r = CliRunner().invoke(app, ["plna"])
    assert r.exit_code == 2 and "plan" in r.output


def test_python_dash_m_clustertwin_is_the_command_line():
    r = subprocess.run([sys.executable, "-m", "clustertwin", "--help"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "plan" in r.stdout and "validate" in r.stdout, r.stderr


_ENTRY = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("teardown ran\\n"))
sys.argv = ["clustertwin", *sys.argv[1:]]
from clustertwin.cli import entry
entry()
"""


def test_the_console_entry_ends_a_plan_without_teardown_and_its_output_whole():
    """``plan`` run as the process (the console script, ``python -m clustertwin``) ends without
    the interpreter's teardown (no exit handler runs), its whole document written; a command
    that is not in QUICK_EXIT (here --help) keeps the normal exit."""
    from clustertwin.cli.main import QUICK_EXIT

    assert {"plan", "validate"} <= QUICK_EXIT and not QUICK_EXIT & {"sweep", "track", "serve"}
    r = subprocess.run([sys.executable, "-c", _ENTRY, "plan", "--json"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["decision"]["options"]
    assert "teardown ran" not in r.stderr
    r = subprocess.run([sys.executable, "-c", _ENTRY, "--help"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "teardown ran" in r.stderr


def test_main_called_in_a_process_that_goes_on_exits_normally(monkeypatch, capsys):
    """:func:`clustertwin.cli.main` (what a caller in Python uses) never ends the process."""
    from clustertwin.cli import main

    monkeypatch.setattr(sys, "argv", ["clustertwin", "plan", "--json"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 0
    capsys.readouterr()
