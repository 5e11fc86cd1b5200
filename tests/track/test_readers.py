"""The track readers on samples written in each framework's documented format (tests/track/data):
what each line becomes, restarts found, bad lines counted and named, never fatal."""

from __future__ import annotations

import datetime as dt

import pytest

from clustertwin.errors import UsageError
from track.helpers import DATA, read


def _t(text: str) -> float:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC).timestamp()


def test_megatron_recent_lines_restart_and_torn_line():
    h, st, fmt = read(DATA / "megatron.log", seq_len=4096)
    assert fmt == "megatron"
    assert (st.read, st.skipped) == (8, 1)
    assert st.bad[0][0] == 12 and "elapsed time per iteration" in st.bad[0][1]  # the torn line, named
    assert len(h.restarts) == 1
    r = h.restarts[0]
    assert (r.step_before, r.step_after) == (50, 50)
    assert (r.t_before, r.t_after) == (_t("2027-03-01 00:05:05"), _t("2027-03-01 00:41:00"))
    assert len(h.segments) == 2
    assert h.tokens_done == 35840 * 4096  # consumed samples x sequence length
    assert h.step_time() == pytest.approx(6.0, rel=0.01)  # the histogram's bins are 0.9% wide
    assert h.last_loss == pytest.approx(6.789012)
    assert h.n_skipped == 1 and h.bad_steps[0][1] == 70
    assert h.tflops == pytest.approx(410.0, abs=0.2)


def test_megatron_old_lines_dated_from_the_launch_time():
    h, st, _ = read(DATA / "megatron_old.log", seq_len=1024)
    assert (st.read, st.skipped) == (3, 0)
    anchor = _t("2023-07-16 11:34:57")
    # the first logged iteration is 100 steps of 0.2968 s after the launch; then 100 x 0.290 s
    t = h.points[:, 0]
    assert t[0] == pytest.approx(anchor + 100 * 0.2968)
    assert t[1] == pytest.approx(anchor + 100 * 0.2968 + 100 * 0.290)
    assert h.n_skipped == 16
    assert h.tokens_done == 2400 * 1024


def test_megatron_deepspeed_tokens_seconds_and_tflops():
    h, st, _ = read(DATA / "megatron_ds.log")
    assert (st.read, st.skipped) == (2, 0)
    assert st.other == 1  # DeepSpeed's own step line is not an iteration line
    assert h.tokens_done == 629145600  # consumed tokens, not samples x sequence length
    assert h.step_time() == pytest.approx(14.29, rel=0.01)
    assert h.tflops == pytest.approx(69.845)


def test_torchtitan_lines_checkpoint_load_and_bad_loss():
    h, st, fmt = read(DATA / "torchtitan.log", batch_tokens=8 * 8192)
    assert fmt == "torchtitan"
    assert (st.read, st.skipped) == (5, 1)
    assert "loss is not a number" in st.bad[0][1]
    assert len(h.restarts) == 1 and h.restarts[0].step_after == 4
    assert h.tokens_done == 5 * 8 * 8192  # steps x the batch: torchtitan prints no token count
    assert h.mfu == pytest.approx((6.06 + 10.02 + 10.01 + 10.01 + 10.02) / 500)
    assert h.step_time() == pytest.approx(0.32, rel=0.01)  # from the line times


def test_hf_trainer_state_with_times():
    h, st, fmt = read(DATA / "trainer_state.json")
    assert fmt == "hf-state"
    assert (st.read, st.skipped, st.other) == (3, 0, 2)  # the eval entry and the summary are not steps
    assert h.tokens_done == 245760
    assert h.step_time() == pytest.approx(4.0, rel=0.01)  # 40 s per 10 steps, then 60 s per 10
    assert h.end == 1767225700.0


def test_hf_trainer_state_without_times_names_every_entry():
    from clustertwin.track.core import TrackResult  # noqa: F401 - the module imports

    with pytest.raises(UsageError, match="training records with times"):
        read(DATA / "trainer_state_undated.json")


def test_hf_printed_and_json_lines():
    h, st, fmt = read(DATA / "hf_lines.log")
    assert fmt == "hf-lines"
    assert st.read == 2
    assert st.skipped == 3  # two printed dicts without a step, one torn JSON line
    assert sum("no 'step'" in why for _, why in st.bad) == 2
    assert h.end == _t("2026-01-01 00:01:20")


def test_csv_rows():
    h, st, fmt = read(DATA / "progress.csv")
    assert fmt == "csv"
    assert (st.read, st.skipped) == (4, 1)
    assert st.bad[0][0] == 5
    assert h.tokens_done == pytest.approx(1.13246208e10)
    assert h.step_time() == pytest.approx(6.0, rel=0.01)


def test_sacct_allocations_causes_and_nodes():
    from clustertwin.track.slurm import expand_hostlist, read_sacct

    allocs, st = read_sacct(DATA / "job.sacct")
    assert st.read == 2 and st.other == 3  # two steps, one never started
    assert [a.state for a in allocs] == ["NODE_FAIL", "RUNNING"]
    assert allocs[0].cause == "node failure" and allocs[1].cause is None and allocs[1].end is None
    assert allocs[0].nodes == tuple(f"gpu{i:03d}" for i in range(1, 9))
    assert expand_hostlist("gpu[001-007,009]")[-1] == "gpu009"
    assert expand_hostlist("a[8-10]b,c1") == ["a8b", "a9b", "a10b", "c1"]
    # replayed before the node failed: the first allocation is still running, the second not yet
    early, _ = read_sacct(DATA / "job.sacct", as_of=_t("2027-03-01 00:04:00"))
    assert [a.state for a in early] == ["RUNNING"]


def test_sacct_bad_rows_and_header(tmp_path):
    from clustertwin.track.slurm import read_sacct

    p = tmp_path / "x.sacct"
    p.write_text("JobID|State|Start|End|NodeList\n1|FAILED|2027-01-01T00:00:00|2026-01-01T00:00:00|n1\n2|FAILED|x\n")
    allocs, st = read_sacct(p)
    assert allocs == [] and st.skipped == 2
    assert "End is before Start" in st.bad[0][1] and "3 fields" in st.bad[1][1]
    p.write_text("JobID|Start\n1|x\n")
    with pytest.raises(UsageError, match="State"):
        read_sacct(p)


def test_unknown_log_is_one_usage_error(tmp_path):
    from clustertwin.track.detect import open_log

    p = tmp_path / "notes.txt"
    p.write_text("hello\nworld\n")
    with pytest.raises(UsageError, match="a training log"):
        open_log(p)


def test_as_of_drops_later_records():
    h, _, _ = read(DATA / "megatron.log", seq_len=4096, as_of=_t("2027-03-01 00:30:00"))
    assert h.dropped_after == 3 and not h.restarts and h.tokens_done == 25600 * 4096


def test_nemo2_progress_lines_with_a_zoned_prefix():
    h, st, fmt = read(DATA / "nemo2.log", seq_len=8192)
    assert fmt == "megatron" and (st.read, st.skipped) == (3, 0)
    assert h.points[0, 0] == _t("2025-11-20 06:35:22")  # +08:00 read as such, not as UTC
    assert h.tokens_done == 384 * 8192
    assert h.step_time() == pytest.approx(12.22, rel=0.01)
    assert h.last_loss == pytest.approx(10.97)
