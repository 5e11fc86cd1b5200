"""The request limits alone: Host and Origin rules, the run-time bound, and the command's
refusals (port taken, another host warned about)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time

import pytest

from clustertwin.serve.guard import HttpError, Runner, check_host, check_origin


@pytest.mark.parametrize("bound, host, ok", [
    ("127.0.0.1", "127.0.0.1:8000", True),
    ("127.0.0.1", "localhost:8000", True),
    ("127.0.0.1", "[::1]:8000", True),
    ("127.0.0.1", "evil.example:8000", False),
    ("127.0.0.1", "", False),
    ("0.0.0.0", "twin.lab:8000", True),
    ("10.1.2.3", "10.1.2.3:8000", True),
    ("10.1.2.3", "evil.example", False),
])
def test_host_header(bound, host, ok):
    if ok:
        check_host({"host": host}, bound)
    else:
        with pytest.raises(HttpError) as exc:
            check_host({"host": host}, bound)
        assert exc.value.status == 400


@pytest.mark.parametrize("origin, ok", [
    (None, True),  # a script, not a browser
    ("http://127.0.0.1:8000", True),
    ("http://127.0.0.1:8001", False),
    ("http://evil.example", False),
    ("null", False),  # a sandboxed frame or a file:// page
])
def test_origin(origin, ok):
    headers = {"host": "127.0.0.1:8000", **({"origin": origin} if origin else {})}
    if ok:
        check_origin(headers)
    else:
        with pytest.raises(HttpError) as exc:
            check_origin(headers)
        assert exc.value.status == 403


def test_a_plan_past_its_time_is_answered_504():
    runner = Runner(timeout_s=0.2, workers=1)
    t0 = time.perf_counter()
    with pytest.raises(HttpError) as exc:
        asyncio.run(runner.run(time.sleep, 2))
    assert exc.value.status == 504 and time.perf_counter() - t0 < 1.5


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
