"""Scenario schema: accepted documents, defaults, and one clear problem per mistake."""

from __future__ import annotations

import filecmp

import pytest

from clustertwin.errors import ScenarioError
from clustertwin.scenario import DEFAULT_SCENARIO, load_scenario, scenario_from_dict, with_updates
from tests.conftest import EXAMPLES


def problems(doc, catalog) -> list[str]:
    with pytest.raises(ScenarioError) as ei:
        scenario_from_dict(doc, "s.yaml", catalog)
    return ei.value.lines()


def test_default_is_shipped_as_example():
    assert filecmp.cmp(DEFAULT_SCENARIO, EXAMPLES / "default.yaml", shallow=False)


def _scenario_examples():
    """Scenario files only: the sweep studies in examples/ (``study:``) have their own test."""
    import yaml
    return sorted(p for p in EXAMPLES.glob("*.yaml") if "study" not in (yaml.safe_load(p.read_text()) or {}))


@pytest.mark.parametrize("path", _scenario_examples(), ids=lambda p: p.name)
def test_examples_load(path, catalog):
    s = load_scenario(path, catalog)
    assert s.model.layers > 0 and s.training.tokens > 0


def test_default_values(catalog):
    s = load_scenario(None, catalog)
    assert s.model.layers == 126 and s.model.hidden == 16384 and s.model.kv_heads == 8
    assert s.training.tokens == 15.6e12 and isinstance(s.training.tokens, float)
    assert s.training.batch_seqs == 2048 and s.cluster.gpus == 16384
    assert s.reliability.restart_min == 10 and s.economics.cloud_usd_per_gpu_hour == 3.0


@pytest.mark.parametrize("text", ["15.6e12", "1.56e13", "15600000000000", "1.56E+13", "15_600_000_000_000"])
def test_token_numbers_parse(text, catalog, tmp_path):
    src = DEFAULT_SCENARIO.read_text().replace("tokens: 15.6e12", f"tokens: {text}")
    p = tmp_path / "s.yaml"
    p.write_text(src)
    assert load_scenario(p, catalog).training.tokens == pytest.approx(15.6e12)


def test_toml_loads(tmp_path, catalog):
    p = tmp_path / "s.toml"
    p.write_text("""
name = "toml"
[model]
preset = "llama3-8b"
[training]
tokens = 1e12
seq_len = 8192
global_batch_seqs = 512
[cluster]
gpu = "h100-sxm-80gb"
node = "dgx-h100"
gpus = 64
""")
    s = load_scenario(p, catalog)
    assert s.name == "toml" and s.model.layers == 32


def test_explicit_fields_override_preset(doc, catalog):
    doc["model"]["layers"] = 100
    s = scenario_from_dict(doc, "s.yaml", catalog)
    assert s.model.layers == 100 and s.model.hidden == 16384


def test_custom_model_without_preset(doc, catalog):
    doc["model"] = {"layers": 4, "hidden": 1024, "ffn_hidden": 4096, "heads": 16, "vocab": 32000, "mlp": "gelu"}
    s = scenario_from_dict(doc, "s.yaml", catalog)
    assert s.model.kv_heads == 16 and s.model.name == "custom"


@pytest.mark.parametrize(
    "mutate, path, words",
    [
        (lambda d: d["cluster"].update(gpuz=3), "cluster.gpuz", "unknown key"),
        (lambda d: d.update(colour="red"), "colour", "unknown key"),
        (lambda d: d["cluster"].update(gpus=0), "cluster.gpus", "greater than 0"),
        (lambda d: d["cluster"].update(gpus=-8), "cluster.gpus", "greater than 0"),
        (lambda d: d["cluster"].update(gpus=1004), "cluster.gpus", "multiple of the 8"),
        (lambda d: d["cluster"].update(gpus="many"), "cluster.gpus", "integer"),
        (lambda d: d["cluster"].update(gpu="h100"), "cluster.gpu", "did you mean"),
        (lambda d: d["cluster"].update(node="dgx-h1000"), "cluster.node", "did you mean dgx-h100"),
        (lambda d: d["cluster"]["fabric"].update(technology="ib-nd"), "cluster.fabric.technology", "did you mean"),
        (lambda d: d["cluster"]["fabric"].update(oversubscription=0.5), "cluster.fabric.oversubscription", "greater than or equal to 1"),
        (lambda d: d["model"].update(preset="llama-405b"), "model.preset", "did you mean"),
        (lambda d: d["training"].update(global_batch_seqs=10), "training", "exactly one of global_batch_tokens or global_batch_seqs"),
        (lambda d: d["training"].pop("global_batch_tokens"), "training", "exactly one of global_batch_tokens or global_batch_seqs"),
        (lambda d: d["training"].update(tokens="lots"), "training.tokens", "number"),
        (lambda d: d["training"].update(precision="fp4"), "training.precision", "bf16"),
        (lambda d: d["cluster"].update(deadline_days=30), "cluster", "exactly one of gpus or deadline_days"),
        (lambda d: d["reliability"].update(restart_min=-1), "reliability.restart_min", "greater than or equal to 0"),
        (lambda d: d["reliability"].update(failure_profile="llama3"), "reliability.failure_profile", "unknown failure profile"),
        (lambda d: d["economics"].update(pue=0.9), "economics.pue", "at least 1.0"),
        (lambda d: d["training"].update(parallelism={"tp": 0}), "training.parallelism.tp", "greater than 0"),
        (lambda d: d["training"].update(parallelism={"recompute": "some"}), "training.parallelism.recompute", "selective"),
        (lambda d: d["buildout"].update(start_date="next year"), "buildout.start_date", "date"),
        (lambda d: d["model"].update(kv_heads=7), "model.kv_heads", "multiple of kv_heads"),
        (lambda d: d.pop("cluster"), "cluster", "required"),
    ],
)
def test_mistakes_name_file_key_and_expectation(doc, catalog, mutate, path, words):
    mutate(doc)
    lines = problems(doc, catalog)
    assert any(line.startswith(f"s.yaml: {path}") and words in line for line in lines), lines


def test_several_problems_reported_together(doc, catalog):
    doc["cluster"]["gpu"] = "nope"
    doc["training"]["seq_len"] = 0
    doc["economics"]["pue"] = 0.5
    lines = problems(doc, catalog)
    assert len(lines) == 2 or len(lines) == 3, lines  # schema errors stop before catalog checks
    assert any("training.seq_len" in x for x in lines) and any("economics.pue" in x for x in lines)


def test_malformed_yaml_names_line(tmp_path, catalog):
    p = tmp_path / "bad.yaml"
    p.write_text("model:\n  preset: llama3-8b\n training: [\n")
    with pytest.raises(ScenarioError) as ei:
        load_scenario(p, catalog)
    (line,) = ei.value.lines()
    assert str(p) in line and "line" in line


def test_missing_file(tmp_path, catalog):
    with pytest.raises(ScenarioError, match="file not found"):
        load_scenario(tmp_path / "nope.yaml", catalog)


def test_not_a_mapping(catalog):
    with pytest.raises(ScenarioError, match="mapping"):
        scenario_from_dict(["a", "b"], "s.yaml", catalog)


def test_with_updates_revalidates(catalog):
    s = load_scenario(None, catalog)
    s2 = with_updates(s, cluster={"gpus": 8192})
    assert s2.cluster.gpus == 8192 and s2.model == s.model
    with pytest.raises(ScenarioError):
        with_updates(s, cluster={"gpus": 8191})


def test_scenario_is_frozen(catalog):
    s = load_scenario(None, catalog)
    with pytest.raises(Exception):  # noqa: B017 - pydantic raises ValidationError on frozen assignment
        s.cluster.gpus = 8  # type: ignore[misc]


def test_precision_the_gpu_lacks(doc, catalog):
    doc["cluster"].update(gpu="a100-sxm-80gb", node="dgx-a100", gpus=1024)
    doc["training"]["precision"] = "fp8"
    (line,) = problems(doc, catalog)
    assert line.startswith("s.yaml: training.precision") and "bf16" in line


def test_node_mismatch_lists_nodes_of_that_gpu(doc, catalog):
    doc["cluster"]["gpu"] = "h200"
    (line,) = problems(doc, catalog)
    assert "cluster.node" in line and "hgx-h200" in line


def test_unknown_spine_switch_is_a_scenario_error(doc, catalog):
    doc["cluster"]["fabric"]["spine_switch"] = "arista-7808"
    (line,) = problems(doc, catalog)
    assert line.startswith("s.yaml: cluster.fabric.spine_switch") and "did you mean" in line
