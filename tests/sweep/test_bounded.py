"""Bounded work (issue 19): a sweep's total size is capped before anything runs, and a study's
``base:`` resolves inside the study's folder unless ``--allow-path`` says otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from clustertwin.cli import app
from clustertwin.errors import ScenarioError, UsageError
from clustertwin.sweep.grid import MAX_SCENARIOS, check_size
from clustertwin.sweep.study import load_study

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_total_size_is_capped_before_any_point_is_built(tmp_path, monkeypatch):
    import clustertwin.sweep.grid as grid

    built = []
    monkeypatch.setattr(grid, "apply", lambda *a: built.append(1) or {})
    values = ",".join(str(1024 * i) for i in range(1, 2001))
    prices = ",".join(str(i) for i in range(1, 2001))
    r = runner.invoke(app, ["sweep", str(ROOT / "examples" / "default.yaml"), "--set",
                            f"cluster.gpus={values}", "--set",
                            f"economics.cloud_usd_per_gpu_hour={prices}", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and not built
    assert "4,000,000 scenarios" in r.output and "--max-scenarios" in r.output
    assert not (tmp_path / "o").exists()


def test_check_size_counts_cases_times_axes():
    assert check_size(3, [4, 5], 60) == 60
    with pytest.raises(UsageError, match="61"):
        check_size(61, [], 60)
    assert MAX_SCENARIOS == 10_000


def test_max_scenarios_override(tmp_path):
    r = runner.invoke(app, ["sweep", str(ROOT / "examples" / "default.yaml"), "--set",
                            "economics.cloud_usd_per_gpu_hour=2,3,4", "--max-scenarios", "2",
                            "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "3 scenarios" in r.output
    sw = load_study(ROOT / "examples" / "default.yaml",
                    {"economics.cloud_usd_per_gpu_hour": [2, 3, 4]}, max_points=3)
    assert len(sw.points) == 3


def _study(folder: Path, base: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "study.yaml"
    p.write_text(yaml.safe_dump({"study": "t", "base": base,
                                 "grid": {"economics.cloud_usd_per_gpu_hour": [2.0]}}))
    return p


@pytest.mark.parametrize("base", ["/etc/passwd", "../secret.yaml", "sub/../../secret.yaml"])
def test_study_base_outside_its_folder_is_refused_unread(base, tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: hunter2\napi_key: SECRET-VALUE\n")
    study = _study(tmp_path / "s", base)
    with pytest.raises(ScenarioError) as info:
        load_study(study)
    text = "\n".join(info.value.lines())
    assert "outside the study's folder" in text and "--allow-path" in text
    assert "hunter2" not in text and "SECRET" not in text


def test_study_base_inside_its_folder_or_allowed(tmp_path):
    shutil.copy(ROOT / "examples" / "default.yaml", tmp_path / "default.yaml")
    inside = _study(tmp_path / "s", "base.yaml")
    shutil.copy(ROOT / "examples" / "default.yaml", tmp_path / "s" / "base.yaml")
    assert len(load_study(inside).points) == 1
    outside = _study(tmp_path / "t", "../default.yaml")
    with pytest.raises(ScenarioError):
        load_study(outside)
    assert len(load_study(outside, allow=(tmp_path,)).points) == 1


def test_study_base_symlink_out_of_the_folder_is_refused(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "base.yaml").symlink_to("/etc/passwd")
    with pytest.raises(ScenarioError, match="outside"):
        load_study(_study(tmp_path / "s", "base.yaml"))


def test_examples_studies_still_load():
    for name in ("ladder.yaml", "h100-vs-nvl72.yaml"):
        assert load_study(ROOT / "examples" / name).points
