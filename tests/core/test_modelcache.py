"""The validated-data cache of the package's own files (issue 36, cold start): what comes from
an entry is exactly what validation builds, type for type; new content or new code builds
afresh; a damaged or hostile entry is never trusted; a warm cache leaves the catalog's
validators unbuilt."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clustertwin import datacache, modelcache
from clustertwin.buildout import steps as steps_mod
from clustertwin.catalog import loader
from clustertwin.catalog.models import GPU, KINDS
from clustertwin.design import rules as rules_mod


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv(datacache.ENV, str(d))
    return d


def _shape(o):  # noqa: ANN001, ANN202 - the value with every leaf's type, models as their fields
    from pydantic import BaseModel

    if isinstance(o, BaseModel):
        return (type(o), _shape(dict(o.__dict__)), frozenset(o.__pydantic_fields_set__))
    if isinstance(o, dict):
        return {(type(k), k): _shape(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return (type(o), [_shape(v) for v in o])
    return (type(o), o)


def _builders():
    files = list(loader._yaml_files(loader.DATA_DIR))
    steps_file = steps_mod.DATA_DIR / "steps.yaml"
    profiles_file = steps_mod.DATA_DIR / "profiles.yaml"
    return {
        "catalog": (files, lambda: loader._validated(files), (*KINDS.values(), loader._validated)),
        "steps": ([steps_file], lambda: steps_mod._checked_book(steps_mod.read_packaged(steps_file),
                                                                steps_file),
                  (steps_mod.StepBook, steps_mod._checked_book)),
        "profiles": ([profiles_file],
                     lambda: steps_mod._checked_profiles(steps_mod.read_packaged(profiles_file),
                                                         profiles_file),
                     (steps_mod.Profile, steps_mod._checked_profiles)),
        "rules": ([rules_mod.RULES_FILE], rules_mod._validated, (rules_mod.DesignRules, rules_mod._validated)),
    }


@pytest.mark.parametrize("name", ["catalog", "steps", "profiles", "rules"])
def test_cached_data_is_the_validated_data(folder: Path, name: str) -> None:
    files, build, code = _builders()[name]
    fresh = build()
    first = modelcache.load(name, files, build, code)        # built, then stored
    assert len(list(folder.glob(f"{name}-*.models.json"))) == 1
    calls = []
    second = modelcache.load(name, files, lambda: calls.append(1), code)   # from the entry
    assert not calls
    assert first == fresh and second == fresh
    assert _shape(second) == _shape(fresh)


def test_new_content_builds_afresh_and_replaces_the_entry(folder: Path, tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    p.write_text("a: 1\n")
    assert modelcache.load("x", [p], lambda: (1, 2.0, "a"), (GPU,)) == (1, 2.0, "a")
    assert modelcache.load("x", [p], lambda: "unused", (GPU,)) == (1, 2.0, "a")
    p.write_text("a: 2\n")
    assert modelcache.load("x", [p], lambda: {"k": [dt.date(2025, 3, 1)], 3: None}, (GPU,)) == \
        {"k": [dt.date(2025, 3, 1)], 3: None}
    assert len(list(folder.glob("x-*.models.json"))) == 1


def test_the_key_covers_the_validators_modules() -> None:
    names = {m.__name__ for m in modelcache.code_modules((*KINDS.values(), loader._validated))}
    assert {"clustertwin.catalog.models", "clustertwin.catalog.loader", "clustertwin.checked",
            "clustertwin.quoting", "clustertwin.io"} <= names
    assert all(n.startswith("clustertwin") for n in names)


@pytest.mark.parametrize("text", [
    "{not json",
    json.dumps({"$m": "os:system", "f": {}, "s": []}),
    json.dumps({"$m": "clustertwin.catalog.models:KINDS", "f": {}, "s": []}),
    json.dumps({"$m": "clustertwin.not_imported:Thing", "f": {}, "s": []}),
], ids=["damaged", "outside-the-package", "not-a-model", "not-imported"])
def test_a_damaged_or_hostile_entry_is_rebuilt(folder: Path, tmp_path: Path, text: str) -> None:
    p = tmp_path / "x.yaml"
    p.write_text("a: 1\n")
    modelcache.load("x", [p], lambda: [1], (GPU,))
    (entry,) = folder.glob("x-*.models.json")
    entry.write_text(text)
    assert modelcache.load("x", [p], lambda: ["rebuilt"], (GPU,)) == ["rebuilt"]


def test_values_json_cannot_hold_exactly_are_not_cached(folder: Path, tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    p.write_text("a: 1\n")
    for value in ({1, 2}, float("inf"), (GPU,)):
        assert modelcache.load("x", [p], lambda v=value: v, (GPU,)) == value
        assert not list(folder.glob("x-*.models.json"))


def test_caching_off_or_unwritable_only_builds(tmp_path: Path, monkeypatch) -> None:
    p = tmp_path / "x.yaml"
    p.write_text("a: 1\n")
    monkeypatch.setenv(datacache.ENV, "off")
    assert modelcache.load("x", [p], lambda: 5, (GPU,)) == 5
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(datacache.ENV, str(blocker / "sub"))
    assert modelcache.load("x", [p], lambda: 6, (GPU,)) == 6


def test_a_warm_cache_leaves_the_catalog_validators_unbuilt(tmp_path: Path) -> None:
    """The point of the cache: a second process reads the catalog without building any entry
    kind's validator (defer_build), and its figures are the same."""
    code = ("from clustertwin.catalog import load_catalog; from clustertwin.catalog import models as m; "
            "c = load_catalog(); "
            "print(sum(k.__pydantic_complete__ for k in m.KINDS.values()), "
            "c.gpu('h100-sxm-80gb').model_dump_json())")
    env = {**os.environ, datacache.ENV: str(tmp_path / "c")}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                           check=True).stdout.split(" ", 1) for _ in range(2)]
    assert int(runs[0][0]) > 0          # the cold run validated (and so built validators)
    assert int(runs[1][0]) == 0         # the warm run built none
    assert runs[0][1] == runs[1][1]
