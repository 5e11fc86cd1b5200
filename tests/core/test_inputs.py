"""The input layer: hostile documents are one ScenarioError line each, never a traceback,
a crash or a hang. Regression cases from the issue-15 fuzzing are pinned here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clustertwin.errors import ScenarioError
from clustertwin.io import parse_text, read_document

BAD_YAML = {
    "duplicate-key": ("a: 1\na: 2", "a", "duplicate key"),
    "timestamp-tag-on-text": ("a: !!timestamp foo", "a", "timestamp"),
    "float-tag-on-text": ("a:\n  b: !!float abc", "a.b", "float"),
    "int-tag-bad-hex": ("a: !!int 0x1g", "a", "int"),
    "int-4301-digits": ("a: " + "9" * 5000, "a", "4,300 digits"),
    "int-over-2^63": ("a: 9223372036854775809", "a", "too large"),
    "denormal-float": ("a: 1e-320", "a", "denormal"),
    "invalid-date": ("start: 2027-02-30", "start", "day is out of range"),
    "nan": ("x: .nan", "x", "finite"),
    "inf-in-list": ("p:\n  q: [1, .inf]", "p.q[1]", "finite"),
    "python-tag": ("a: !!python/object:os.system x", "a", "constructor"),
    "recursive-alias": ("a: &x [*x]", "a[0]", "itself"),
    "binary-garbage": ("a: !!binary xx", "a", "base64"),
}


@pytest.mark.parametrize("text,path,msg", BAD_YAML.values(), ids=BAD_YAML.keys())
def test_bad_yaml_is_one_line_with_key(text: str, path: str, msg: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        parse_text(text, "f.yaml")
    lines = exc.value.lines()
    assert len(lines) == 1
    assert lines[0].startswith(f"f.yaml: {path}: "), lines
    assert msg in lines[0]


@pytest.mark.parametrize("text", ["[" * 30000 + "]" * 30000, "- " * 30000 + "x",
                                  "{a: " * 30000 + "1" + "}" * 30000],
                         ids=["flow-seq-30000", "block-seq-30000", "flow-map-30000"])
def test_deep_nesting_refused_before_the_c_composer(text: str) -> None:
    """Depth 30,000 crashed (SIGSEGV) libyaml's composer; the event scan stops at depth 64."""
    with pytest.raises(ScenarioError, match="nested more than 64"):
        parse_text(text, "deep.yaml")


def test_billion_laughs_refused() -> None:
    lines = ["a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]"]
    prev = "a"
    for name in "bcdefgh":
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
        prev = name
    with pytest.raises(ScenarioError, match="once aliases are expanded"):
        parse_text("\n".join(lines), "laughs.yaml")


def test_yaml_1_1_booleans_stay_text() -> None:
    doc = parse_text("a: yes\nb: no\nc: on\nd: off\ne: true\nf: False\ng: 15.6e12", "f.yaml")
    assert doc == {"a": "yes", "b": "no", "c": "on", "d": "off", "e": True, "f": False,
                   "g": 15.6e12}


@pytest.mark.parametrize("text,msg", [("a = nan", "finite"), ("a = 99999999999999999999999", "too large"),
                                      ("a = " + "[" * 5000 + "]" * 5000, "TOML")],
                         ids=["toml-nan", "toml-huge-int", "toml-deep"])
def test_toml_checked_alike(text: str, msg: str) -> None:
    with pytest.raises(ScenarioError, match=msg) as exc:
        parse_text(text, "f.toml", "toml")
    assert len(exc.value.lines()) == 1


def test_non_regular_and_oversized_files(tmp_path: Path) -> None:
    fifo = tmp_path / "s.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ScenarioError, match="not a regular file"):
        read_document(fifo)  # would block forever if opened
    with pytest.raises(ScenarioError, match="is a folder"):
        read_document(tmp_path)
    big = tmp_path / "big.yaml"
    big.write_text("a: 1\n" * 100)
    with pytest.raises(ScenarioError, match="at most 100 bytes"):
        read_document(big, max_bytes=100)
    bad = tmp_path / "latin.yaml"
    bad.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ScenarioError, match="UTF-8"):
        read_document(bad)


# --------------------------------------------------------------------------- scenario bounds
SCENARIO_BOUNDS = {
    "gpus-near-2^63": ("cluster", "gpus", 2**63 - 8, "cluster.gpus"),
    "gpus-over-max": ("cluster", "gpus", 8 * 1_000_000, "cluster.gpus"),  # > MAX_GPUS
    "hidden-near-2^63": ("model", "hidden", 2**62, "model.hidden"),
    "tokens-1e30": ("training", "tokens", 1e30, "training.tokens"),
    "yes-as-gpus": ("cluster", "gpus", True, "cluster.gpus"),
    "failures-nan": ("reliability", "failures_per_1000_node_days", float("nan"),
                     "reliability.failures_per_1000_node_days"),
    "failures-1e6": ("reliability", "failures_per_1000_node_days", 1e6,
                     "reliability.failures_per_1000_node_days"),
    "repair-1e6-h": ("reliability", "repair_h", 1e6, "reliability.repair_h"),
    "pue-nan": ("economics", "pue", float("nan"), "economics.pue"),
    "pue-inf": ("economics", "pue", float("inf"), "economics.pue"),
    "negative-price": ("economics", "electricity_usd_per_kwh", -0.1, "economics.electricity_usd_per_kwh"),
    "oversubscription-1e300": ("cluster.fabric", "oversubscription", 1e300, "cluster.fabric.oversubscription"),
    "start-year-9999": ("buildout", "start_date", __import__("datetime").date(9999, 12, 1), "buildout.start_date"),
    "deadline-1e-6-days": ("cluster", "deadline_days", 1e-6, "cluster.deadline_days"),
    "trials-1e9": ("reliability", "trials", 10**9, "reliability.trials"),
    "trials-20000": ("reliability", "trials", 20_000, "reliability.trials"),
    "layers-2^40": ("model", "layers", 2**40, "model.layers"),
    "seq-len-2^30": ("training", "seq_len", 2**30, "training.seq_len"),
}


@pytest.mark.parametrize("section,key,value,path", SCENARIO_BOUNDS.values(), ids=SCENARIO_BOUNDS.keys())
def test_scenario_bounds(doc: dict, catalog, section: str, key: str, value, path: str) -> None:
    from clustertwin.scenario import scenario_from_dict

    target = doc
    for part in section.split("."):
        target = target.setdefault(part, {})
    target[key] = value
    if key == "deadline_days":
        doc["cluster"].pop("gpus")
    with pytest.raises(ScenarioError) as exc:
        scenario_from_dict(doc, "s.yaml", catalog)
    assert any(line.startswith(f"s.yaml: {path}") for line in exc.value.lines()), exc.value.lines()


def test_trials_times_gpus_budget(doc: dict, catalog) -> None:
    """9,000 trials on 131,072 GPUs (past 2**29 trial-GPUs, GPUs counted up to STRETCH_GPUS)
    would run the Monte Carlo for minutes."""
    from clustertwin.scenario import MAX_TRIAL_GPUS, STRETCH_GPUS, scenario_from_dict

    doc["cluster"]["gpus"] = 131_072
    doc["reliability"]["trials"] = 9_000
    with pytest.raises(ScenarioError, match=f"at most {MAX_TRIAL_GPUS // STRETCH_GPUS:,} trials"):
        scenario_from_dict(doc, "s.yaml", catalog)


def test_validate_and_plan_share_bounds(tmp_path: Path) -> None:
    """Both commands load through scenario.load_scenario: same refusal, exit 2, one line."""
    from typer.testing import CliRunner

    from clustertwin.cli import app
    from clustertwin.scenario import DEFAULT_SCENARIO

    bad = tmp_path / "s.yaml"
    bad.write_text(DEFAULT_SCENARIO.read_text().replace("restart_min: 10", "restart_min: 10\n  repair_h: 1e6"))
    for cmd in (["validate", str(bad)], ["plan", str(bad), "--json"]):
        res = CliRunner().invoke(app, cmd)
        assert res.exit_code == 2, res.output
        assert "reliability.repair_h" in res.output and "Traceback" not in res.output


# --------------------------------------------------------------------------- catalog overrides
GPU_OVERRIDE = """gpu:
  - id: h100-sxm-80gb
    name: override
    source: test
    as_of: "2024"
    vendor: nvidia
    generation: hopper
    form: sxm
    peak_tflops: {bf16: 989, fp16: 989, fp8: 1979}
    hbm_gib: 80
    hbm_tb_per_s: 3.35
    nvlink_gb_per_s: 900
    tdp_w: 700
    price_usd: 30000
"""
CATALOG_BAD = {
    "inf-peak": ("bf16: 989,", "bf16: .inf,", "peak_tflops.bf16"),
    "zero-nvlink": ("nvlink_gb_per_s: 900", "nvlink_gb_per_s: 0", "nvlink_gb_per_s"),
    "negative-price": ("price_usd: 30000", "price_usd: -1", "price_usd"),
    "bool-hbm": ("hbm_gib: 80", "hbm_gib: true", "hbm_gib"),
}


@pytest.mark.parametrize("old,new,key", CATALOG_BAD.values(), ids=CATALOG_BAD.keys())
def test_catalog_override_refused(tmp_path: Path, old: str, new: str, key: str) -> None:
    from clustertwin.catalog import load_catalog

    (tmp_path / "gpu.yaml").write_text(GPU_OVERRIDE.replace(old, new))
    with pytest.raises(ScenarioError, match=key.replace(".", r"\.")):
        load_catalog([tmp_path])


def test_catalog_good_override_loads(tmp_path: Path) -> None:
    from clustertwin.catalog import load_catalog

    (tmp_path / "gpu.yaml").write_text(GPU_OVERRIDE)
    assert load_catalog([tmp_path]).gpu("h100-sxm-80gb").name == "override"


@pytest.mark.parametrize("doc_text,key", [
    ("costs:\n  - id: c\n    name: c\n    source: s\n    as_of: '2025'\n    items:\n      x: {value: -1, unit: usd, source: s, as_of: '2025'}\n", "items.x.value"),
    ("perf_calibration:\n  - id: p\n    name: p\n    source: s\n    as_of: '2025'\n    scope: fabric\n    applies_to: ib\n    constants: {a: .nan}\n", "constants.a"),
], ids=["negative-cost", "nan-calibration-constant"])
def test_catalog_costs_and_constants(tmp_path: Path, doc_text: str, key: str) -> None:
    from clustertwin.catalog import load_catalog

    (tmp_path / "x.yaml").write_text(doc_text)
    with pytest.raises(ScenarioError, match=key.replace(".", r"\.")):
        load_catalog([tmp_path])


def test_bad_numbers_and_schema_problems_are_reported_in_one_pass(tmp_path, catalog):
    """A NaN, an infinity, a GPU count past the bound and a bad precision: four lines at once,
    the same in validate and plan (issue 11: all problems in one pass)."""
    from clustertwin.errors import ScenarioError
    from clustertwin.scenario import load_scenario

    f = tmp_path / "multi.yaml"
    f.write_text(
        "schema_version: 1\nname: x\nmodel: {preset: llama3-8b}\n"
        "training: {tokens: 1e12, seq_len: 8192, global_batch_seqs: 64, precision: fp9}\n"
        "cluster: {gpu: h100-sxm-80gb, node: dgx-h100, gpus: 9223372036854775807}\n"
        "reliability: {failures_per_1000_node_days: .nan}\neconomics: {pue: .inf}\n")
    with pytest.raises(ScenarioError) as ei:
        load_scenario(f, catalog)
    keys = sorted(p.path for p in ei.value.problems)
    assert keys == ["cluster.gpus", "economics.pue", "reliability.failures_per_1000_node_days",
                    "training.precision"]
