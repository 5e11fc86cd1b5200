"""Importers reproduce the numbers printed in real and generated tool output (fixture origins in
data/README.md), count rejected rows with reasons, and turn malformed files into UsageError."""

from __future__ import annotations

import json

import numpy as np
import pytest

from clustertwin.acceptance.importers import burnin, dcgm, ibnet, nccl
from clustertwin.errors import UsageError

from .conftest import DATA

# (file, op, ranks, hosts, rows, busbw at the largest size, printed average or None)
NCCL_FIXTURES = [
    ("nccl_a3mega_2x8_h100_all_reduce.txt", "all_reduce", 16, 2, 31, 338.82, 70.742),
    ("nccl_liplus_8xa100_sendrecv_na.txt", "sendrecv", 0, 0, 4, 195.56, None),
    ("nccl_all_reduce_2node.json", "all_reduce", 16, 2, 4, 338.82, 321.357),
    # no rank lines: 16 ranks solved from busbw / algbw = 2(n-1)/n (issue 23)
    ("nccl_all_reduce_old_layout.txt", "all_reduce", 16, 0, 4, 369.41, 232.702),
]


@pytest.mark.parametrize("name,op,ranks,hosts,rows,peak,avg", NCCL_FIXTURES, ids=[f[0] for f in NCCL_FIXTURES])
def test_nccl_fixture_reproduces_printed_figures(name, op, ranks, hosts, rows, peak, avg):
    """Avg bus bandwidth recomputed from the rows matches the printed one within the rounding of
    the table (busbw printed to 0.01 GB/s, the average to 6 significant digits)."""
    run, rep = nccl.load(DATA / name)
    assert (run.op, run.nranks, len(run.hosts), run.size.size) == (op, ranks, hosts, rows)
    assert rep.rows_read == rows and rep.rows_rejected == 0
    assert run.peak()[1] == pytest.approx(peak, abs=0.005)
    if avg is not None:
        assert run.avg_busbw_reported == pytest.approx(avg, abs=1e-9)
        assert run.avg_busbw == pytest.approx(avg, abs=0.006)


def test_nccl_mpirun_prefix_and_failed_flag():
    text = (DATA / "nccl_a3mega_2x8_h100_all_reduce.txt").read_text()
    prefixed = "\n".join(f"[1,0]<stdout>:{line}" for line in text.splitlines())
    prefixed = prefixed.replace("Avg bus bandwidth    : 70.742", "Avg bus bandwidth    : 70.742 FAILED")
    run, rep = nccl.parse_text(prefixed, "prefixed.txt")
    assert run.size.size == 31 and len(run.hosts) == 2
    assert run.avg_busbw == pytest.approx(70.742, abs=0.006)
    assert run.avg_ok is False


def test_nccl_rejects_bad_rows_with_reasons():
    text = (DATA / "nccl_liplus_8xa100_sendrecv_na.txt").read_text()
    text += "  2147483648   536870912  float  sum  -1  11000  nan  nan  0  11000  195  195  0\n"
    text += "  4294967296  1073741824  float  sum  -1  22000  -1.0  -2.0  0  22000  195  195  0\n"
    text += "  8589934592  2147483648  float  sum\n"
    run, rep = nccl.parse_text(text, "x.txt")
    assert run.size.size == 4
    assert rep.rows_read == 7 and rep.rows_rejected == 3
    assert set(rep.reasons) == {"size or busbw not a finite number", "negative bandwidth", "row has 4 columns, the header 13"}


@pytest.mark.parametrize("text,what", [
    ("hello world\n", "no nccl-tests result rows"),
    ('{"results": 5}', "expected a nccl-tests -J document"),
    ('{"results": [', "not valid JSON"),
])
def test_nccl_malformed_files_are_usage_errors(text, what):
    parse = nccl.parse_json if text.startswith("{") else nccl.parse_text
    with pytest.raises(UsageError) as exc:
        parse(text, "bad.txt")
    assert what in str(exc.value) and "bad.txt" in str(exc.value)


def test_dcgm_4x_real_document():
    run, rep = dcgm.load(DATA / "dcgm-spark01.json")
    assert (run.generation, run.version, run.node) == ("4.x", "4.2.3", "spark01")
    assert run.gpu_status == {0: "fail"}
    assert "Persistence mode" in run.findings[0][3]
    assert run.serials == {}  # "<<<NOT_SUPPORTED>>>" is not a serial


def test_dcgm_3x_document_with_banner():
    run, rep = dcgm.load(DATA / "dcgm-gpu0007.json")
    assert (run.generation, run.version, run.node, run.tests) == ("3.x", "3.3.9", "gpu0007", 15)
    assert run.gpu_status == {g: ("fail" if g == 3 else "pass") for g in range(8)}
    assert rep.rows_read == 16 and rep.rows_rejected == 0


def test_dcgm_unknown_status_is_not_a_pass():
    doc = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "x", "tests": [
        {"name": "t", "results": [{"gpu_id": "0", "status": "Inconclusive"}, {"status": "Pass"}]}]}]}}
    run, rep = dcgm.parse(json.dumps(doc), "dcgm-n1.json")
    assert run.gpu_status == {0: "warn"}
    assert rep.rows_rejected == 1 and "result without a GPU id" in rep.reasons


@pytest.mark.parametrize("text", ["[1, 2]", "{\"version\": \"3\"}", "not json"])
def test_dcgm_malformed(text):
    with pytest.raises(UsageError):
        dcgm.parse(text, "dcgm-x.json")


def test_burnin_rows_and_rejections():
    b, rep = burnin.load(DATA / "burnin_small.csv")
    assert len(b) == 5 and rep.rows_read == 10 and rep.rows_rejected == 5
    assert rep.reasons == {"empty field or not a finite number": 3, "negative or fractional value": 1,
                           "duplicate node/gpu": 1}
    assert np.allclose(b.tflops, [741.2, 738.9, 612.4, 744.0, 739.5])


def test_burnin_missing_columns():
    with pytest.raises(UsageError) as exc:
        burnin.parse("node,gpu,tflops\nn1,0,700\n", "b.csv")
    assert "serial" in str(exc.value)


def test_ibnetdiscover_real_excerpt():
    links, rep = ibnet.load(DATA / "ibnet_topograph_leaf_excerpt.out")
    assert rep.rows_read == 41 and rep.rows_rejected == 0 and len(links) == 41
    ends = {lk.key for lk in links}
    assert "a08-p1-dgx-04-c01:mlx5_5|a09-p1-ibleaf-04-04:1" in ends
    assert "a09-p1-ibleaf-04-04:35|a10-p1-ibspine-02:32" in ends
    assert all(lk.gbps == 400.0 for lk in links)


def test_ibnetdiscover_garbage():
    with pytest.raises(UsageError):
        ibnet.parse("this is not a fabric\n", "ib.txt")
    links, rep = ibnet.parse('Switch 65 "S-01" # "leaf1" port 0\n[1] broken line\n', "ib.txt")
    assert rep.rows_rejected == 1 and links == []


@pytest.mark.parametrize("text", ["[" * 100_000, '{"results": [{"size": 1e999999}]}', "\ufeff{"])
def test_hostile_json_is_a_usage_error(text):
    with pytest.raises(UsageError):
        nccl.parse_json(text, "deep.json")
    with pytest.raises(UsageError):
        dcgm.parse(text, "dcgm-deep.json")


def test_burnin_hours_column_grades_short_runs(plan):
    from clustertwin.acceptance.grade import grade_gpus

    text = "node,gpu,serial,tflops,max_temp_c,errors,hours\nn1,0,s0,742,60,0,48\nn1,1,s1,742,60,0,12\nn1,2,s2,742,60,0,\n"
    b, rep = burnin.parse(text, "b.csv")
    g = grade_gpus(b, plan, {})
    assert g.grade.tolist() == ["pass", "warn", "warn"]
    assert "shorter than 48 h" in g.reason[1]


def test_ibnetdiscover_switch_link_read_once_even_from_an_excerpt():
    text = ibnet.render([("leaf-a", "1", "spine-b", "7", 400.0), ("gpu0001", "mlx5_0", "leaf-a", "2", 400.0)])
    links, rep = ibnet.parse(text, "full.out")
    assert sorted(lk.key for lk in links) == ["gpu0001:mlx5_0|leaf-a:2", "leaf-a:1|spine-b:7"]
    assert rep.rows_read == 3  # the switch link is listed from both ends
    # drop each switch's block in turn: the link is still read from the block that remains
    blocks = text.split("\nvendid")
    for keep in range(1, len(blocks)):
        part = blocks[0] + "\nvendid" + blocks[keep]
        seen, _ = ibnet.parse(part, "part.out")
        assert "leaf-a:1|spine-b:7" in {lk.key for lk in seen}


def test_nccl_algo_from_the_echoed_command(plan, model):
    from clustertwin.acceptance.grade import grade_nccl
    from clustertwin.acceptance.synthetic import nccl_log

    ring = plan.find("nvlink_allreduce_ring").expected
    text = "# NCCL_ALGO=Ring all_reduce_perf -b 16G -e 16G -g 8\n" + nccl_log("gpu0001", 8, ring)
    run, _ = nccl.parse_text(text, "ring.txt")
    assert run.algo == "ring"
    assert grade_nccl(run, model, 8)["grade"] == "pass"  # against the ring figure, not NVLS
    nvls_run, _ = nccl.parse_text(nccl_log("gpu0001", 8, ring), "default.txt")
    assert grade_nccl(nvls_run, model, 8)["grade"] == "fail"  # 360 of the 476 NVLS expects


@pytest.mark.parametrize(("name", "kind"), [
    ("nccl_a3mega_2x8_h100_all_reduce.txt", "nccl"), ("nccl_liplus_8xa100_sendrecv_na.txt", "nccl"),
    ("nccl_all_reduce_2node.json", "nccl"), ("nccl_all_reduce_old_layout.txt", "nccl"),
    ("dcgm-gpu0007.json", "dcgm"), ("dcgm-spark01.json", "dcgm"),
    ("ibnet_topograph_leaf_excerpt.out", "ibnet"), ("burnin_small.csv", "burnin")])
def test_content_names_the_tool(name, kind, tmp_path):
    """Each fixture is recognised from its content alone, under any file name."""
    from clustertwin.acceptance.importers.detect import sniff

    assert sniff((DATA / name).read_text()) == kind
    assert sniff("hello\nworld\n") is None and sniff('{"x": 1}') is None


def test_reduce_scatter_and_ranks_come_from_the_table():
    """busbw = algbw x (n-1)/n with a reduction: reduce_scatter on n = 8 ranks."""
    text = ("#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
            " 1048576 32768 float sum -1 50.0 20.00 17.50 0 50.0 20.00 17.50 0\n"
            " 8388608 262144 float sum -1 90.0 93.20 81.55 0 90.0 93.20 81.55 0\n")
    run, rep = nccl.parse_text(text, "results.txt")
    assert (run.op, run.nranks) == ("reduce_scatter", 8) and "recognised" in rep.note
    rooted = text.replace(" sum -1 ", " sum 0 ")
    assert nccl.parse_text(rooted, "results.txt")[0].op == "unknown"
