"""The commands: acceptance (plan), check (health report) and plan --measured; bad files get
one line per problem and exit 2, never a traceback."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from clustertwin.acceptance.synthetic import Plants, nccl_log, synthesize
from clustertwin.cli import app

runner = CliRunner()


def test_acceptance_json_and_files(small_file, tmp_path):
    r = runner.invoke(app, ["acceptance", str(small_file), "--json", "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["nodes"] == 64 and doc["dcgm_level"] == 3
    ids = {t["id"] for t in doc["tests"]}
    assert {"gemm_bf16", "gemm_fp8", "hbm_bandwidth", "nvlink_allreduce_nvls", "nic_gpudirect",
            "all_reduce@2 nodes@8G", "alltoall@one SU@1M", "all_gather@whole cluster@1G"} <= ids
    cmds = (tmp_path / "a" / "acceptance-commands.txt").read_text()
    assert "dcgmi diag -r 3 -j" in cmds and "alltoall_perf" in cmds


@pytest.fixture(scope="module")
def measured_dir(tmp_path_factory, plan, model, nodes, designed):
    d = tmp_path_factory.mktemp("measured")
    meas = synthesize(model, plan, nodes, designed, Plants(slow_gpus=(("gpu0005", 4),), bad_links=(3,)), seed=7)
    (d / "burnin.csv").write_text(meas.burnin_csv)
    (d / "ib.out").write_text(meas.ibnet)
    for n in nodes[:4]:
        (d / f"dcgm-{n}.json").write_text(meas.dcgm[n])
        (d / f"nccl-{n}.txt").write_text(meas.nccl[n])
    # a 2-node all_reduce 10% below what the model expects: the fabric ratio check.json carries
    exp = plan.find("all_reduce@2 nodes@8G")
    two = nccl_log(["gpu0001", "gpu0002"], 8, exp.expected * 0.9, size=exp.size_bytes)
    (d / "nccl-2node.txt").write_text(two)
    return d


def test_check_writes_report_with_log_figures(small_file, measured_dir, tmp_path):
    d = measured_dir
    args = ["check", str(small_file), "--burnin", str(d / "burnin.csv"), "--ibnet", str(d / "ib.out"),
            "--out", str(tmp_path / "c")]
    for f in sorted(d.glob("dcgm-*.json")):
        args += ["--dcgm", str(f)]
    for f in sorted(d.glob("nccl-*.txt")):
        args += ["--nccl", str(f)]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "c" / "check.json").read_text())
    assert all("avg_busbw_gbps" in x for x in doc["nccl"])
    two = next(x for x in doc["nccl"] if x["gpus"] == 16)
    assert two["ratio"] == pytest.approx(0.9, abs=0.002)
    assert doc["measured"]["fabric_ratio"] == pytest.approx(0.9, abs=0.002)
    assert doc["drain"] == ["gpu0005"]
    assert any("re-seat" in a for a in doc["actions"])
    assert {s["serial"] for s in doc["stragglers"]} and doc["stragglers"][0]["node"] == "gpu0005"
    html = (tmp_path / "c" / "check.html").read_text()
    assert "drain these 1 node(s): gpu0005" in html and "<script" in html
    assert "bus bandwidth vs message size" in html and len(doc["busbw_curves"]) == len(doc["nccl"])

    r = runner.invoke(app, ["plan", str(small_file), "--measured", str(tmp_path / "c" / "check.json"),
                            "--json", "--out", str(tmp_path / "p")])
    assert r.exit_code == 0, r.output
    plan_doc = json.loads(r.stdout)
    rec = plan_doc["recalibration"]
    assert rec["catalog_plan"]["step_time_s"] < rec["measured_plan"]["step_time_s"]
    assert plan_doc["training"]["step_time_s"] == rec["measured_plan"]["step_time_s"]
    page = (tmp_path / "p" / "plan.html").read_text()
    assert "Catalog plan → measured plan" in page and "step time (s)" in page


@pytest.mark.parametrize("flag,content,what", [
    ("--nccl", "garbage\n", "no nccl-tests result rows"),
    ("--dcgm", "{not json", "not valid JSON"),
    ("--burnin", "a,b\n1,2\n", "header lacks column(s)"),
    ("--ibnet", "nothing here\n", "no 'Switch N"),
])
def test_malformed_file_one_line_exit_2(small_file, tmp_path, flag, content, what):
    bad = tmp_path / "bad.txt"
    bad.write_text(content)
    r = runner.invoke(app, ["check", str(small_file), flag, str(bad)])
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and what in lines[0] and str(bad) in lines[0]
    assert "Traceback" not in r.output


def test_two_bad_files_two_lines(small_file, tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "dcgm-b.json"
    a.write_text("x\n")
    b.write_text("[]")
    r = runner.invoke(app, ["check", str(small_file), "--nccl", str(a), "--dcgm", str(b)])
    assert r.exit_code == 2 and len([x for x in r.output.splitlines() if x.startswith("error")]) == 2


def test_check_needs_a_file(small_file):
    r = runner.invoke(app, ["check", str(small_file)])
    assert r.exit_code == 2 and "at least one of" in r.output


def test_missing_file(small_file, tmp_path):
    r = runner.invoke(app, ["check", str(small_file), "--burnin", str(tmp_path / "nope.csv")])
    assert r.exit_code == 2 and "file not found" in r.output


def test_files_are_read_by_content_and_coverage_is_reported(small_file, measured_dir, tmp_path):
    """Issue 23: an older-layout nccl-tests log named results.txt is recognised (all_reduce on
    16 ranks, from the table) and graded; a DCGM run and an ibnetdiscover output given under
    the wrong options are read as what they are; check.json has a coverage block."""
    import shutil

    from .conftest import DATA

    shutil.copy(DATA / "nccl_all_reduce_old_layout.txt", tmp_path / "results.txt")
    dcgm = sorted(measured_dir.glob("dcgm-*.json"))[0]
    args = ["check", str(small_file), "--nccl", str(tmp_path / "results.txt"),
            "--nccl", str(dcgm), "--burnin", str(measured_dir / "ib.out"),
            "--burnin", str(measured_dir / "burnin.csv"), "--json"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    kinds = {i["source"].rsplit("/", 1)[-1]: (i["given_as"], i["recognised_as"])
             for i in doc["imports"]}
    assert kinds["results.txt"] == ("--nccl", "nccl")
    assert kinds[dcgm.name] == ("--nccl", "dcgm") and kinds["ib.out"] == ("--burnin", "ibnet")
    (run,) = doc["nccl"]
    assert (run["op"], run["nranks"]) == ("all_reduce", 16) and run["grade"] != "untested"
    (curve,) = doc["busbw_curves"]        # measured beside the twin at each message size
    assert curve["size_bytes"] == sorted(curve["size_bytes"]) and len(curve["size_bytes"]) == 4
    assert curve["busbw_gbps"][-1] == pytest.approx(run["busbw_at_largest_gbps"])
    assert curve["expected_gbps"][-1] == pytest.approx(run["expected_gbps"], rel=1e-3)
    assert curve["expected_gbps"][0] < curve["expected_gbps"][-1]   # latency-bound small sizes
    cov = doc["coverage"]
    assert cov["nodes"]["designed"] == 64 and cov["gpus"]["designed"] == 512
    assert cov["nodes"]["by_test"]["dcgm"] == 1 and cov["nodes"]["by_test"]["burnin"] == 64
    assert cov["gpus"]["covered"] == 512 and cov["scalable_units"]["covered"] == 2
    assert "hbm_bandwidth" in cov["tests_without_result"]
    assert "gemm_bf16" not in cov["tests_without_result"]
    assert cov["links"]["designed"] > 0 and cov["rails"]["designed"] == 8
    assert cov["rails"]["covered"] == 8
    # DGX H100's compute adapters as the OS names them (catalog, DGX H100 User Guide Table 6)
    assert list(cov["rails"]["by_adapter"]) == sorted(
        ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"])


def test_an_unrecognised_collective_is_not_reported_as_all_passed(small_file, tmp_path):
    from .conftest import DATA

    text = (DATA / "nccl_all_reduce_old_layout.txt").read_text()
    # a table with no reduction column: all_gather and alltoall look the same, so not graded
    text = text.replace("     sum ", "    none ")
    (tmp_path / "results.txt").write_text(text)
    r = runner.invoke(app, ["check", str(small_file), "--nccl", str(tmp_path / "results.txt")])
    assert r.exit_code == 0, r.output
    assert "could not grade 1 nccl-tests result" in r.output
    assert "every graded node and link passed" not in r.output
