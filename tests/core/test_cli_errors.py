"""The console entry point (issue 19): the command-line library's own input errors - a bad
option value such as ``--workers 0``, an unknown option, a missing argument - are one
``error:`` line and exit 2 like ours, never a box or a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from clustertwin.cli import main

EXAMPLE = "examples/default.yaml"


@pytest.mark.parametrize("argv", [
    ["sweep", EXAMPLE, "--set", "cluster.gpus=1024", "--workers", "0"],
    ["plan", "--bogus"],
    ["export", "slurm", EXAMPLE, "--naming"],
    ["schedule", "--load", "abc"],
    ["nosuchcommand"],
])
def test_click_errors_are_one_line_exit_2(argv, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["clustertwin", *argv])
    with pytest.raises(SystemExit) as info:
        main()
    err = capsys.readouterr().err
    assert info.value.code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err


def test_help_and_success_still_exit_0(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["clustertwin", "--help"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 0 and "Usage" in capsys.readouterr().out


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_output_the_system_refuses_is_one_line_exit_1():
    """A full disk under the output (``> /dev/full``): one ``error:`` line, exit 1, no
    traceback, and no second complaint when the interpreter flushes on its way out."""
    import subprocess

    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "clustertwin", "plan", "--json"], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=300)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1, r.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
