"""Outputs that survive (issue 19): a dead writer's temporary files are cleaned on the next
run, concurrent writers to one folder lose no manifest entry, an empty or root ``--out`` is an
error, and a numerical warning is one ``warning:`` line."""

from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clustertwin.errors import UsageError
from clustertwin.outputs import MANIFEST, OutputDir, write_outputs


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temp_files_of_dead_writers_are_removed(tmp_path):
    dead = _dead_pid()
    stale = tmp_path / f".plan.json.{dead}.0123abcd.tmp"
    stale.write_text("half a file")
    live = tmp_path / f".plan.html.{os.getppid()}.0123abcd.tmp"   # a running process: kept
    live.write_text("being written")
    other = tmp_path / ".notes.tmp"                               # not ours: kept
    other.write_text("x")
    link = tmp_path / f".x.{dead}.deadbeef.tmp"                   # a link is never followed
    link.symlink_to(other)
    od = OutputDir(tmp_path, ["plan.json"])
    assert od.cleaned == [stale.name]
    assert not stale.exists() and live.exists() and other.exists() and link.is_symlink()


def _writer(folder: str, prefix: str, n: int) -> None:
    for i in range(n):
        write_outputs(folder, {f"{prefix}{i}.txt": "x"})


def test_concurrent_writers_lose_no_manifest_entry(tmp_path):
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), p, 25)) for p in "abcd"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    listed = set((tmp_path / MANIFEST).read_text().split())
    assert listed == {f"{p}{i}.txt" for p in "abcd" for i in range(25)}
    assert not list(tmp_path.glob(".*.tmp"))


def test_root_is_never_an_output_folder():
    for root in ("/", "/tmp/..", "//"):
        with pytest.raises(UsageError, match="filesystem root"):
            OutputDir(Path(root), ["plan.json"])


@pytest.mark.parametrize("argv", [["--out", ""], ["--out="], ["--out", "  "]])
def test_empty_out_is_an_error(argv, monkeypatch, capsys, tmp_path):
    from clustertwin.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["clustertwin", "export", "slurm", *argv])
    with pytest.raises(SystemExit) as info:
        main()
    err = capsys.readouterr().err.strip().splitlines()
    assert info.value.code == 2 and err == ["error: command line: --out: is empty; give a folder name"]
    assert not list(tmp_path.iterdir())


def test_a_numerical_warning_is_one_line_of_ours(capsys):
    import warnings

    import numpy as np

    from clustertwin.cli.main import _one_line_warnings

    with warnings.catch_warnings():  # restores warnings.showwarning on the way out
        warnings.simplefilter("always")
        _one_line_warnings()
        np.array([1e308]) * 10.0  # noqa: B018 - an overflow warning
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: numerical: overflow")
