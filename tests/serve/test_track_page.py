"""The track page over HTTP: an upload (a saved or pasted scenario, a run's log and its sacct
export) gives the same forecast the library computes, drift and figures; the upload is bounded
(413 naming the limit and the command line); problems come back on the page (422); what a log
or a file name says is shown as text."""

from __future__ import annotations

import asyncio
import json
import re
import uuid

import pytest

SCENARIO = "gpt3-175b-1024-a100"  #: an example the server offers (examples/)


def multipart(fields: dict[str, str], files: list[tuple[str, str, bytes]]) -> tuple[bytes, str]:
    """(body, Content-Type) of a multipart/form-data form (as a browser sends one)."""
    b = uuid.uuid4().hex
    out = []
    for k, v in fields.items():
        out.append(f'--{b}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode())
    for field, name, data in files:
        out.append(f'--{b}\r\nContent-Disposition: form-data; name="{field}"; filename="{name}"\r\n'
                   "Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    out.append(f"--{b}--\r\n".encode())
    return b"".join(out), f"multipart/form-data; boundary={b}"


def post(server, fields, files, headers=None):
    body, ctype = multipart(fields, files)
    return server.request("/track", body, {"Content-Type": ctype, **(headers or {})})


@pytest.fixture(scope="module")
def run():
    """The example's plan, a synthetic run of it (the twin's own step-time and failure models),
    and the time it was half trained."""
    from clustertwin.catalog import load_catalog
    from clustertwin.plan import make_plan
    from clustertwin.scenario import load_scenario
    from clustertwin.serve.library import examples_dir
    from clustertwin.track.planview import plan_view
    from clustertwin.track.synthetic import generate

    cat = load_catalog()
    pv = plan_view(make_plan(load_scenario(examples_dir() / f"{SCENARIO}.yaml", cat), cat))
    r = generate(pv, 7)
    half = next(t for t, tok in r.checkpoints if tok >= 0.5 * pv.tokens)
    return pv, r, half


def _tile(page: str, key: str) -> str:
    m = re.search(rf'data-key="{re.escape(key)}">([^<]*)<', page)
    assert m, f"no tile {key}"
    return m.group(1)


def test_the_form_says_its_limit_and_the_command_line(server):
    from clustertwin.serve.track_page import MAX_UPLOAD_BYTES

    r = server.request("/track")
    page = r.body.decode()
    assert r.status == 200 and 'enctype="multipart/form-data"' in page
    assert f"{MAX_UPLOAD_BYTES:,} bytes" in page and "clustertwin track SCENARIO --log FILE" in page
    assert f'value="{SCENARIO}"' in page  # the saved scenarios to pick from


def test_an_upload_gives_the_library_forecast_tiles_and_figures(server, run):
    """The page's P10/P50/P90 are those of ``track_plan`` on the same inputs (the CLI's path)."""
    from clustertwin.track.core import track_plan
    from clustertwin.track.records import iso
    from clustertwin.track.report import to_doc

    pv, r, half = run
    r_ = post(server, {"scenario": SCENARIO, "as_of": iso(half)},
              [("log", "train.log", r.log.encode()), ("sacct", "job.sacct", r.sacct.encode())])
    page = r_.body.decode()
    assert r_.status == 200, page[:2000]
    doc = to_doc(track_plan(pv, [("train.log", r.log)], "job.sacct", half, 0, sacct_text=r.sacct))
    for q in (10, 50, 90):
        row = re.search(rf'data-quantile="p{q}"><td>P{q}</td><td>([^<]*)</td>', page)
        assert row and row.group(1) == doc["forecast"][f"trained_by_p{q}"]
    assert _tile(page, "forecast.trained_by_p50") == doc["forecast"]["trained_by_p50"][:16].replace("T", " ")
    assert _tile(page, "progress.fraction") == f"{doc['progress']['fraction']:.1%}"
    assert doc["observed"]["interruptions"] > 0 and f"{doc['observed']['interruptions']:,}" == _tile(page, "observed.interruptions")
    for title in ("Tokens trained: actual, plan and forecast", "Interruptions by cause", "Step time per day"):
        assert title in page  # the view's figures (the burn-up with its fan, the timeline, the step time)
    assert page.count('class="plotly-graph-div"') == 3
    assert "train.log" in page and "job.sacct" in page  # lines read, per file


def test_pasted_yaml_wins_over_the_saved_pick(server, run):
    from clustertwin.serve.library import examples_dir

    pv, r, half = run
    text = (examples_dir() / f"{SCENARIO}.yaml").read_text().replace(f"name: {SCENARIO}", "name: pasted-run")
    assert "pasted-run" in text
    got = post(server, {"scenario": "no-such-saved", "yaml": text}, [("log", "a.log", r.log.encode())])
    assert got.status == 200 and "pasted-run: observed vs planned" in got.body.decode()


def _raw_upload(server, headers: dict[str, str], body: bytes = b"") -> tuple[int, str]:
    status, got = server.raw_post("/track", {"Content-Type": "multipart/form-data; boundary=x", **headers}, body)
    return status, got.decode()


def test_an_upload_over_the_limit_is_refused_with_413_pointing_to_the_cli(server):
    from clustertwin.serve.track_page import MAX_UPLOAD_BYTES

    status, page = _raw_upload(server, {"Content-Length": str(MAX_UPLOAD_BYTES + 1)})
    assert status == 413
    assert f"at most {MAX_UPLOAD_BYTES:,} bytes" in page and "clustertwin track SCENARIO --log FILE" in page


def test_a_streamed_upload_over_the_limit_is_refused_while_read(server):
    from clustertwin.serve.track_page import MAX_UPLOAD_BYTES

    chunk = b"x" * 2**20
    n = MAX_UPLOAD_BYTES // len(chunk) + 2
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(n)) + b"0\r\n\r\n"
    status, page = _raw_upload(server, {"Transfer-Encoding": "chunked"}, body)
    assert status == 413 and "body over" in page and "command line" in page


@pytest.mark.parametrize("fields, files, words", [
    ({"scenario": SCENARIO}, [], "at least one training log file"),
    ({"scenario": "nope"}, [("log", "a.log", b"x\n")], "a saved scenario picked, or scenario YAML pasted"),
    ({"scenario": SCENARIO}, [("log", "notes.txt", b"hello\nworld\n")], "notes.txt"),
    ({"scenario": SCENARIO, "as_of": "next tuesday"}, [("log", "a.log", b"x\n")], "ISO 8601"),
    ({"yaml": "cluster: {gpus: -3}\n"}, [("log", "a.log", b"x\n")], "cluster"),
])
def test_problems_come_back_on_the_page_with_422(server, fields, files, words):
    r = post(server, fields, files)
    page = r.body.decode()
    assert r.status == 422, page[:1000]
    assert words in page and 'id="track-form"' in page and "Traceback" not in page


def test_log_text_and_file_names_are_shown_as_text(server, run):
    pv, r, half = run
    evil = "<img src=x onerror=alert(1)>"
    log = r.log.replace("loading checkpoint", f"loading checkpoint {evil}", 1)
    got = post(server, {"scenario": SCENARIO}, [("log", f"{evil}.log", log.encode())])
    page = got.body.decode()
    assert got.status == 200, page[:1000]
    assert evil not in page and "&lt;img src=x onerror=alert(1)&gt;.log" in page


def test_uploads_held_at_once_are_bounded(server, run):
    """Each held upload costs the server up to the upload limit in memory: one past the bound
    is a 503 with Retry-After, before its body is read."""
    from clustertwin.serve.track_page import UPLOADS_AT_ONCE

    _, r, _ = run
    server.app.state.track_uploads = UPLOADS_AT_ONCE
    try:
        got = post(server, {"scenario": SCENARIO}, [("log", "a.log", r.log.encode())])
    finally:
        server.app.state.track_uploads = 0
    assert got.status == 503 and got.headers["Retry-After"] == "5" and "at most 4 at once" in got.body.decode()
    assert post(server, {"scenario": SCENARIO}, [("log", "a.log", r.log.encode())]).status == 200


def test_a_cross_origin_upload_is_refused(server, run):
    _, r, _ = run
    got = post(server, {"scenario": SCENARIO}, [("log", "a.log", r.log.encode())],
               {"Origin": "http://evil.example"})
    assert got.status == 403 and "cross-origin" in json.loads(got.body)["error"]


@pytest.mark.parametrize("body, ctype, words", [
    (b"--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n", "multipart/form-data; boundary=b", "cut short"),
    (b"", "application/x-www-form-urlencoded", "multipart/form-data"),
    (b"--b\r\nContent-Type: text/plain\r\n\r\n1\r\n--b--\r\n", "multipart/form-data; boundary=b", "field name"),
    (b"--b\r\nno headers here--b--\r\n", "multipart/form-data; boundary=b", "could not be read"),
    (b"garbage--b--", "multipart/form-data; boundary=b", "could not be read"),
])
def test_malformed_forms_are_a_400(body, ctype, words):
    from clustertwin.serve.guard import HttpError
    from clustertwin.serve.track_page import parse_multipart

    with pytest.raises(HttpError) as exc:
        asyncio.run(parse_multipart(body, ctype))
    assert exc.value.status == 400 and words in str(exc.value)


def test_multipart_parts_are_read_as_sent():
    from clustertwin.serve.track_page import parse_multipart

    body, ctype = multipart({"scenario": "a\r\nb"}, [("log", "dir/x.log", b"1\r\n2\r\n--not-a-boundary\r\n")])
    parts = asyncio.run(parse_multipart(body, ctype))
    assert [(p.name, p.filename, p.data) for p in parts] == [
        ("scenario", None, b"a\r\nb"), ("log", "dir/x.log", b"1\r\n2\r\n--not-a-boundary\r\n")]


def test_the_readme_states_the_page_limits():
    from pathlib import Path

    from clustertwin.serve.track_page import MAX_UPLOAD_BYTES, UPLOADS_AT_ONCE

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    page = text[text.index("- **Track** (`/track`)"):]
    page = page[:page.index("\n- **")]
    assert f"at most {MAX_UPLOAD_BYTES >> 20} MiB in all" in page and f"at most {UPLOADS_AT_ONCE} uploads" in page
