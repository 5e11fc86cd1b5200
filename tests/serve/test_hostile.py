"""Hostile input against a real server on loopback: JSON that YAML would refuse, slow and
numerous connections, and a bounded fuzz of bodies and headers (no 500, no traceback, no
memory past the cap)."""

from __future__ import annotations

import json
import logging
import os
import socket
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import need_server, running_server


@pytest.mark.parametrize("body, path, words", [
    (b'{"cluster": {"gpus": 8, "gpus": 16}}', "cluster.gpus", "duplicate key"),
    (b'{"name": "a", "name": "b"}', "name", "duplicate key"),
    (b"[" * 100_000 + b"]" * 100_000, "", "nested more than 64"),
    (b'{"a": ' * 5_000 + b"1" + b"}" * 5_000, "", "nested more than 64"),
    (b'{"cluster": {"gpus": ' + b"9" * 5000 + b"}}", "", "4,300 digits"),
    (b'{"cluster": {"gpus": 1e999}}', "cluster.gpus", "finite"),
    (b'{"cluster": {"gpus": NaN}}', "cluster.gpus", "finite"),
    (b'{"cluster": ', "", "not JSON"),
])
def test_json_refusals_name_the_key_and_hide_internals(server, body, path, words):
    r = server.request("/api/plan", body, {"Content-Type": "application/json"})
    err = r.json()
    assert r.status == 400, err
    assert words in err["error"] and path in [p["path"] for p in err["problems"]]
    for internal in ("Traceback", "ValueError", "OverflowError", "RecursionError", "Exceeds the limit"):
        assert internal not in err["error"]


def test_the_same_duplicate_is_refused_in_yaml_and_json(server):
    yaml_r = server.request("/api/validate", "cluster:\n  gpus: 8\n  gpus: 16\n", {"Content-Type": "application/yaml"})
    json_r = server.request("/api/validate", b'{"cluster": {"gpus": 8, "gpus": 16}}', {"Content-Type": "application/json"})
    assert yaml_r.status == json_r.status == 400
    assert [p["path"] for p in json_r.json()["problems"]] == ["cluster.gpus"]


@pytest.fixture(scope="module")
def tight():
    """A server with a 1 s deadline on each request head, 24 connections at most."""
    need_server()
    from clustertwin.serve.conn import bound_logs

    bound_logs(every_s=60)
    yield from running_server(header_timeout_s=1.0, max_connections=24, workers=1)


def _port(srv) -> int:
    return int(srv.base.rsplit(":", 1)[1])


def _closed_by_server(sock: socket.socket, within_s: float) -> bool:
    sock.settimeout(within_s)
    try:
        return sock.recv(1024) == b"" or True  # an answer or the end: the server let go
    except TimeoutError:
        return False
    except OSError:
        return True


def test_slow_headers_are_cut_off_and_the_server_keeps_answering(tight, caplog):
    port = _port(tight)
    socks = []
    with caplog.at_level(logging.WARNING, logger="clustertwin.serve"):
        for _ in range(60):  # more than the cap: the longest-waiting ones are closed
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            socks.append(s)
            try:
                s.sendall(b"GET /api/catalog HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port)
            except OSError:
                pass  # closed already: past the cap
        # at the cap a new client is still answered: the slowest connection gives way
        assert tight.request("/api/catalog").status == 200
        time.sleep(1.5)
        try:
            assert all(_closed_by_server(s, 2.0) for s in socks)
            assert tight.request("/api/catalog").status == 200
        finally:
            for s in socks:
                s.close()
    lines = [r for r in caplog.records if r.name == "clustertwin.serve"]
    assert 1 <= len(lines) <= 4  # one line per kind and period, however many connections
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in lines)


def test_a_body_that_does_not_arrive_is_408(tight, monkeypatch):
    import clustertwin.serve.guard as guard

    monkeypatch.setattr(guard, "BODY_TIMEOUT_S", 0.5)
    port = _port(tight)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /api/validate HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"na" % port)
        reply = b""
        while b"0.5 s" not in reply and len(reply) < 4096:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 408") and b"did not arrive within 0.5 s" in reply


def test_oversized_headers_are_refused(tight):
    r = tight.request("/api/catalog", headers={"X-Big": "a" * 40_000})
    assert r.status in (400, 431)


FUZZ_EXAMPLES = int(os.environ.get("CLUSTERTWIN_FUZZ_EXAMPLES", "40"))
SEEN: dict[int, int] = {}  #: statuses the fuzz got (shown with -s)
_HEADER_VALUES = st.one_of(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60),
                           st.sampled_from(["127.0.0.1.evil.example", "http://evil.example", "null",
                                            "[::1]", "application/yaml", "application/json", "-1", "9" * 30]))
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                     max_leaves=20)
_KEYS = ["cluster.gpus", "cluster.spare_nodes", "cluster.gpu", "training.precision", "training.tokens",
         "model", "reliability.seed", "name", "economics", "cluster.fabric"]


def _mutated(key: str, value: object) -> bytes:
    from clustertwin.io import read_document
    from clustertwin.scenario import DEFAULT_SCENARIO

    doc = json.loads(json.dumps(read_document(DEFAULT_SCENARIO), default=str))
    *parents, last = key.split(".")
    node = doc
    for p in parents:
        node = node.setdefault(p, {}) if isinstance(node, dict) else {}
    if isinstance(node, dict):
        node[last] = value
    return json.dumps(doc, allow_nan=True).encode()


_BODIES = st.one_of(
    st.binary(max_size=200),
    _JSON.map(lambda v: json.dumps(v, allow_nan=True).encode()),
    st.tuples(st.sampled_from(_KEYS), _JSON).map(lambda kv: _mutated(*kv)),
    st.text(max_size=200).map(lambda t: t.encode()),
    st.integers(1, 200).map(lambda n: b"a:\n" + b"  - [" * n + b"1" + b"]" * n),
)


@given(path=st.sampled_from(["/api/validate", "/api/plan", "/answer", "/save", "/sweep/start", "/download"]),
       body=_BODIES, ctype=st.sampled_from(["application/json", "application/yaml", "text/plain",
                                            "application/x-www-form-urlencoded"]),
       extra=st.dictionaries(st.sampled_from(["Origin", "Host", "HX-Trigger-Name", "Sec-Fetch-Site", "X-Any"]),
                             _HEADER_VALUES, max_size=3))
@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_fuzz_the_web_api(fuzz_server, path, body, ctype, extra):
    """No 500 and no traceback, whatever the body and headers (bounded: 40 examples unless
    CLUSTERTWIN_FUZZ_EXAMPLES says more, for a longer run by hand)."""
    headers = {"Content-Type": ctype, **{k: v for k, v in extra.items() if k != "Host"}}
    if "Host" in extra:
        headers["Host"] = extra["Host"]
    r = fuzz_server.request(path, body, headers)
    SEEN[r.status] = SEEN.get(r.status, 0) + 1
    text = r.body.decode("utf-8", "replace")
    assert r.status != 500 and r.status < 600, text[:300]
    assert "Traceback" not in text and 'File "' not in text
    if r.status == 503:
        assert r.headers.get("Retry-After")


@pytest.fixture(scope="module")
def fuzz_server():
    need_server()
    yield from running_server(workers=1, memory_mb=640, timeout_s=5)


def _rss_mb(pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def test_fuzz_left_no_memory_past_the_cap(fuzz_server):
    """After the fuzz: the planning worker within its cap; the server answers a plan."""
    print("fuzz statuses:", dict(sorted(SEEN.items())))
    worker = fuzz_server.app.state.runner.slots[0].worker
    assert _rss_mb(worker.proc.pid) < 640
    before = _rss_mb()
    r = fuzz_server.post_json("/api/validate", {"cluster": {"gpus": 8}})
    assert r.status == 200 and _rss_mb() - before < 200


@given(name=st.sampled_from(["MemoryError", "OverflowError", "ValueError", "ZeroDivisionError", "RecursionError"]),
       text=st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=80),
       stage=st.sampled_from(["training", "design", "reliability", "economics", "buildout"]))
@settings(max_examples=200, deadline=None)
def test_a_stage_compute_error_reaches_the_user_without_its_exception_text(name, text, stage):
    """Property: whatever the exception said, the user reads the stage and what it means."""
    from clustertwin.serve.workers import plain_message

    said = plain_message(f"{stage}: the {stage} stage cannot compute this scenario ({name}: {text}); "
                         "check the values it uses")
    meanings = ("it ran out of memory", "a number too large to compute with", "a value outside what its model computes")
    assert said in {f"{stage}: the {stage} stage cannot compute this scenario ({m}); check the values it uses"
                    for m in meanings}
