"""``clustertwin validate`` on study files (issue 36): every example validates (two are study
files); a study's grid points are checked as ``sweep`` checks them, a bad value is one line."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import EXAMPLES


def _validate(*paths: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clustertwin.cli", "validate", *paths],
                          capture_output=True, text=True, timeout=300)


def test_every_example_validates_studies_included() -> None:
    files = sorted(str(p) for p in EXAMPLES.glob("*.yaml"))
    r = _validate(*files)
    assert r.returncode == 0, r.stderr
    studies = [x for x in r.stdout.splitlines() if "a study:" in x]
    assert any("ladder.yaml" in x for x in studies) and any("h100-vs-nvl72.yaml" in x for x in studies)
    assert sum(x.startswith("ok: ") for x in r.stdout.splitlines()) == len(files)


def test_a_bad_grid_value_is_one_line_and_the_other_files_still_checked(tmp_path) -> None:
    bad = tmp_path / "bad-study.yaml"
    bad.write_text("study: bad\ngrid:\n  cluster.gpus: [64, lots]\n")
    r = _validate(str(bad), str(EXAMPLES / "ladder.yaml"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    errs = [x for x in r.stderr.splitlines() if x.startswith("error:")]
    assert len(errs) == 1 and "cluster.gpus" in errs[0] and "lots" in errs[0]
    assert "ladder.yaml (a study" in r.stdout
