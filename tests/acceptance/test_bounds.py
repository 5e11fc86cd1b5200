"""Measured values within physics (issue 19): rows beyond the catalog's GPU peak, NVLink + NIC
line rate, the design's node names or GPU indices are rejected, counted and named in
check.json, and never graded."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from clustertwin.acceptance.synthetic import dcgm_doc, nccl_log
from clustertwin.cli import app

runner = CliRunner()
HEAD = "node,gpu,serial,tflops,max_temp_c,errors\n"


@pytest.fixture(scope="module")
def limits(small, catalog):
    from clustertwin.acceptance.bounds import limits_for

    return limits_for(small, catalog)


def test_limits_come_from_the_catalog_and_the_design(limits, catalog, nodes):
    h100 = catalog.gpu("h100-sxm-80gb")
    assert limits.peak_tflops["bf16"] == h100.peak_tflops["bf16"]
    assert limits.gpus_per_node == 8 and set(nodes) <= limits.nodes
    # 900 GB/s NVLink + 8 x 400 Gb/s NICs shared by 8 GPUs, both directions: 1000 GB/s, + 5 %
    assert limits.busbw_gbps == pytest.approx(1000 * 1.05)


def _check(small_file, tmp_path, *args):
    out = tmp_path / "c"
    r = runner.invoke(app, ["check", str(small_file), *map(str, args), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return json.loads((out / "check.json").read_text())


def test_burnin_rows_beyond_physics_are_rejected_named_and_not_graded(small_file, tmp_path, limits):
    rows = ["gpu0001,0,s0,740,70,0",          # healthy
            "gpu0001,1,s1,1e308,70,0",        # faster than any H100
            "gpu0002,100000000000000000000,s3,740,70,0",   # GPU index 1e20
            "gpu0002,8,s4,740,70,0",          # GPU index past 8 per node
            "nosuchnode,0,s5,740,70,0",       # not a node of the design
            "gpu0003,0,s6,740,1e9,0"]         # temperature
    f = tmp_path / "b.csv"
    f.write_text(HEAD + "\n".join(rows) + "\n")
    doc = _check(small_file, tmp_path, "--burnin", f)
    imp = next(i for i in doc["imports"] if i["source"] == str(f))
    oob = imp["out_of_bounds"]
    assert len(oob) == 5  # every bad row, named
    assert any("1e+308 TFLOP/s" in x for x in oob) and any("'nosuchnode'" in x for x in oob)
    assert any("GPU index 4611686018427387904" in x for x in oob)
    assert sum(v for k, v in imp["reasons"].items() if k.startswith("outside physical")) == 5
    graded = {(s["node"], s["gpu"]) for s in doc["stragglers"]}
    assert ("gpu0001", 1) not in graded and "nosuchnode" not in doc["nodes"]
    assert doc["measured"]["gemm_ratio"] is not None  # the healthy row is still graded


def test_nccl_run_beyond_link_rates_is_rejected(small_file, tmp_path, limits):
    fast = tmp_path / "nccl-fast.txt"
    fast.write_text(nccl_log(["gpu0001", "gpu0002"], 8, 1e308 / 1e9))
    ok = tmp_path / "nccl-ok.txt"
    ok.write_text(nccl_log(["gpu0001", "gpu0002"], 8, 100.0))
    doc = _check(small_file, tmp_path, "--nccl", fast, "--nccl", ok)
    assert len(doc["nccl"]) == 1 and doc["nccl"][0]["source"] == str(ok)
    imp = next(i for i in doc["imports"] if i["source"] == str(fast))
    assert imp["rows_rejected"] >= 1 and "GB/s" in imp["out_of_bounds"][0]


def test_dcgm_of_an_unknown_node_or_gpu_index_is_rejected(small_file, tmp_path):
    from clustertwin.acceptance.importers.dcgm import load

    stranger = tmp_path / "dcgm-stranger.json"
    stranger.write_text(dcgm_doc(8, [f"s{i}" for i in range(8)], {3: "Fail"}))
    good = tmp_path / "dcgm-gpu0004.json"
    good.write_text(dcgm_doc(8, [f"s{i}" for i in range(8)]))
    doc = _check(small_file, tmp_path, "--dcgm", stranger, "--dcgm", good)
    assert [d["node"] for d in doc["dcgm"]] == ["gpu0004"]
    assert "stranger" not in doc["nodes"] and "stranger" not in doc["drain"]
    imp = next(i for i in doc["imports"] if i["source"] == str(stranger))
    assert "not a node of the design" in imp["out_of_bounds"][0]
    run, _ = load(good)
    assert set(run.gpu_status) == set(range(8))


def test_bound_dcgm_drops_gpu_indices_past_the_node(limits):
    import dataclasses

    from clustertwin.acceptance.bounds import bound_dcgm
    from clustertwin.acceptance.importers.dcgm import DcgmRun

    run = DcgmRun("x.json", "gpu0001", "3.x", "3.0", {0: "pass", 7: "fail", 99: "fail"},
                  ((99, "memory", "fail", "DBE"),), {0: "a", 99: "b"})
    reports: list[dict] = []
    out = bound_dcgm(run, limits, reports)
    assert set(out.gpu_status) == {0, 7} and out.findings == () and set(out.serials) == {0}
    assert reports[0]["rows_rejected"] == 1 and "GPU index 99" in reports[0]["out_of_bounds"][0]
    clean = dataclasses.replace(run, gpu_status={0: "pass"}, findings=(), serials={})
    assert bound_dcgm(clean, limits, []) is clean
