"""The column reader (Megatron's ``|`` columns) gives what the key reader gives, hands back
every block it cannot take whole, and the byte ranges a file is cut into lose no line."""

from __future__ import annotations

import numpy as np
import pytest

from clustertwin.track import fastcols, fastmeg
from track.helpers import DATA, read


def _equal(a, b) -> None:
    ca, ea = a
    cb, eb = b
    assert ea == eb and set(ca) == set(cb)
    for k in ca:
        assert ca[k].dtype == cb[k].dtype, k
        np.testing.assert_array_equal(ca[k], cb[k], err_msg=k)


def _good_sample() -> bytes:
    data = (DATA / "megatron.log").read_bytes()
    return b"".join(line for line in data.splitlines(keepends=True) if b"elapsed time per iter\n" not in line)


@pytest.mark.parametrize("name", ["good sample", "synthetic"])
def test_columns_equal_the_key_reader(tmp_path, name):
    """Both readers on the same blocks: the same columns, bit for bit, and the same other lines
    (launch time, checkpoint loads: the sample has a restart and a skipped iteration)."""
    from clustertwin.track.synthetic import write_big_log

    if name == "good sample":
        block = _good_sample()
    else:
        p = tmp_path / "run.log"
        write_big_log(str(p), 5000, restart_every=1700, save_every=50)
        block = p.read_bytes()
    mine = fastcols.parse_columns(block)
    assert mine is not None
    _equal(mine, fastmeg.parse_block(block))


def _sample_line(**swap: bytes) -> bytes:
    line = _good_sample().splitlines(keepends=True)[4]
    for old, new in swap.items():
        assert old.encode() in line
        line = line.replace(old.encode(), new)
    return line


@pytest.mark.parametrize("why, block", [
    ("torn line", (DATA / "megatron.log").read_bytes()),
    ("zoned stamp", _sample_line(**{"[2027-03-01 00:01:00]": b"[2027-03-01T00:01:00+08:00]"})),
    ("stamp not first", b"rank0: " + _sample_line()),
    ("not a number", _sample_line(**{"lm loss: 1.052345E+01": b"lm loss: 1.05x345E+01"})),
    ("infinite", _sample_line(**{"lm loss: 1.052345E+01": b"lm loss: inf"})),
    ("digits, a space, digits", _sample_line(**{"consumed samples:         5120": b"consumed samples:       51 20"})),
    ("step time not positive", _sample_line(**{"(ms): 6000.0": b"(ms): 0.0"})),
    ("last field without its bar", _sample_line(**{"iterations:   0 |\n": b"iterations:   0\n"})),
    ("no iteration line", b"[2027-03-01 00:01:00] hello | world |\n"),
])
def test_blocks_it_cannot_take_whole_are_handed_back(why, block):
    line = _sample_line()
    assert fastcols.parse_columns(line + line) is not None
    assert fastcols.parse_columns(block) is None, why
    if why == "infinite":  # nor the key reader: the line reader names it
        assert fastmeg.parse_block(block) is None


def test_a_key_in_another_column_is_caught():
    """Two lines with the same number of columns whose keys trade places: refused, not misread."""
    line = _sample_line()
    parts = line.split(b"|")
    parts[1], parts[2] = parts[2], parts[1]
    assert fastcols.parse_columns(line + b"|".join(parts)) is None


@pytest.mark.parametrize("cells, want", [
    ([b"  1536 ", b"     0 ", b"123456789012345"], [1536, 0, 123456789012345]),
    ([b"  12 4 "], None), ([b"  1,536"], None), ([b"       "], None), ([b"  -3   "], None),
])
def test_whole_numbers(cells, want):
    w = max(map(len, cells))
    m = np.frombuffer(b"".join(c.ljust(w) for c in cells), np.uint8).reshape(len(cells), w)
    got = fastcols._ints(m)
    assert (got is None) if want is None else list(got) == want


def test_ranges_cut_at_newlines_and_skip_an_over_long_line(tmp_path, monkeypatch):
    """Small blocks (many cuts) give the history of one block; a line longer than a whole
    block is one bad line, named by its number, and the lines after it are read (the block is
    shrunk here; at its real 4 MiB such a line is past LINE_MAX, as the message says)."""
    from clustertwin.track.synthetic import write_big_log

    p = tmp_path / "run.log"
    write_big_log(str(p), 3000, restart_every=1100, save_every=50)
    whole, st_whole, _ = read(p, seq_len=2048, batch_tokens=1536 * 2048)
    monkeypatch.setattr(fastmeg, "BLOCK", 5000)
    cut, st_cut, _ = read(p, seq_len=2048, batch_tokens=1536 * 2048)
    assert (st_cut.read, st_cut.skipped) == (st_whole.read, 0) == (3000, 0)
    assert cut.segments == whole.segments and cut.step_time() == whole.step_time()
    lines = p.read_bytes().splitlines(keepends=True)
    p.write_bytes(b"".join(lines[:1000]) + b"x" * 12_000 + b"\n" + b"".join(lines[1000:]))
    long, st_long, _ = read(p, seq_len=2048, batch_tokens=1536 * 2048)
    assert st_long.bad == [(1001, "line longer than 1048576 characters")] and st_long.read == 3000
    assert long.segments == whole.segments


@pytest.mark.parametrize("fmt, low, high", [("%.6E", 1.0, 9.99), ("%.6E", 0.1, 0.999), ("%.1f", 100.0, 999.9),
                                            ("%.4f", 1.0, 9.0), ("%.6E", -9.99, -1.0), ("%8.0f", 1000, 9999)])
def test_fixed_layout_numbers_are_the_doubles_float_reads(fmt, low, high):
    """Digit arithmetic gives exactly float()'s double (one rounding of exact operands)."""
    rng = np.random.default_rng(3)
    texts = [(" " + fmt % v + " ").encode() for v in rng.uniform(low, high, 2000)]
    w = max(map(len, texts))
    m = np.frombuffer(b"".join(t.ljust(w) for t in texts), np.uint8).reshape(len(texts), w)
    got = fastcols._fixed_floats(m)
    assert got is not None and got.tolist() == [float(t) for t in texts]


@pytest.mark.parametrize("cells", [[b" 1.5 ", b" 22.5"], [b" 1.5E+00", b" 1.5E-01"], [b" nan ", b" nan "],
                                   [b" 1.5 ", b" 1,5 "], [b" 1.2345678901234567 "]])
def test_numbers_in_other_layouts_are_left_to_the_float_parser(cells):
    w = max(map(len, cells))
    m = np.frombuffer(b"".join(c.ljust(w) for c in cells), np.uint8).reshape(len(cells), w)
    assert fastcols._fixed_floats(m) is None
