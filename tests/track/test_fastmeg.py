"""The block reader (numpy) gives what the line reader gives, and hands back what it cannot take."""

from __future__ import annotations

import numpy as np
import pytest

from clustertwin.track import fastmeg
from track.helpers import DATA, read
from track.helpers import plan_stub as _plan


def _line_reader_history(path, **kw):
    """The same file through the line reader only (the block reader bypassed)."""
    from clustertwin.track import detect

    orig = detect.megatron_blocks

    def lines_only(p, stats, workers=None):  # noqa: ARG001
        from clustertwin.track.readers import read_megatron

        yield from read_megatron(detect.numbered_lines(p, stats), stats)

    detect.megatron_blocks = lines_only
    try:
        return read(path, **kw)
    finally:
        detect.megatron_blocks = orig


@pytest.mark.parametrize("restart_every", [10**9, 700])
def test_block_reader_matches_line_reader(tmp_path, restart_every):
    from clustertwin.track.synthetic import write_big_log

    p = tmp_path / "run.log"
    write_big_log(str(p), 3000, restart_every=restart_every, save_every=50)
    a, sa, _ = read(p, seq_len=2048, batch_tokens=1536 * 2048)
    b, sb, _ = _line_reader_history(p, seq_len=2048, batch_tokens=1536 * 2048)
    assert (sa.read, sa.skipped) == (sb.read, sb.skipped) == (3000, 0)
    assert a.segments == b.segments
    assert [(r.step_before, r.step_after, r.why) for r in a.restarts] == \
           [(r.step_before, r.step_after, r.why) for r in b.restarts]
    assert len(a.restarts) == (3000 // restart_every if restart_every < 3000 else 0)
    assert a.step_time() == b.step_time()
    assert a.last_loss == pytest.approx(b.last_loss)
    np.testing.assert_allclose(a.points, b.points)


def test_block_with_a_torn_line_goes_to_the_line_reader():
    data = (DATA / "megatron.log").read_bytes()
    assert fastmeg.parse_block(data) is None  # line 12 is torn: the line reader names it
    good = b"".join(line for line in data.splitlines(keepends=True) if b"elapsed time per iter\n" not in line)
    cols, events = fastmeg.parse_block(good)
    assert list(cols["step"]) == [10, 20, 30, 40, 50, 50, 60, 70]
    assert [k for k, _, _ in events] == [0, 5, 5]  # the launch time, then the two load lines
    assert cols["loss"][-1] == pytest.approx(6.789012)
    assert list(cols["skipped"]) == [0] * 7 + [1]


@pytest.mark.parametrize("text, value", [(b"  1536 |", 1536.0), (b"2.500000E+00 |", 2.5), (b"-3.5e-05 |", -3.5e-05),
                                         (b"nan |", None), (b"0 |", 0.0), (b"   08 |", 8.0), (b"05\n", 5.0), (b"179.8\n", 179.8),
                                         (b"12abc |", "bad"), (b"1.2.3 |", "bad"), (b" |", "bad")])
def test_parse_numbers(text, value):
    buf = np.frombuffer(text.ljust(40) + b" " * 40, np.uint8)
    got = fastmeg.parse_numbers(buf, np.array([0]))
    if value == "bad":
        assert got is None
    elif value is None:
        assert np.isnan(got[0])
    else:
        assert got[0] == pytest.approx(value)


def test_pool_of_workers_gives_the_same_history(tmp_path):
    from clustertwin.track.core import read_history
    from clustertwin.track.detect import megatron_blocks, open_log
    from clustertwin.track.synthetic import write_big_log

    p = tmp_path / "run.log"
    write_big_log(str(p), 40_000, restart_every=15_000)
    out = []
    for workers in (1, 2):
        fmt, st = open_log(p)

        h = read_history([(str(p), fmt, megatron_blocks(p, st, workers), st)], _plan(), None)
        out.append((h.segments, h.step_time(), st.read))
    assert out[0] == out[1]
    assert out[0][2] == 40_000 and len(out[0][0]) == 3



def test_zoned_stamps_go_to_the_line_reader():
    """A time zone after the seconds is the line reader's to read (the block reader reads UTC)."""
    line = (DATA / "megatron.log").read_bytes().splitlines(keepends=True)[4]
    zoned = line.replace(b"[2027-03-01 00:01:00]", b"[2027-03-01T00:01:00+08:00]")
    assert fastmeg.parse_block(line) is not None and fastmeg.parse_block(zoned) is None
