"""Output sets are all or nothing (issue 31): a run SIGKILLed while it writes leaves the old
set, one killed while it moves its set in leaves a journal the next open finishes, and two
writers to one folder take turns, so the folder always holds one run's whole set and neither
blames "files not written by clustertwin" on the other."""

from __future__ import annotations

import json
import multiprocessing as mp
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from clustertwin.outputs import JOURNAL, MANIFEST, OutputDir, write_outputs

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["a.txt", "b.txt", "c.txt", "d.txt"]


def _contents(folder: Path) -> dict[str, str]:
    return {n: (folder / n).read_text() for n in NAMES if (folder / n).exists()}


def _run_killed(folder: Path, patch: str) -> None:
    """Write the set {name: "new"} over ``folder`` in a child that ``patch`` SIGKILLs."""
    code = ("import os, signal\nimport clustertwin.outputs as o\n" + patch +
            f"\no.write_outputs({str(folder)!r}, {{n: 'new' for n in {NAMES!r}}})\n")
    proc = subprocess.run([sys.executable, "-c", code], check=False)
    assert proc.returncode == -signal.SIGKILL


def test_killed_while_staging_keeps_the_old_set(tmp_path):
    write_outputs(tmp_path, {n: "old" for n in NAMES})
    _run_killed(tmp_path, textwrap.dedent("""
        real, seen = o.OutputDir.write, []
        def write(self, name, data):
            if len(seen) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            seen.append(name)
            return real(self, name, data)
        o.OutputDir.write = write
    """))
    assert _contents(tmp_path) == dict.fromkeys(NAMES, "old")
    od = OutputDir(tmp_path, NAMES)                       # the next open tidies up
    assert od.cleaned and not any(p.name.startswith(".clustertwin-stage") for p in tmp_path.iterdir())
    assert _contents(tmp_path) == dict.fromkeys(NAMES, "old")


def test_killed_while_moving_in_is_finished_by_the_next_open(tmp_path):
    write_outputs(tmp_path, {n: "old" for n in NAMES})
    _run_killed(tmp_path, textwrap.dedent("""
        real, moved = os.replace, []
        def replace(src, dst):
            if ".clustertwin-stage." in str(src) and "part" not in str(src):
                if len(moved) == 2:
                    os.kill(os.getpid(), signal.SIGKILL)
                moved.append(dst)
            return real(src, dst)
        os.replace = replace
    """))
    # killed half-way through the renames: the journal marks the folder as mid-commit
    assert (tmp_path / JOURNAL).exists()
    assert sorted(_contents(tmp_path).values()) == ["new", "new", "old", "old"]
    OutputDir(tmp_path, ["a.txt"])                        # any open rolls the commit forward
    assert _contents(tmp_path) == dict.fromkeys(NAMES, "new")
    assert not (tmp_path / JOURNAL).exists()
    assert set((tmp_path / MANIFEST).read_text().split()) == set(NAMES)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([MANIFEST, *NAMES])


def _set_writer(folder: str, tag: str, n: int, q) -> None:
    import time

    import clustertwin.outputs as o

    real = o.OutputDir.write

    def slow(self, name, data):                           # a slow writer widens every window
        time.sleep(0.002)
        return real(self, name, data)

    o.OutputDir.write = slow
    try:
        for i in range(n):
            write_outputs(folder, {name: f"{tag}{i}" for name in NAMES})
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        q.put(f"{tag}: {exc}")


def test_concurrent_set_writers_take_turns(tmp_path):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_set_writer, args=(str(tmp_path), t, 15, q)) for t in "wxyz"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    errors = [q.get() for _ in range(q.qsize())] if not q.empty() else []
    assert errors == [] and all(p.exitcode == 0 for p in procs)
    final = set(_contents(tmp_path).values())
    assert len(final) == 1 and final.pop().endswith("14")      # one writer's last whole set
    assert set((tmp_path / MANIFEST).read_text().split()) == set(NAMES)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([MANIFEST, *NAMES])


def _scenario(tmp_path: Path, name: str, gpus: int) -> Path:
    doc = {"schema_version": 1, "name": name, "model": {"preset": "llama3-8b"},
           "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_tokens": 2**21},
           "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": gpus,
                       "spare_nodes": 0},
           "reliability": {"trials": 50}}
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def test_two_plans_into_one_folder_leave_one_whole_set(tmp_path):
    """Two real ``plan --out D`` at once: both succeed, and plan.json and plan.html are one
    scenario's pair."""
    out = tmp_path / "out"
    cmds = [[sys.executable, "-m", "clustertwin.cli", "plan", str(_scenario(tmp_path, n, g)),
             "--out", str(out)] for n, g in (("alpha-sixtyfour", 64), ("omega-onetwentyeight", 128))]
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for c in cmds]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    assert not any("not written by clustertwin" in e for e in errs)
    name = json.loads((out / "plan.json").read_text())["scenario"]["name"]
    page = (out / "plan.html").read_text()
    other = {"alpha-sixtyfour": "omega-onetwentyeight", "omega-onetwentyeight": "alpha-sixtyfour"}[name]
    assert name in page and other not in page
    assert sorted(p.name for p in out.iterdir()) == sorted([MANIFEST, "plan.html", "plan.json"])


_KILL_IN_WRITE = """
real, seen = o.OutputDir.write, []
def write(self, name, data):
    if len(seen) == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    seen.append(name)
    return real(self, name, data)
o.OutputDir.write = write
"""
_KILL_IN_MOVE = """
real, moved = os.replace, []
def replace(src, dst):
    if ".clustertwin-stage." in str(src) and "part" not in str(src):
        if len(moved) == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        moved.append(dst)
    return real(src, dst)
os.replace = replace
"""


def _export(scenario: Path, out: Path, patch: str = "") -> int:
    code = ("import os, signal, sys\nimport clustertwin.outputs as o\n" + patch +
            f"\nsys.argv = ['clustertwin', 'export', 'all', {str(scenario)!r}, '--out', {str(out)!r}]"
            "\nfrom clustertwin.cli import main\nmain()\n")
    return subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False, timeout=300).returncode


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.name != MANIFEST and p.is_file()}


def test_export_all_killed_over_an_earlier_export(tmp_path):
    """``export all`` of another scenario SIGKILLed over an earlier export: killed while it
    writes, the earlier set is untouched; killed while it moves its files in, the next open
    finishes the move and the folder is exactly the new export."""
    a, b = _scenario(tmp_path, "alpha-sixtyfour", 64), _scenario(tmp_path, "omega-onetwentyeight", 128)
    out, ref = tmp_path / "out", tmp_path / "ref"
    assert _export(a, out) == 0 and _export(b, ref) == 0
    old, new = _files(out), _files(ref)
    assert old.keys() == new.keys() and old != new
    assert _export(b, out, _KILL_IN_WRITE) == -signal.SIGKILL
    assert {k: v for k, v in _files(out).items() if not k.startswith(".")} == old
    assert _export(b, out, _KILL_IN_MOVE) == -signal.SIGKILL
    assert (out / JOURNAL).exists()
    OutputDir(out, [])
    assert _files(out) == new


def test_a_run_that_fails_before_commit_leaves_the_old_set_and_no_stage(tmp_path):
    import gc

    write_outputs(tmp_path, {n: "old" for n in NAMES})

    def failing_command() -> None:
        od = OutputDir(tmp_path, NAMES)
        od.write("a.txt", "new")
        raise RuntimeError("the command failed after its first file")

    try:
        failing_command()
    except RuntimeError:
        pass
    gc.collect()
    assert _contents(tmp_path) == dict.fromkeys(NAMES, "old")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([MANIFEST, *NAMES])
