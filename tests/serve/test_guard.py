"""The request limits alone: Host and Origin rules (exact, after parsing), and the command's
refusals (port taken, another host warned about)."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustertwin.serve.guard import (
    Allowed,
    HttpError,
    check_host,
    check_origin,
    is_loopback,
    parse_authority,
)

PORT = 8000
A = Allowed("127.0.0.1", PORT)


@pytest.mark.parametrize("host, ok", [
    ("127.0.0.1:8000", True),
    ("localhost:8000", True),
    ("LOCALHOST:8000", True),  # names are case-insensitive
    ("[::1]:8000", True),
    ("[0:0:0:0:0:0:0:1]:8000", True),  # the same IPv6 address, written out
    ("127.0.0.1.evil.example:8000", False),  # DNS rebinding: a name that starts like loopback
    ("127.0.0.1.nip.io:8000", False),
    ("127.1:8000", False),  # a shorthand some resolvers read as 127.0.0.1: not an exact match
    ("127.0.0.2:8000", False),
    ("localhost.:8000", False),
    ("localhost.evil.example:8000", False),
    ("evil.example:8000", False),
    ("127.0.0.1:8001", False),  # another port: another origin
    ("127.0.0.1", False),  # no port means 80
    ("127.0.0.1:", False),
    ("127.0.0.1:08000x", False),
    ("user@127.0.0.1:8000", False),
    ("[::1%eth0]:8000", False),
    ("[::ffff:127.0.0.1]:8000", False),
    ("[::1]", False),
    ("::1:8000", False),
    ("", False),
    (" 127.0.0.1:8000 x", False),
])
def test_host_header(host, ok):
    if ok:
        check_host({"host": host}, A)
    else:
        with pytest.raises(HttpError) as exc:
            check_host({"host": host}, A)
        assert exc.value.status == 400


@pytest.mark.parametrize("bound, extra, host, local, ok", [
    ("0.0.0.0", (), "10.1.2.3:8000", ("10.1.2.3", 8000), True),  # the address it arrived at
    ("0.0.0.0", (), "10.1.2.4:8000", ("10.1.2.3", 8000), False),
    ("0.0.0.0", (), "twin.lab:8000", ("10.1.2.3", 8000), False),  # a name: only when allowed
    ("0.0.0.0", ("twin.lab",), "TWIN.lab:8000", ("10.1.2.3", 8000), True),
    ("0.0.0.0", ("twin.lab",), "twin.lab.evil.example:8000", ("10.1.2.3", 8000), False),
    ("10.1.2.3", (), "10.1.2.3:8000", ("10.1.2.3", 8000), True),
    ("10.1.2.3", (), "evil.example:8000", ("10.1.2.3", 8000), False),
    ("::1", (), "[::1]:8000", ("::1", 8000), True),
    ("::", (), "[fe80::1]:8000", ("fe80::1", 8000), True),
])
def test_host_header_on_other_addresses(bound, extra, host, local, ok):
    allowed = Allowed(bound, None, extra)  # the port: the one the connection arrived at
    if ok:
        check_host({"host": host}, allowed, local)
    else:
        with pytest.raises(HttpError):
            check_host({"host": host}, allowed, local)


@given(st.text(alphabet="0123456789abcdefxyzABC.-:[]@%_ /", max_size=40))
@settings(max_examples=300, deadline=None)
def test_a_host_is_allowed_only_when_it_parses_to_an_allowed_name(text):
    """Property: whatever the text, it passes only when it is exactly one of the allowed
    names with the port after parsing (never a prefix or a suffix match)."""
    got = parse_authority(text)
    try:
        check_host({"host": text}, A)
        passed = True
    except HttpError:
        passed = False
    assert passed == (got is not None and got[1] == PORT and got[0] in {"127.0.0.1", "localhost", "[::1]"})
    if passed:
        assert text.lower().rsplit(":", 1)[0] in {"127.0.0.1", "localhost", "[::1]"} or text.startswith("[")


@given(st.sampled_from(["127.0.0.1", "localhost", "[::1]"]),
       st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789.-", min_size=1, max_size=30))
@settings(max_examples=200, deadline=None)
def test_rebinding_names_never_pass(base, tail):
    """Property: an allowed name with anything before or after it is another name."""
    for host in (f"{base}.{tail}:{PORT}", f"{tail}.{base}:{PORT}", f"{base}{tail}:{PORT}"):
        with pytest.raises(HttpError):
            check_host({"host": host}, A)


@pytest.mark.parametrize("origin, ok", [
    (None, True),  # a script, not a browser
    ("http://127.0.0.1:8000", True),
    ("http://localhost:8000", True),
    ("http://LocalHost:8000", True),
    ("http://[::1]:8000", True),
    ("http://127.0.0.1:8001", False),
    ("http://127.0.0.1.evil.example:8000", False),
    ("https://127.0.0.1:8000", False),  # another scheme: another origin
    ("http://127.0.0.1:8000/path", False),
    ("http://user@127.0.0.1:8000", False),
    ("http://evil.example", False),
    ("null", False),  # a sandboxed frame or a file:// page
    ("", False),
    ("http://[::1", False),
])
def test_origin(origin, ok):
    headers = {"host": "127.0.0.1:8000", **({"origin": origin} if origin is not None else {})}
    if ok:
        check_origin(headers, A)
    else:
        with pytest.raises(HttpError) as exc:
            check_origin(headers, A)
        assert exc.value.status == 403


def test_a_cross_site_fetch_without_origin_is_refused():
    with pytest.raises(HttpError):
        check_origin({"host": "127.0.0.1:8000", "sec-fetch-site": "cross-site"}, A)
    check_origin({"host": "127.0.0.1:8000", "sec-fetch-site": "same-origin"}, A)


@pytest.mark.parametrize("bound, loop", [("127.0.0.1", True), ("127.5.6.7", True), ("::1", True),
                                         ("[::1]", True), ("localhost", True), ("0.0.0.0", False),
                                         ("127.0.0.1.evil.example", False), ("10.0.0.1", False)])
def test_is_loopback(bound, loop):
    assert is_loopback(bound) is loop


def _serve(*args: str, timeout: float = 60) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "clustertwin.cli", "serve", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_taken_port_is_one_line_and_exit_2(serve_extra):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        proc = _serve("--port", str(port))
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --port") and "Traceback" not in err


def test_another_host_is_warned_about(serve_extra):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = _serve("--host", "0.0.0.0", "--port", str(port))
    try:
        line = proc.stderr.readline()
        assert line.startswith("warning: listening on 0.0.0.0") and "not loopback" in line
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_missing_scenario_file_is_one_line_and_exit_2(serve_extra, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = _serve(str(tmp_path / "nope.yaml"), "--port", str(port))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "nope.yaml" in lines[0] and "file not found" in lines[0]


def test_without_starlette_the_command_says_what_to_install(tmp_path):
    import os

    (tmp_path / "starlette.py").write_text(  # stands for a missing package
        "raise ModuleNotFoundError('No module named starlette', name='starlette')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    out = subprocess.run([sys.executable, "-m", "clustertwin.cli", "serve"], capture_output=True,
                         text=True, timeout=60, env=env)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install starlette uvicorn" in lines[0]
