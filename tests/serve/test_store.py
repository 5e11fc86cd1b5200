"""The saved-scenario database (serve/store.py), the share link and the round-trip YAML."""

from __future__ import annotations

import json

import pytest

from clustertwin.scenario import DEFAULT_SCENARIO


def test_versions_names_and_reopening(tmp_path):
    from clustertwin.serve.store import NameTaken, Store

    db = tmp_path / "d" / "serve.sqlite3"
    s = Store(db, project="/p/one", user="alice")
    v1 = s.save("base", "name: a\n", {"x": 1})
    assert (v1.version, v1.who) == (1, "alice") and v1.at.endswith("+00:00")
    with pytest.raises(NameTaken) as taken:
        s.save("base", "name: b\n")
    assert taken.value.suggested == "base-2"
    v2 = s.save("base", "name: b\n", on_conflict="overwrite")
    assert (v2.scenario_id, v2.version) == (v1.scenario_id, 2)
    v3 = s.save("base", "name: c\n", on_conflict="rename")
    assert v3.name == "base-2" and v3.scenario_id != v1.scenario_id
    other = Store(db, project="/p/two", user="bob")  # names are unique per project folder only
    assert other.save("base", "name: z\n").version == 1
    s.close()
    again = Store(db, project="/p/one", user="carol")  # the file outlives the server
    assert again.get(v1.scenario_id).yaml == "name: b\n"
    assert again.get(v1.scenario_id, 1).plan_json == json.dumps({"x": 1}, sort_keys=True)
    assert [h.version for h in again.history(v1.scenario_id)] == [2, 1]
    assert [v.name for v in again.latest()] == ["base", "base-2"]
    assert again.get("../../etc") is None and again.get("x" * 8) is None


def test_drafts_are_per_browser_and_page_and_bounded(monkeypatch):
    from clustertwin.serve import store as mod

    monkeypatch.setattr(mod, "MAX_DRAFTS", 3)
    s = mod.Store()
    for i in range(5):
        s.put_draft(f"client{i}", "ex/a", {"yaml": str(i)})
    s.put_draft("client4", "ex/b", {"yaml": "other page"})
    assert s.draft("client4", "ex/a") == {"yaml": "4"} and s.draft("client4", "ex/b") == {"yaml": "other page"}
    assert s._q("SELECT COUNT(*) FROM drafts")[0][0] == 3
    s.drop_draft("client4", "ex/a")
    assert s.draft("client4", "ex/a") is None


def test_default_db_is_in_the_users_data_directory(monkeypatch, tmp_path):
    from clustertwin.serve.store import default_db

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db() == tmp_path / "clustertwin" / "serve.sqlite3"


def test_a_field_edit_keeps_the_yaml_comments():
    from clustertwin.io import parse_text
    from clustertwin.quoting import yaml_roundtrip

    text = DEFAULT_SCENARIO.read_text()
    doc = parse_text(text, "x")
    doc["cluster"]["gpus"] = 8192
    del doc["cluster"]["spare_nodes"]
    doc["cluster"]["node"] = "dgx-b200"
    out = yaml_roundtrip(text, doc)
    assert parse_text(out, "x") == doc
    kept = [line for line in text.splitlines() if line.startswith("#")]
    assert kept and all(line in out.splitlines() for line in kept)  # the header comments survive
    assert "tokens: 15.6e12" in out  # untouched values keep their spelling
    assert "spare_nodes" not in out and "gpus: 8192" in out


def test_save_api_asks_then_overwrites_or_renames_and_shares(server):
    name = "store-api-case"
    body = {"name": name, "yaml": DEFAULT_SCENARIO.read_text()}
    first = server.post_json("/api/scenarios", body)
    assert first.status == 201 and first.json()["version"] == 1
    again = server.post_json("/api/scenarios", body)
    assert again.status == 409 and again.json()["suggested"] == name + "-2"
    over = server.post_json("/api/scenarios", {**body, "on_conflict": "overwrite"}).json()
    assert (over["id"], over["version"]) == (first.json()["id"], 2)
    renamed = server.post_json("/api/scenarios", {**body, "on_conflict": "rename"}).json()
    assert renamed["name"] == name + "-2"
    got = server.request(f"/api/scenarios/{over['id']}").json()
    assert [v["version"] for v in got["versions"]] == [2, 1] and got["plan"]["training"]["days"] > 0
    page = server.request(over["url"])
    assert page.status == 200 and "version 2" in page.body.decode() and "# The built-in default" in page.body.decode()
    assert server.request("/s/nosuchscenario1").status == 404
    assert server.post_json("/api/scenarios", {"name": "../x", "yaml": 3}).status == 400


def test_the_store_is_bounded(monkeypatch):
    from clustertwin.serve import store as mod

    monkeypatch.setattr(mod, "MAX_VERSIONS", 2)
    monkeypatch.setattr(mod, "MAX_SCENARIOS", 2)
    s = mod.Store(project="/p", user="u")
    s.save("a", "x: 1\n")
    s.save("a", "x: 2\n", on_conflict="overwrite")
    with pytest.raises(mod.StoreFull, match="2 versions"):
        s.save("a", "x: 3\n", on_conflict="overwrite")
    s.save("b", "x: 1\n")
    with pytest.raises(mod.StoreFull, match="2 saved scenarios"):
        s.save("c", "x: 1\n")
    with pytest.raises(mod.StoreFull, match="characters"):
        s.save("a", "x" * (mod.MAX_TEXT_CHARS + 1), on_conflict="overwrite")
    s.put_draft("client", "ex/a", {"yaml": "y" * (mod.MAX_DRAFT_CHARS + 1)})
    assert s.draft("client", "ex/a") is None  # too large to keep


def test_a_running_sweep_can_be_cancelled(server):
    import re
    import time
    from urllib.parse import urlencode

    form = {"base": "built-in-default", "axis1_key": "cluster.gpus",
            "axis1_values": ",".join(str(1024 * k) for k in range(1, 17))}
    page = server.request("/sweep/start", urlencode(form), {"Content-Type": "application/x-www-form-urlencoded"}).body.decode()
    assert 'id="sweep-cancel"' in page
    job = re.search(r'/sweep/([0-9a-f]{16})/cancel', page).group(1)
    server.request(f"/sweep/{job}/cancel", b"", {"Content-Type": "application/x-www-form-urlencoded"})
    deadline = time.monotonic() + 30
    while "cancelled" not in (page := server.request(f"/sweep/{job}").body.decode()):
        assert time.monotonic() < deadline and 'id="sweep-done"' not in page, "not cancelled"
        time.sleep(0.2)


def test_a_database_that_cannot_be_opened_is_one_problem(tmp_path):
    from clustertwin.errors import UsageError
    from clustertwin.serve.store import Store

    (tmp_path / "not-a-db").write_text("this is not SQLite\n" * 100)
    with pytest.raises(UsageError) as exc:
        Store(tmp_path / "not-a-db")
    assert exc.value.problems[0].path.endswith("not-a-db") and "--db" in exc.value.problems[0].source
