"""The output layer never writes through links, folders or read-only files, writes atomically,
records a file in the manifest only once it is complete, and turns OS errors into one line."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from clustertwin.errors import UsageError
from clustertwin.outputs import MANIFEST, OutputDir, write_outputs


def _manifest(folder: Path) -> set[str]:
    m = folder / MANIFEST
    return set(m.read_text().split()) if m.exists() else set()


def test_writes_and_records(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper"
    paths = write_outputs(out, {"a.txt": "hello", "b.bin": b"\x00\x01"})
    assert [p.name for p in paths] == ["a.txt", "b.bin"]
    assert (out / "a.txt").read_text() == "hello"
    assert _manifest(out) == {"a.txt", "b.bin"}
    # ours: a second run overwrites without --force
    write_outputs(out, {"a.txt": "again"})
    assert (out / "a.txt").read_text() == "again"
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_foreign_file_needs_force(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("theirs")
    with pytest.raises(UsageError, match="not written by clustertwin"):
        OutputDir(tmp_path, ["a.txt"])
    assert (tmp_path / "a.txt").read_text() == "theirs"
    write_outputs(tmp_path, {"a.txt": "mine"}, force=True)
    assert (tmp_path / "a.txt").read_text() == "mine"


@pytest.mark.parametrize("dangling", [False, True], ids=["live-link", "dangling-link"])
def test_symlink_never_written_through(tmp_path: Path, dangling: bool) -> None:
    victim = tmp_path / "victim.txt"
    if not dangling:
        victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "plan.json").symlink_to(victim)
    # even a manifest claiming the name does not make a link writable
    (out / MANIFEST).write_text("plan.json\n")
    with pytest.raises(UsageError, match="symbolic link"):
        write_outputs(out, {"plan.json": "x"})
    assert victim.exists() == (not dangling)
    if not dangling:
        assert victim.read_text() == "precious"
    # --force replaces the link itself, never its target
    write_outputs(out, {"plan.json": "x"}, force=True)
    assert not (out / "plan.json").is_symlink()
    assert (out / "plan.json").read_text() == "x"
    assert victim.exists() == (not dangling)
    if not dangling:
        assert victim.read_text() == "precious"


def test_directory_refused_even_with_force(tmp_path: Path) -> None:
    (tmp_path / "plan.html").mkdir()
    for force in (False, True):
        with pytest.raises(UsageError, match="is a folder"):
            write_outputs(tmp_path, {"plan.html": "x"}, force=force)
    assert (tmp_path / "plan.html").is_dir()


def test_fifo_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "summary.json")
    with pytest.raises(UsageError, match="not a regular file"):
        write_outputs(tmp_path, {"summary.json": "x"}, force=True)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_file_refused(tmp_path: Path) -> None:
    f = tmp_path / "plan.json"
    f.write_text("keep")
    f.chmod(0o444)
    (tmp_path / MANIFEST).write_text("plan.json\n")
    with pytest.raises(UsageError, match="read-only"):
        write_outputs(tmp_path, {"plan.json": "x"})
    assert f.read_text() == "keep"


def test_read_only_file_refused_any_user(tmp_path: Path) -> None:
    """Checked through os.access, so also meaningful as root: monkeypatch says 'not writable'."""
    f = tmp_path / "plan.json"
    f.write_text("keep")
    (tmp_path / MANIFEST).write_text("plan.json\n")
    real = os.access
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "access", lambda p, m, **k: False if Path(p) == f else real(p, m, **k))
        with pytest.raises(UsageError, match="read-only"):
            write_outputs(tmp_path, {"plan.json": "x"})
    assert f.read_text() == "keep"


def test_out_is_a_file_or_under_a_file(tmp_path: Path) -> None:
    f = tmp_path / "afile"
    f.write_text("x")
    with pytest.raises(UsageError, match="not a folder"):
        OutputDir(f, ["a"])
    with pytest.raises(UsageError) as exc:
        write_outputs(f / "sub", {"a": "x"})
    assert len(exc.value.lines()) == 1


def test_name_too_long(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="too long"):
        write_outputs(tmp_path / ("n" * 300), {"a": "x"})


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_read_only_folder(tmp_path: Path) -> None:
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(UsageError, match="cannot"):
            write_outputs(tmp_path, {"a": "x"})
    finally:
        tmp_path.chmod(0o755)


def test_failed_write_leaves_old_file_and_no_claim(tmp_path: Path) -> None:
    od = OutputDir(tmp_path, ["jobs.parquet"])
    with pytest.raises(RuntimeError), od.staged("jobs.parquet") as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("writer died")
    assert list(tmp_path.iterdir()) == []  # no temp file, no target, no manifest


def test_killed_run_leaves_no_truncated_file_claimed(tmp_path: Path) -> None:
    """A process SIGKILLed half-way through a file of its set: the folder keeps the old set
    (issue 31: all or nothing; the file written before the kill is not moved in either), and
    the next open removes the dead writer's staging folder."""
    (tmp_path / "plan.html").write_text("old complete page")
    (tmp_path / MANIFEST).write_text("plan.html\n")
    code = textwrap.dedent(f"""
        import os, signal
        from clustertwin.outputs import OutputDir
        od = OutputDir({str(tmp_path)!r}, ["plan.json", "plan.html"])
        od.write("plan.json", "{{}}")
        with od.staged("plan.html") as tmp:
            with open(tmp, "w") as fh:
                fh.write("<html>half")
                fh.flush()
                os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", code], check=False)
    assert proc.returncode == -signal.SIGKILL
    assert (tmp_path / "plan.html").read_text() == "old complete page"
    assert _manifest(tmp_path) == {"plan.html"}
    assert not (tmp_path / "plan.json").exists()
    od = OutputDir(tmp_path, ["plan.json", "plan.html"])
    assert len(od.cleaned) == 1 and od.cleaned[0].startswith(".clustertwin-stage.")
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST, "plan.html"]


def test_undeclared_name_is_a_bug(tmp_path: Path) -> None:
    od = OutputDir(tmp_path, ["a"])
    with pytest.raises(ValueError):
        od.write("b", "x")
    with pytest.raises(ValueError):
        OutputDir(tmp_path, ["../escape"])


def test_plan_cli_refuses_symlink(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from clustertwin.cli import app

    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "plan.html").symlink_to(victim)
    res = CliRunner().invoke(app, ["plan", "--out", str(out)])
    assert res.exit_code == 2
    assert "symbolic link" in res.output
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("err", [errno.EACCES, errno.EROFS, errno.ENOSPC], ids=["read-only-folder", "read-only-fs", "disk-full"])
def test_os_errors_one_line_and_nothing_claimed(tmp_path: Path, monkeypatch, err: int) -> None:
    """Simulated for any user (root ignores permissions): the write fails, one line, no target
    file, no temporary file, no manifest entry."""
    real_open = os.open

    def failing_open(path, flags, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        if str(path).endswith(".tmp"):
            raise OSError(err, os.strerror(err), str(path))
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(os, "open", failing_open)
    with pytest.raises(UsageError) as exc:
        write_outputs(tmp_path, {"plan.html": "x"})
    assert len(exc.value.lines()) == 1 and "cannot write" in exc.value.lines()[0]
    assert list(tmp_path.iterdir()) == []
