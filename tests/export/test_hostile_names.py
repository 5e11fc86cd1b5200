"""A hostile scenario name or catalog GPU name through every exporter (issue 19): each file
keeps the lines, keys and structure it has for a clean name, and ``label-nodes.sh`` passes
``sh -n`` and, run against a stub ``kubectl``, runs nothing else."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
from functools import lru_cache

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustertwin.cli.export import build_files
from clustertwin.export.stage import make_context
from tests.export.helpers import catalog, scenario

BITS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029", "\x00", "\t",
        "\x1b[2J", "$(touch MARK)", "`touch MARK`", "'", '"', "\\", ";", "#", "<script>", "&",
        "{{", "}}", "${HOME}", "\u202e", "\ud800", "SlurmctldHost=evil", "- hosts: evil",
        "groups:", "NodeName=x", "]]>", "é", "K", "a", " ", ": ", "--- ", "!!python/object"]
hostile = st.lists(st.sampled_from(BITS), min_size=1, max_size=10).map("".join)


@lru_cache(maxsize=1)
def _clean():
    ctx = make_context(scenario(64, spare_nodes=1), catalog())
    files, _ = build_files("all", ctx)
    return ctx, files


def _with(ctx, name: str | None = None, gpu_name: str | None = None):
    scen = ctx.scenario.model_copy(update={"name": name}) if name is not None else ctx.scenario
    gpu = ctx.gpu.model_copy(update={"name": gpu_name}) if gpu_name is not None else ctx.gpu
    return dataclasses.replace(ctx, scenario=scen, gpu=gpu)


def _shape(obj):
    """Keys and lengths of a parsed document, without its string values."""
    if isinstance(obj, dict):
        return {k: _shape(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_shape(v) for v in obj]
    return type(obj).__name__


def _directives(text: str) -> list[str]:
    """Slurm-style files: the key of each non-comment line (``NodeName``, ``SwitchName``...)."""
    return [ln.split("=", 1)[0] for ln in text.splitlines() if ln and not ln.startswith("#")]


def _sheets(data: bytes) -> list[tuple[str, int]]:
    import io

    import openpyxl

    wb = openpyxl.load_workbook(io.BytesIO(data))
    return [(ws.title, ws.max_row) for ws in wb.worksheets]


def _check_same_shape(files: dict[str, str], clean: dict[str, str]) -> None:
    assert files.keys() == clean.keys()
    for fname, text in files.items():
        if isinstance(text, bytes):          # bom.xlsx: the same sheets and rows
            assert _sheets(text) == _sheets(clean[fname]), fname
            continue
        text.encode("utf-8")  # writable: no lone surrogate reached a file
        ref = clean[fname]
        assert len(text.splitlines()) == len(ref.splitlines()), fname
        if fname.endswith((".yml", ".yaml")):
            assert [_shape(d) for d in yaml.safe_load_all(text)] == \
                   [_shape(d) for d in yaml.safe_load_all(ref)], fname
        elif fname.endswith(".json"):
            assert _shape(json.loads(text)) == _shape(json.loads(ref)), fname
        elif fname.endswith(".conf"):
            assert _directives(text) == _directives(ref), fname


FEW = settings(max_examples=25, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@FEW
@given(name=hostile, gpu_name=hostile)
def test_hostile_names_leave_every_export_the_same_shape(name, gpu_name):
    ctx, clean = _clean()
    files, _ = build_files("all", _with(ctx, name, gpu_name))
    _check_same_shape(files, clean)


def _run_labels(script: str, tmp_path) -> tuple[list[str], bool]:
    """Run label-nodes.sh with a stub kubectl that records its arguments; (calls, MARK made)."""
    stub = tmp_path / "bin"
    stub.mkdir(exist_ok=True)
    log = tmp_path / "calls"
    log.write_text("")
    (stub / "kubectl").write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    (stub / "kubectl").chmod(0o755)
    path = tmp_path / "label-nodes.sh"
    path.write_text(script)
    sh = shutil.which("sh")
    subprocess.run([sh, "-n", str(path)], check=True)
    env = {"PATH": f"{stub}:{os.environ.get('PATH', '')}", "HOME": str(tmp_path)}
    subprocess.run([sh, str(path)], check=True, cwd=tmp_path, env=env, capture_output=True)
    return log.read_text().splitlines(), (tmp_path / "MARK").exists()


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX sh to run label-nodes.sh")
@pytest.mark.parametrize("evil", ["x\ntouch MARK", "x\u2028touch MARK\n", "x\rtouch MARK",
                                  "$(touch MARK)", "`touch MARK`", "x'; touch MARK; '"])
def test_label_nodes_sh_runs_only_kubectl(evil, tmp_path):
    ctx, clean = _clean()
    files, _ = build_files("kueue", _with(ctx, evil, evil))
    calls, marked = _run_labels(files["label-nodes.sh"], tmp_path)
    assert not marked
    assert len(calls) == len(ctx.inventory.nodes)
    assert all(c.startswith("label node --overwrite gpu") for c in calls)


def test_gpu_product_label_is_a_kubernetes_label_value():
    from clustertwin.export.kueue import gpu_product

    ctx, _ = _clean()
    # a GPU with no GPU-Feature-Discovery label in the catalog: the label comes from its name
    bare = dataclasses.replace(ctx, gpu=ctx.gpu.model_copy(update={"gfd_product": None}))
    for evil in ["NVIDIA H100 $(id)", "--", "é" * 100, "a" * 100, "H100\nSXM"]:
        v = gpu_product(_with(bare, gpu_name=evil))
        assert re.fullmatch(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?", v), v
        assert v
    assert gpu_product(_with(bare, gpu_name="NVIDIA H100 SXM5 80GB")) == "NVIDIA-H100-SXM5-80GB"
    # with one (issue 23), the catalog's label wins over the free-text name
    assert gpu_product(_with(ctx, gpu_name="NVIDIA H100 $(id)")) == "NVIDIA-H100-80GB-HBM3"


@pytest.mark.parametrize("name", ["llama\u0430", "Ｌlama", "é", "x\ny"])
def test_cluster_name_is_ascii(name):
    ctx, _ = _clean()
    out = _with(ctx, name).cluster_name
    assert out.isascii() and re.fullmatch(r"[a-z0-9-]+", out)



@pytest.mark.parametrize("item", ["node=\u212aelvin", "node=gp\u0443", "rack=r\n", "node=a" + "b" * 40,
                                  "node=$(id)", "node=-x"])
def test_naming_prefixes_are_ascii_hostname_labels(item):
    from clustertwin.design.site.naming import parse_naming
    from clustertwin.errors import UsageError

    with pytest.raises(UsageError) as info:
        parse_naming([item])
    (line,) = info.value.lines()
    assert "ASCII" in line or "hyphen" in line


EVIL = "llama\nSlurmctldHost=evil\u2028groups:\r- name: x\x85$(touch MARK)"


@pytest.mark.skipif(shutil.which("promtool") is None,
                    reason="promtool not installed (apt-get install prometheus)")
def test_real_promtool_loads_the_same_rule_groups_with_a_hostile_name(tmp_path):
    from clustertwin.export import prometheus as P

    ctx, clean = _clean()
    files, _ = build_files("prometheus", _with(ctx, EVIL, EVIL))
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    run = subprocess.run(["promtool", "check", "rules", P.RULES_FILE], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    groups = [g["name"] for g in yaml.safe_load(files[P.RULES_FILE])["groups"]]
    assert groups == [g["name"] for g in yaml.safe_load(clean[P.RULES_FILE])["groups"]]


@pytest.mark.skipif(shutil.which("ansible-inventory") is None,
                    reason="ansible-inventory not installed (apt-get install ansible-core)")
def test_real_ansible_inventory_lists_the_same_hosts_with_a_hostile_name(tmp_path):
    ctx, clean = _clean()
    listed = []
    for text in (build_files("ansible", _with(ctx, EVIL))[0]["ansible-inventory.yml"],
                 clean["ansible-inventory.yml"]):
        path = tmp_path / "inv.yml"
        path.write_text(text)
        run = subprocess.run(["ansible-inventory", "-i", str(path), "--list"],
                             capture_output=True, text=True, timeout=120, check=False,
                             env={"ANSIBLE_INVENTORY_UNPARSED_FAILED": "true",
                                  "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
        assert run.returncode == 0, run.stderr
        got = json.loads(run.stdout)
        listed.append(sorted(got["_meta"]["hostvars"]))
    assert listed[0] == listed[1] and "evil" not in " ".join(listed[0])


def test_real_slurmctld_sees_only_our_controller_with_a_hostile_name(tmp_path):
    from clustertwin.export import slurm as S
    from tests.export.slurm_harness import loopback_site, run_ctld, skip_reason

    if skip_reason() is not None:
        pytest.skip(skip_reason())
    ctx, _ = _clean()
    evil = _with(ctx, EVIL, EVIL)
    files = {"slurm.conf": S.slurm_conf(evil, site=loopback_site(tmp_path), topology="tree"),
             "gres.conf": S.gres_conf(evil), "topology.conf": S.topology_tree(evil)}
    assert not any(ln.startswith("SlurmctldHost=evil") for f in files.values()
                   for ln in f.splitlines())
    run = run_ctld(tmp_path, files)
    assert run.up, run.output + run.log[-3000:]
