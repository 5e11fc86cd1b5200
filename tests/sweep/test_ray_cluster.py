"""A sweep on a real two-node Ray cluster (issue 36): a head and a worker node started with
``ray start`` on this host (two raylets, each its own node id, on loopback), token
authentication on, ``clustertwin sweep --executor ray --ray-address`` against it.

Checked: run.json names both nodes and the points each computed, a worker process killed in the
middle of a batch loses no point (the batch runs again and run.json reports the retry), and the
CSV equals the local executor's byte for byte. About 40-60 s; object stores capped at 80 MB."""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from tests.sweep.conftest import SMALL

RAY = Path(sys.executable).with_name("ray")
CLI = Path(sys.executable).with_name("clustertwin")
pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None or not RAY.exists(),
                       reason="ray is not installed (pip install 'clustertwin[ray]')"),
]
GRID = ["--set", "cluster.gpus=64,128,256",
        "--set", "economics.cloud_usd_per_gpu_hour=2,2.25,2.5,2.75,3,3.25,3.5,3.75"]
STORE = str(80 * 1024 * 1024)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ours(tmp: str) -> list[int]:
    """Processes of this test's Ray (their command lines name its temp folder)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tmp.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _children(pids: list[int], title: bytes) -> list[int]:
    """Children of ``pids`` whose process title starts with ``title`` (Ray's task workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid in pids and (entry / "cmdline").read_bytes().startswith(title):
                found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


@pytest.fixture(scope="module")
def cluster():
    """Head + worker node, token auth on: yields (address, env, temp folder)."""
    tmp = tempfile.mkdtemp(prefix="ct-ray-", dir="/tmp")  # short: Ray's socket paths
    port = _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1",
              f"--object-store-memory={STORE}", "--disable-usage-stats"]
    logs = [open(Path(tmp) / f"{n}.log", "w") for n in ("head", "worker")]  # noqa: SIM115
    head = subprocess.Popen([str(RAY), "start", "--head", f"--port={port}", "--include-dashboard=false",
                             f"--temp-dir={tmp}", *common], env=env, stdout=logs[0], stderr=logs[0])
    procs = [head]
    try:
        _wait_port(port, head)
        procs.append(subprocess.Popen([str(RAY), "start", f"--address=127.0.0.1:{port}", *common],
                                      env=env, stdout=logs[1], stderr=logs[1]))
        _wait_nodes(f"127.0.0.1:{port}", env, 2)
        yield f"127.0.0.1:{port}", env, tmp
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        for pid in _ours(tmp):  # anything the raylets left behind
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for f in logs:
            f.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _wait_port(port: int, head: subprocess.Popen, limit: float = 60.0) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if head.poll() is not None:
            pytest.fail(f"ray start --head exited with {head.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    pytest.fail("the Ray head did not open its port")


def _wait_nodes(address: str, env: dict, n: int, limit: float = 60.0) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        out = subprocess.run([str(RAY), "status", f"--address={address}"], env=env,
                             capture_output=True, text=True, timeout=30).stdout
        if f"/{n}.0 CPU" in out:
            return
        time.sleep(1.0)
    pytest.fail(f"the Ray cluster did not reach {n} nodes")


def _sweep(base: Path, out: Path, env: dict, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([str(CLI), "sweep", str(base), *GRID, "--out", str(out), *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_two_node_sweep_survives_a_killed_worker(cluster, tmp_path) -> None:
    address, env, tmp = cluster
    base = tmp_path / "small.yaml"
    base.write_text(yaml.safe_dump(SMALL))
    local = _sweep(base, tmp_path / "local", env, "--workers", "2")
    remote = _sweep(base, tmp_path / "ray", env, "--executor", "ray", "--ray-address", address)
    raylets = [p for p in _ours(tmp) if b"raylet" in Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0]]
    assert len(raylets) == 2
    killed = None
    end = time.monotonic() + 60
    while killed is None and remote.poll() is None and time.monotonic() < end:
        busy = _children(raylets, b"ray::_work")
        if busy:
            killed = busy[0]
            os.kill(killed, signal.SIGKILL)  # a worker dies in the middle of a batch
        time.sleep(0.05)
    out_ray, _ = remote.communicate(timeout=120)
    out_local, _ = local.communicate(timeout=120)
    assert remote.returncode == 0, out_ray
    assert local.returncode == 0, out_local
    assert killed is not None, "no busy Ray worker was seen to kill"
    run = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert run["executor"] == "ray" and run["ray_address"] == address
    assert run["driver_ip"] == "127.0.0.1"  # the interface that reaches the head
    assert run["nodes_used"] == 2 and all(n["points"] > 0 for n in run["nodes"]), run["nodes"]
    assert run["points_computed"] == 24
    assert run["failures_retried"] >= 1 and run["retries"][0]["error"] in (
        "WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OwnerDiedError"), run["retries"]
    assert (tmp_path / "ray" / "sweep.csv").read_bytes() == (tmp_path / "local" / "sweep.csv").read_bytes()
    assert json.loads((tmp_path / "local" / "run.json").read_text())["nodes_used"] == 1


def test_driver_without_the_token_is_refused(cluster, tmp_path) -> None:
    """Token authentication is really on: a driver without the token gets one line, exit 2."""
    address, env, _ = cluster
    base = tmp_path / "small.yaml"
    base.write_text(yaml.safe_dump(SMALL))
    bare = {k: v for k, v in env.items() if not k.startswith("RAY_AUTH")}
    bare["HOME"] = str(tmp_path)  # no ~/.ray/auth_token either
    proc = subprocess.run([str(CLI), "sweep", str(base), "--set", "cluster.gpus=64", "--out",
                           str(tmp_path / "o"), "--executor", "ray", "--ray-address", address],
                          env=bare, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "--ray-address" in proc.stderr and "RAY_AUTH_TOKEN" in proc.stderr, proc.stderr
