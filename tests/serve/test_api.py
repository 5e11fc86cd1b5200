"""The JSON API: same document as ``clustertwin plan --json``, errors as JSON with a 4xx status,
and the safety limits (no file paths, body size, Origin, Host)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from clustertwin.io import read_document
from clustertwin.scenario import DEFAULT_SCENARIO


def _default_doc() -> dict:
    return json.loads(json.dumps(read_document(DEFAULT_SCENARIO), default=str))


@pytest.fixture(scope="module")
def cli_plan() -> dict:
    out = subprocess.run([sys.executable, "-m", "clustertwin.cli", "plan", "--json"], capture_output=True,
                         text=True, check=True, timeout=300)
    return json.loads(out.stdout)


def test_api_plan_equals_cli_json(server, cli_plan):
    r = server.post_json("/api/plan", _default_doc())
    assert r.status == 200 and r.headers["content-type"].startswith("application/json")
    doc = r.json()
    assert doc["training"]["days"] == cli_plan["training"]["days"]
    assert doc["economics"]["capex_usd"] == cli_plan["economics"]["capex_usd"]
    assert doc == cli_plan  # the whole document, not only the two figures


def test_repeated_plan_is_served_from_the_cache(server):
    engine = server.app.state.engine
    doc = _default_doc()
    doc["reliability"]["seed"] = 7  # a scenario no other test plans
    first = server.post_json("/api/plan", doc).json()
    hits = engine.hits
    again = server.post_json("/api/plan", doc).json()
    assert again == first and engine.hits == hits + 1


@pytest.mark.parametrize("body, status", [
    (b"{not json", 400),
    (b"[1, 2, 3]", 400),
    (b"\xff\xfe", 400),
    (json.dumps({"cluster": {"gpus": "many"}}).encode(), 422),
    (json.dumps({"base": "/etc/passwd"}).encode(), 400),
    (json.dumps({"catalog": "/tmp"}).encode(), 400),
])
def test_bad_bodies_get_a_json_error(server, body, status):
    r = server.request("/api/plan", body, {"Content-Type": "application/json"})
    assert r.status == status
    err = r.json()
    assert err["status"] == status and err["error"] and isinstance(err["problems"], list)
    assert "Traceback" not in r.body.decode("utf-8", "replace")


def test_path_keys_are_named_in_the_error(server):
    err = server.post_json("/api/plan", {"base": "/etc/passwd"}).json()
    assert [p["path"] for p in err["problems"]] == ["base"]
    assert "passwd" not in err["error"]


def _raw_post(server, headers: dict[str, str], body: bytes = b"") -> tuple[int, dict]:
    status, got = server.raw_post("/api/plan", headers, body)
    return status, json.loads(got)


def test_declared_body_size_is_bounded(server):
    from clustertwin.serve.guard import MAX_BODY_BYTES

    status, err = _raw_post(server, {"Content-Length": str(MAX_BODY_BYTES + 1)})
    assert status == 413 and err["status"] == 413


def test_streamed_body_size_is_bounded(server):
    from clustertwin.serve.guard import MAX_BODY_BYTES

    chunk = b" " * 65536
    n = MAX_BODY_BYTES // len(chunk) + 2
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(n)) + b"0\r\n\r\n"
    status, err = _raw_post(server, {"Transfer-Encoding": "chunked"}, body)
    assert status == 413 and err["status"] == 413


def test_cross_origin_post_is_refused(server):
    r = server.request("/api/plan", json.dumps(_default_doc()), {"Origin": "http://evil.example"})
    assert r.status == 403 and "cross-origin" in r.json()["error"]
    same = server.request("/api/validate", json.dumps(_default_doc()), {"Origin": server.base})
    assert same.status == 200


def test_foreign_host_header_is_refused(server):
    r = server.request("/api/catalog", headers={"Host": "rebound.example:80"})
    assert r.status == 400 and "Host" in r.json()["error"]


def test_validate_gives_one_problem_per_field(server):
    doc = _default_doc()
    doc["cluster"]["gpus"] = -3
    doc["training"]["precision"] = "fp7"
    r = server.post_json("/api/validate", doc)
    assert r.status == 200
    got = r.json()
    assert got["ok"] is False
    assert sorted(p["path"] for p in got["problems"]) == ["cluster.gpus", "training.precision"]
    assert server.post_json("/api/validate", _default_doc()).json() == {"ok": True, "problems": []}


def test_validate_reports_feasibility_like_the_cli(server, tmp_path):
    import yaml

    doc = _default_doc()
    doc["cluster"]["gpus"] = 8  # a 405B model cannot fit: the training stage's problem at cluster.gpus
    got = server.post_json("/api/validate", doc).json()
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    out = subprocess.run([sys.executable, "-m", "clustertwin.cli", "validate", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and got["ok"] is False
    cli = [line.split(": ", 3)[2:] for line in out.stderr.splitlines() if line.startswith("error:")]
    assert [[p["path"], p["message"]] for p in got["problems"]] == cli


def test_catalog_lists_the_contract_ids(server):
    ids = server.request("/api/catalog").json()
    assert {"h100-sxm-80gb", "gb200"} <= set(ids["gpu"])
    assert {"llama3-405b", "deepseek-v3"} <= set(ids["model"])
    assert {"ib-ndr", "roce-400g"} <= set(ids["fabric"])


def test_unknown_route_is_json_404(server):
    r = server.request("/api/nothing")
    assert r.status == 404 and r.json()["status"] == 404


def test_static_serves_only_shipped_files(server):
    assert server.request("/static/htmx.min.js").status == 200
    assert server.request("/static/plotly.min.js").body.startswith(b"/**")
    for name in ("..%2Fapp.py", "app.py", "%2Fetc%2Fpasswd"):
        assert server.request(f"/static/{name}").status == 404


def test_pages_escape_what_the_user_wrote(server):
    from urllib.parse import urlencode

    text = (DEFAULT_SCENARIO.read_text().replace("name: llama3-405b-16k-h100", 'name: "<script>alert(1)</script>"'))
    body = urlencode({"yaml": text})
    r = server.request("/answer", body, {"Content-Type": "application/x-www-form-urlencoded",
                                         "HX-Trigger-Name": "yaml"})
    assert r.status == 200
    page = r.body.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_download_gives_the_edited_yaml_under_a_safe_name(server):
    from urllib.parse import urlencode

    import yaml

    text = DEFAULT_SCENARIO.read_text().replace("name: llama3-405b-16k-h100", 'name: "../x\\"; rm -rf /"')
    body = urlencode({"yaml": text, "cluster.gpus": "8192", "training.precision": ""})
    r = server.request("/download", body, {"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status == 200
    disp = r.headers["content-disposition"]
    assert disp.startswith("attachment; filename=") and "/" not in disp.split("=", 1)[1] and ";" not in disp[11:]
    got = yaml.safe_load(r.body)
    assert got["cluster"]["gpus"] == 8192 and got["name"] == '../x"; rm -rf /'
    assert got["training"]["precision"] == "bf16"  # an empty field leaves the YAML's value


def test_a_saved_scenario_can_be_compared(server):
    from urllib.parse import urlencode

    text = DEFAULT_SCENARIO.read_text().replace("name: llama3-405b-16k-h100", "name: half <b>size</b>")
    body = urlencode({"yaml": text, "cluster.gpus": "8192"})
    r = server.request("/save", body, {"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status == 200 and "saved as <strong>half-b-size-b</strong>" in r.body.decode()
    page = server.request("/compare?pick=built-in-default&pick=half-b-size-b").body.decode()
    assert '<tr class="diff" data-key="scenario.cluster.gpus">' in page
    assert "<b>size</b>" not in page  # the name, escaped wherever it is shown
    # a file's scenario is never replaced by a saved one
    clash = DEFAULT_SCENARIO.read_text().replace("name: llama3-405b-16k-h100", "name: built-in-default")
    r = server.request("/save", urlencode({"yaml": clash}), {"Content-Type": "application/x-www-form-urlencoded"})
    assert "built-in scenario; rename yours" in r.body.decode()


@pytest.mark.parametrize("form, expected", [
    ({"base": "built-in-default", "axis1_key": "cluster.gpuz", "axis1_values": "1,2"}, "unknown scenario key"),
    ({"base": "built-in-default", "axis1_key": "cluster.gpus", "axis1_values": " , "}, "expected values"),
    ({"base": "built-in-default"}, "give at least one axis"),
    ({"base": "/etc/passwd", "axis1_key": "cluster.gpus", "axis1_values": "8"}, "pick one of the saved"),
    ({"base": "built-in-default", "axis1_key": "cluster.gpus", "axis1_values": ",".join(map(str, range(8, 8 * 66, 8)))},
     "at most 64"),
])
def test_sweep_form_problems_are_shown_not_run(server, form, expected):
    from urllib.parse import urlencode

    r = server.request("/sweep/start", urlencode(form), {"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status == 200
    page = r.body.decode()
    assert 'class="err"' in page and expected in page and "sweep-progress" not in page


def test_sweep_results_escape_what_the_form_sent(server):
    import re
    import time
    from urllib.parse import urlencode

    evil = "</script><script>alert(1)</script>"
    form = {"base": "built-in-default", "axis1_key": "name", "axis1_values": evil}
    page = server.request("/sweep/start", urlencode(form), {"Content-Type": "application/x-www-form-urlencoded"}).body.decode()
    job = re.search(r'hx-get="/sweep/([0-9a-f]+)"', page).group(1)
    deadline = time.monotonic() + 120
    while "sweep-table" not in page:
        assert time.monotonic() < deadline, "the sweep did not finish"
        time.sleep(0.2)
        page = server.request(f"/sweep/{job}").body.decode()
    assert page.count("<tr") == 2  # header + one scenario
    assert "<script>alert(1)" not in page and "alert(1)" in page


def _examples() -> list[str]:
    """The scenario files of examples/ (its study files are for `clustertwin sweep`)."""
    from clustertwin.serve.library import examples_dir
    from clustertwin.sweep.study import is_study

    ex = examples_dir()
    return sorted(p.stem for p in ex.glob("*.yaml") if not is_study(read_document(p))) if ex else []


def test_study_files_are_not_offered_as_scenarios(server):
    from clustertwin.serve.library import examples_dir

    offered = set(server.app.state.library.names())
    studies = {p.stem for p in examples_dir().glob("*.yaml")} - set(_examples())
    assert studies and not studies & offered and set(_examples()) <= offered


@pytest.mark.parametrize("name", _examples())
def test_every_example_opens_with_its_answer(server, name):
    from urllib.parse import urlencode

    editor = server.request(f"/?example={name}")
    assert editor.status == 200 and f'<option value="{name}" selected>' in editor.body.decode()
    text = server.app.state.library.get(name).text
    r = server.request("/answer", urlencode({"yaml": text}), {"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status == 200
    assert 'data-key="training.days"' in r.body.decode() or 'data-key="design.power.facility_kw"' in r.body.decode()


def test_a_yaml_body_plans_like_its_json(server):
    by_yaml = server.request("/api/plan", DEFAULT_SCENARIO.read_text(), {"Content-Type": "application/yaml"})
    assert by_yaml.status == 200
    assert by_yaml.json() == server.post_json("/api/plan", _default_doc()).json()
    bad = server.request("/api/validate", "cluster: [unclosed", {"Content-Type": "application/yaml"})
    assert bad.status == 400 and bad.json()["problems"]


def test_the_decision_headline_is_shown_when_the_plan_has_one(server):
    from urllib.parse import urlencode

    from clustertwin.serve.library import examples_dir

    path = examples_dir() / "decision-405b.yaml"
    if not path.exists():
        pytest.skip("examples/decision-405b.yaml is not in this checkout")
    plan = server.request("/api/plan", path.read_text(), {"Content-Type": "application/yaml"}).json()
    page = server.request("/answer", urlencode({"yaml": path.read_text()}),
                          {"Content-Type": "application/x-www-form-urlencoded"}).body.decode()
    d = plan["decision"]
    assert f'data-key="decision.trained_by" data-value="{d["trained_by"]}">{d["trained_by"]}<' in page
    assert f'data-key="decision.mode" data-value="{d["mode"]}">{d["mode"]}<' in page
    assert 'data-key="decision.cost_usd"' in page and 'data-key="decision.best"' in page
    assert page.count('data-key="decision.options.') >= 3 * len(d["options"])


def test_control_characters_in_a_name_do_not_reach_the_page(server):
    from urllib.parse import urlencode

    text = DEFAULT_SCENARIO.read_text().replace("name: llama3-405b-16k-h100", 'name: "a\\x1bb\\x07c"')
    r = server.request("/answer", urlencode({"yaml": text}), {"Content-Type": "application/x-www-form-urlencoded",
                                                              "HX-Trigger-Name": "yaml"})
    page = r.body.decode()
    assert r.status == 200 and "\x1b" not in page and "\x07" not in page and "a\ufffdb\ufffdc" in page
