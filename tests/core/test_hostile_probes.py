"""Issue 19 follow-up: a hostile or unlucky user's probes against every command. Each case is
what a user could type; each must end in one ``error:`` line per problem and exit 2 - never a
traceback, a hang, a 10^17-day answer or a 100 GiB allocation."""

from __future__ import annotations

import sys

import pytest
import yaml

from clustertwin.cli import main

SMALL = {
    "schema_version": 1,
    "name": "small",
    "model": {"preset": "llama3-8b"},
    "training": {"tokens": 1.0e11, "seq_len": 8192, "global_batch_tokens": 4194304,
                 "precision": "bf16", "parallelism": "auto"},
    "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": 64,
                "fabric": {"technology": "ib-ndr", "topology": "rail-optimized-fat-tree",
                           "oversubscription": 1.0}},
}


def scenario(tmp_path, **sections) -> str:
    doc = {**SMALL, **sections}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return str(path)


def run_cli(argv, monkeypatch, capsys) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["clustertwin", *argv])
    with pytest.raises(SystemExit) as info:
        main()
    out, err = capsys.readouterr()
    return info.value.code, out, err


def assert_refused(rc, err, *words):
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("warning:")]
    assert rc == 2, err
    assert lines and all(ln.startswith("error: ") for ln in lines), err
    assert "Traceback" not in err
    for w in words:
        assert w in err, err


# --- build-out what-ifs: huge, NaN and infinite values (before: OverflowError traceback for
# crews=nan/1e308, a go-live 1.8e17 days out for gpus=1e20, 145 GiB for --samples 1e8) ---
@pytest.mark.parametrize("what_if, key", [
    ("crews=nan", "crews"),
    ("crews=inf", "crews"),
    ("crews=1e308", "crews"),
    ("crews=x0.0000001", "crews"),
    ("gpus=1e12", "gpus"),
    ("gpus=99999999999999999999", "gpus"),
    ("gpu_lead_time_days=99999999999999", "gpu_lead_time_days"),
    ("gpu_lead_time_days=x99999999999", "gpu_lead_time_days"),
    ("step.1.days=1/2/99999999999999", "step.1.days"),
    ("step.1.likely=+99999999999999", "step.1.likely"),
    ("no_such_key=1", "no_such_key"),
])
def test_buildout_what_if_out_of_range(what_if, key, tmp_path, monkeypatch, capsys):
    rc, _, err = run_cli(["buildout", scenario(tmp_path), "-w", what_if, "--samples", "50"],
                         monkeypatch, capsys)
    assert_refused(rc, err, "--what-if", key)


def test_buildout_samples_bounded(tmp_path, monkeypatch, capsys):
    rc, _, err = run_cli(["buildout", scenario(tmp_path), "--samples", "100000000"], monkeypatch, capsys)
    assert_refused(rc, err, "--samples")


@pytest.mark.parametrize("value", ["99999999999999", 99999999999999, "x1e9", "x999", "1/2/1e12", "+1e400"])
def test_scenario_lead_time_out_of_range(value, tmp_path, monkeypatch, capsys):
    path = scenario(tmp_path, buildout={"lead_times": {"gpu_lead_time_days": value}})
    rc, _, err = run_cli(["validate", path], monkeypatch, capsys)
    assert_refused(rc, err, "buildout.lead_times.gpu_lead_time_days")


def test_scenario_lead_time_at_the_bound_still_plans(tmp_path, monkeypatch, capsys):
    path = scenario(tmp_path, buildout={"lead_times": {"gpu_lead_time_days": "+36500"}})
    rc, out, err = run_cli(["buildout", path, "--samples", "50", "--json"], monkeypatch, capsys)
    assert rc == 0, err


# --- a user's --catalog folder: implausible figures and a duplicate id (before: a 1e308 W GPU,
# a 1e308 TFLOP/s peak or two entries with one id were accepted without a word) ---
def _h100() -> dict:
    from clustertwin.catalog.loader import DATA_DIR

    gpus = yaml.safe_load((DATA_DIR / "gpus.yaml").read_text(encoding="utf-8"))["gpu"]
    return next(g for g in gpus if g["id"] == "h100-sxm-80gb")


@pytest.mark.parametrize("change, key", [
    ({"tdp_w": 1e308}, "tdp_w"),
    ({"peak_tflops": {"bf16": 1e308}}, "peak_tflops"),
    ({"achieved_tflops": {"bf16": 1e300}}, "achieved_tflops"),
    ({"hbm_gib": 1e308}, "hbm_gib"),
    ({"hbm_tb_per_s": 1e12}, "hbm_tb_per_s"),
    ({"nvlink_gb_per_s": 1e308}, "nvlink_gb_per_s"),
    ({"hbm_gib": float("nan")}, "hbm_gib"),
    ({"tdp_w": float("inf")}, "tdp_w"),
])
def test_user_catalog_figure_out_of_range(change, key, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "cat"
    folder.mkdir()
    (folder / "gpus.yaml").write_text(yaml.safe_dump({"gpu": [{**_h100(), **change}]}), encoding="utf-8")
    rc, _, err = run_cli(["validate", scenario(tmp_path), "--catalog", str(folder)], monkeypatch, capsys)
    assert_refused(rc, err, "gpus.yaml", key)


def test_user_catalog_duplicate_id(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "cat"
    folder.mkdir()
    (folder / "a.yaml").write_text(yaml.safe_dump({"gpu": [_h100()]}), encoding="utf-8")
    (folder / "b.yaml").write_text(yaml.safe_dump({"gpu": [{**_h100(), "tdp_w": 600}]}), encoding="utf-8")
    rc, _, err = run_cli(["validate", scenario(tmp_path), "--catalog", str(folder)], monkeypatch, capsys)
    assert_refused(rc, err, "b.yaml", "h100-sxm-80gb", "duplicate id")


def test_user_catalog_override_of_a_builtin_id_still_works(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "cat"
    folder.mkdir()
    (folder / "a.yaml").write_text(yaml.safe_dump({"gpu": [{**_h100(), "tdp_w": 600}]}), encoding="utf-8")
    rc, _, err = run_cli(["validate", scenario(tmp_path), "--catalog", str(folder)], monkeypatch, capsys)
    assert rc == 0, err


# --- plan --measured with a hand-edited check.json (before: a node listed 1000 times drained
# 1000 nodes; `true` passed as a ratio of 1) ---
@pytest.mark.parametrize("measured, key", [
    ({"gemm_ratio": True}, "measured.gemm_ratio"),
    ({"gemm_ratio": 1e308}, "measured.gemm_ratio"),
    ({"drained_nodes": ["gpu0001"] * 1000}, "measured.drained_nodes"),
    ({"drained_nodes": [1, 2]}, "measured.drained_nodes"),
    ({"drained_nodes": "gpu0001"}, "measured.drained_nodes"),
])
def test_plan_measured_hand_edited(measured, key, tmp_path, monkeypatch, capsys):
    import json

    check = tmp_path / "check.json"
    check.write_text(json.dumps({"measured": {"gemm_ratio": 0.95, "nvlink_ratio": None,
                                              "fabric_ratio": None, "drained_nodes": [], **measured}}))
    rc, _, err = run_cli(["plan", scenario(tmp_path), "--measured", str(check)], monkeypatch, capsys)
    assert_refused(rc, err, key)


# --- sweep: a key given twice on the command line, an empty --objective, two study cases with
# one name (before: the second --set silently replaced the first; '' meant the default
# objective; two rows named alike could not be told apart) ---
@pytest.mark.parametrize("extra, words", [
    (["--set", "cluster.gpus=8", "--set", "cluster.gpus=16"], ["--set", "cluster.gpus", "twice"]),
    (["--set", "cluster.gpus=8", "--range", "cluster.gpus=16:32:8"], ["--range", "cluster.gpus", "twice"]),
    (["--objective", ""], ["--objective"]),
])
def test_sweep_options_ambiguous(extra, words, tmp_path, monkeypatch, capsys):
    rc, _, err = run_cli(["sweep", scenario(tmp_path), "--out", str(tmp_path / "o"), *extra],
                         monkeypatch, capsys)
    assert_refused(rc, err, *words)
    assert not (tmp_path / "o").exists()


def test_study_duplicate_case_names(tmp_path, monkeypatch, capsys):
    scenario(tmp_path)
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump({"study": "t", "base": "s.yaml", "cases": [
        {"name": "a", "set": {"cluster.gpus": 8}}, {"name": "a", "set": {"cluster.gpus": 16}}]}))
    rc, _, err = run_cli(["sweep", str(study), "--out", str(tmp_path / "o")], monkeypatch, capsys)
    assert_refused(rc, err, "study.yaml", "cases", "'a'")


# --- calibration --csv with a hand-made table (before: tracebacks for binary files, tp=0,
# one-source --cv, NaN; "nan%" summaries; exit 0 with an empty table) ---
def _calibration_table(tmp_path, **cells) -> str:
    import csv
    import io

    from clustertwin.perf.calibration import find_csv

    with open(find_csv(), newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    rows[0].update(cells)
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows[:1])
    path = tmp_path / "cal.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("cells, key", [
    ({"measured_value": "nan"}, "measured_value"),
    ({"measured_value": "inf"}, "measured_value"),
    ({"measured_value": "-5"}, "measured_value"),
    ({"measured_value": "1e308"}, "measured_value"),
    ({"gpus": "0"}, "gpus"),
    ({"gpus": "99999999999999"}, "gpus"),
    ({"tp": "0"}, "tp"),
    ({"tp": "nan"}, "tp"),
    ({"layers": "0"}, "layers"),
    ({"hidden": "999999999999"}, "hidden"),
    ({"seq_len": "1e308"}, "seq_len"),
    ({"id": "a\nb"}, "id"),
    ({"gpu": "h100\n$(id)"}, "gpu"),
    ({"layers": ""}, "layers"),
])
@pytest.mark.parametrize("cv", [False, True])
def test_calibration_csv_bad_cell(cells, key, cv, tmp_path, monkeypatch, capsys):
    path = _calibration_table(tmp_path, **cells)
    rc, _, err = run_cli(["calibration", "--csv", path, *(["--cv"] if cv else [])], monkeypatch, capsys)
    assert_refused(rc, err, "cal.csv", key)


@pytest.mark.parametrize("content", [b"", b"id,source\n", bytes(range(256)), "caf\xe9".encode("latin-1")])
@pytest.mark.parametrize("cv", [False, True])
def test_calibration_csv_not_a_table(content, cv, tmp_path, monkeypatch, capsys):
    path = tmp_path / "cal.csv"
    path.write_bytes(content)
    rc, _, err = run_cli(["calibration", "--csv", str(path), *(["--cv"] if cv else [])], monkeypatch, capsys)
    assert_refused(rc, err, "cal.csv")


def test_calibration_cv_needs_two_sources(tmp_path, monkeypatch, capsys):
    rc, _, err = run_cli(["calibration", "--cv", "--csv", _calibration_table(tmp_path)], monkeypatch, capsys)
    assert_refused(rc, err, "2 sources")


def test_calibration_csv_one_good_row_still_compares(tmp_path, monkeypatch, capsys):
    rc, out, err = run_cli(["calibration", "--json", "--csv", _calibration_table(tmp_path)], monkeypatch, capsys)
    assert rc == 0, err


# --- a scenario name with a form feed or a bidi override into SVG drawings and plan.html
# (before: form feed made floor-plan.svg and rack-elevations.svg ill-formed XML; U+202E was
# written as is, so the name displayed reversed) ---
@pytest.mark.parametrize("name", ["a\x0cb", "admin\u202etxt.exe", "a\u2066b\u2069", "x\x0c\u202e<script>"])
def test_hostile_name_in_svg_and_html(name, tmp_path, monkeypatch, capsys):
    import xml.etree.ElementTree as ET

    doc = {**SMALL, "name": name}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    rc, _, err = run_cli(["export", "all", str(path), "--out", str(tmp_path / "x")], monkeypatch, capsys)
    assert rc == 0, err
    svgs = sorted((tmp_path / "x").glob("*.svg"))
    assert svgs
    for svg in svgs:
        ET.parse(svg)  # well-formed
        text = svg.read_text(encoding="utf-8")
        assert "\u202e" not in text and "\u2066" not in text and "\x0c" not in text


# --- measure --device (before: 'cuda:99999999999999999999' and 'cuda' on a CPU-only PyTorch
# were tracebacks from inside torch) ---
@pytest.mark.parametrize("device", ["cuda:99999999999999999999", "cudax", "cuda:-1", "cuda:999", "cuda\n"])
def test_measure_device_not_there(device, tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch", reason="measure needs PyTorch")
    rc, _, err = run_cli(["measure", scenario(tmp_path), "--tiny", "--steps", "1", "--device", device],
                         monkeypatch, capsys)
    assert_refused(rc, err, "--device")


# --- decision.* keys that contradict each other (before: all accepted; the plan then answered
# a question that cannot be asked: a P90 before its P50, a target before the start) ---
@pytest.mark.parametrize("sections, key", [
    ({"decision": {"target_date": "2028-06-30", "lease": {"ready_days": 300, "ready_days_p90": 10}}},
     "decision.lease"),
    ({"buildout": {"start_date": "2027-01-05"}, "decision": {"target_date": "2020-01-01"}},
     "decision.target_date"),
    ({"decision": {"target_date": "2027-01-05"}}, "decision.target_date"),
    ({"decision": {"residual_frac_per_year": [0.2, 0.9]}}, "decision.residual_frac_per_year"),
    ({"decision": {"size_to_target": True}}, "decision"),
])
def test_decision_contradictions(sections, key, tmp_path, monkeypatch, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({**SMALL, **sections}), encoding="utf-8")
    rc, _, err = run_cli(["validate", str(path)], monkeypatch, capsys)
    assert_refused(rc, err, key)


# --- serve --host '' (before: bound every interface, as an unset $HOST would) ---
@pytest.mark.parametrize("host", ["", "   "])
def test_serve_blank_host_refused(host, monkeypatch, capsys):
    rc, _, err = run_cli(["serve", "--host", host, "--port", "1"], monkeypatch, capsys)
    assert_refused(rc, err, "--host")


@pytest.mark.parametrize("name", ["", "   ", "\t\n", "a" * 201], ids=["empty", "spaces", "ws", "201"])
def test_scenario_name_blank_or_huge_refused(name: str) -> None:
    """A blank name would title every export with nothing; 100,000 characters would fill it."""
    from clustertwin.errors import ScenarioError
    from clustertwin.scenario import scenario_from_dict

    doc = {"name": name, "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": 8}}
    with pytest.raises(ScenarioError, match="name"):
        scenario_from_dict(doc, "n.yaml")
