"""The export command and its files: every kind writes what the contract names, --out safety,
bad input is one line per problem with exit 2; CSV/JSON/SVG agree with the inventory; the
Ansible inventory is read by the real ansible-inventory; Grafana dashboards are structurally
sound and their PromQL passes promtool."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
import yaml
from typer.testing import CliRunner

from clustertwin.cli import app
from clustertwin.cli.export import KINDS, build_files
from clustertwin.export.stage import make_context

from .helpers import _BASE, ROOT, catalog, count_check, example

DATA = ROOT / "tests" / "export" / "data"

runner = CliRunner()
EXPECT = {"inventory": {"inventory.csv", "inventory.json", "floor-plan.svg",
                        "rack-elevations.svg", "topology.svg", "ip-plan.csv", "addresses.csv"},
          "bom": {"bom.csv", "bom.xlsx"},
          "drawings": {"floor-plan.svg", "rack-elevations.svg", "topology.svg"},
          "cabling": {"cabling.csv", "cable-summary.csv"},
          "slurm": {"slurm.conf", "gres.conf", "topology.conf", "topology.yaml", "cgroup.conf",
                    "slurmdbd.conf", "prolog.sh", "epilog.sh"},
          "kueue": {"kueue.yaml", "node-labels.yaml", "label-nodes.sh"},
          "prometheus": {"prometheus.yml", "clustertwin.rules.yml", "clustertwin.promtool-tests.yml",
                         "dcgm-exporter-counters.csv"},
          "grafana": {"grafana-cluster.json", "grafana-rack.json", "grafana-node.json",
                      "grafana-fabric.json"},
          "ansible": {"ansible-inventory.yml", "site.yml"},
          "dhcp": {"dnsmasq.conf"},
          "netbox": {f"netbox-{x}.csv" for x in ("sites", "locations", "manufacturers",
                                                 "device-roles", "device-types", "racks",
                                                 "devices", "interfaces", "cables")}
          | {"netbox-device-types.yaml"}}


def _two_node_file(tmp_path):
    doc = copy.deepcopy(_BASE)
    doc["cluster"].update({"gpus": 16, "spare_nodes": 0})
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("kind", KINDS)
def test_export_command_writes_each_kind(kind, tmp_path):
    scen = _two_node_file(tmp_path)
    out = tmp_path / "out"
    res = runner.invoke(app, ["export", kind, str(scen), "--out", str(out)])
    assert res.exit_code == 0, res.output
    written = {p.name for p in out.iterdir() if not p.name.startswith(".")}
    want = set().union(*EXPECT.values()) if kind == "all" else EXPECT[kind]
    assert want <= written
    if kind in ("all", "prometheus"):   # the contract's "a rules file named *rules*.yml"
        assert [p.name for p in out.glob("*rules*.yml")] == ["clustertwin.rules.yml"]


def test_out_safety_and_bad_input(tmp_path):
    scen = _two_node_file(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "slurm.conf").write_text("mine\n")
    res = runner.invoke(app, ["export", "slurm", str(scen), "--out", str(out)])
    assert res.exit_code == 2 and "slurm.conf" in res.output and "Traceback" not in res.output
    assert (out / "slurm.conf").read_text() == "mine\n"
    res = runner.invoke(app, ["export", "slurm", str(scen), "--out", str(out), "--force"])
    assert res.exit_code == 0 and "NodeName=" in (out / "slurm.conf").read_text()
    res = runner.invoke(app, ["export", "nope", str(scen), "--out", str(out),
                              "--naming", "pad=x", "--host-label", "HOST"])
    assert res.exit_code == 2
    assert len([ln for ln in res.output.splitlines() if ln.startswith("error:")]) == 3


def test_tables_and_svg_agree_with_the_inventory():
    scen, d, inv, links = example("llama3-70b-gb200-nvl72")
    ctx = make_context(scen, catalog(), d)
    files, _ = build_files("all", ctx)
    rows = list(csv.DictReader(io.StringIO(files["inventory.csv"])))
    assert len(rows) == len(inv.devices)
    assert sum(int(r["gpus"]) for r in rows if r["role"] == "node") == d.gpus
    cab = list(csv.DictReader(io.StringIO(files["cabling.csv"])))
    assert len(cab) == len(links) and count_check(d, inv, links) == []
    doc = json.loads(files["inventory.json"])
    assert doc["counts"]["node"] == 18 * d.nodes and len(doc["racks"]) == d.racks
    floor = ET.fromstring(files["floor-plan.svg"])
    cells = [e for e in floor.iter("{http://www.w3.org/2000/svg}rect")
             if e.get("class") == "rack"]
    assert len(cells) == d.racks
    elev = files["rack-elevations.svg"]
    ET.fromstring(elev)
    # every NVL72 rack type (they differ by the management devices they carry): 18 compute
    # trays and 9 NVLink switch trays each
    n = elev.count("(node, 1U)")
    assert n and n % 18 == 0 and elev.count("(nvswitch, 1U)") == n // 2


@pytest.mark.skipif(shutil.which("ansible-inventory") is None,
                    reason="ansible-inventory not installed (apt-get install ansible-core)")
def test_real_ansible_inventory_reads_the_groups(tmp_path):
    scen, d, inv, _ = example("llama3-70b-gb200-nvl72")
    files, _ = build_files("ansible", make_context(scen, catalog(), d))
    path = tmp_path / "inv.yml"
    path.write_text(files["ansible-inventory.yml"])
    run = subprocess.run(["ansible-inventory", "-i", str(path), "--list"], capture_output=True,
                         text=True, timeout=120, check=False,
                         env={"ANSIBLE_INVENTORY_UNPARSED_FAILED": "true", "HOME": str(tmp_path),
                              "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert "WARNING" not in run.stderr.upper(), run.stderr
    got = json.loads(run.stdout)
    assert set(got["gpu_nodes"]["hosts"]) == {n.name for n in inv.nodes}
    assert len([g for g in got if g.startswith("rack_")]) == len({x.rack for x in inv.devices
                                                                 if x.rack and x.role not in
                                                                 ("pdu", "cdu")})
    assert len([g for g in got if g.startswith("nvl_")]) == d.nodes
    hv = got["_meta"]["hostvars"]
    assert hv["gpu0001"]["nvlink_domain"] == 1
    # every host has an address of its own; nodes in-band, switches by management port
    hosts = [v["ansible_host"] for v in hv.values()]
    assert all(hosts) and len(set(hosts)) == len(hosts)
    assert set(got["slurm_controllers"]["hosts"]) <= set(got["management_servers"]["hosts"])


@pytest.mark.skipif(shutil.which("ansible-playbook") is None,
                    reason="ansible-playbook not installed (apt-get install ansible-core)")
def test_real_ansible_playbook_accepts_site_yml(tmp_path):
    from .helpers import design_of, scenario

    scen = scenario(16)     # the playbook does not depend on size; ansible reads hosts slowly
    files, _ = build_files("all", make_context(scen, catalog(), design_of(scen)))
    for name, text in files.items():   # bom.xlsx is bytes
        path = tmp_path / name
        path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "ANSIBLE_LOCAL_TEMP": str(tmp_path)}
    run = subprocess.run(["ansible-playbook", "-i", "ansible-inventory.yml", "site.yml",
                          "--syntax-check"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=False, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    plays = yaml.safe_load(files["site.yml"])
    srcs = {t["ansible.builtin.copy"]["src"].split("/")[-1] for p in plays for t in p["tasks"]
            if "ansible.builtin.copy" in t}
    assert srcs <= set(files), srcs - set(files)        # every file it places is exported
    assert {"slurm.conf", "cgroup.conf", "prolog.sh", "prometheus.yml"} <= srcs
    if shutil.which("ansible-lint"):     # the production profile, offline
        lint = subprocess.run(["ansible-lint", "--offline", "--nocolor", "-p", "site.yml"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              check=False, env=env)
        assert lint.returncode == 0, lint.stdout + lint.stderr
    else:
        print("ansible-lint not installed (apt-get install ansible-lint): lint skipped")
    (tmp_path / "site.yml").write_text(files["site.yml"].replace("hosts:", "hostz:", 1))
    bad = subprocess.run(["ansible-playbook", "-i", "ansible-inventory.yml", "site.yml",
                          "--syntax-check"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=False, env=env)
    assert bad.returncode != 0


def _dashboard_errors(board) -> list[str]:
    import jsonschema

    schema = json.loads((DATA / "grafana-dashboard.schema.json").read_text())
    v = jsonschema.Draft7Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(board)]


def test_grafana_dashboards_match_the_dashboard_schema():
    """Written in the base install (plain JSON); a wrong type or an unknown key fails."""
    pytest.importorskip("jsonschema", reason="jsonschema not installed (dev extra)")
    scen, d, _, _ = example("llama3-70b-gb200-nvl72")
    files, _ = build_files("grafana", make_context(scen, catalog(), d))
    assert len(files) == 4
    for name, text in files.items():
        assert _dashboard_errors(json.loads(text)) == [], name
    board = json.loads(files["grafana-node.json"])
    board["panels"][0]["gridPos"]["w"] = 25
    board["panels"][1]["gridPos"]["h"] = "8"
    board["panels"][2]["targets"][0]["exprr"] = board["panels"][2]["targets"][0].pop("expr")
    board["graphTooltip"] = 3
    assert len(_dashboard_errors(board)) == 5   # w, h, exprr unknown, expr missing, tooltip


def test_grafana_dashboards_are_sound_and_their_promql_parses(tmp_path):
    scen, d, _, _ = example("default")
    files, _ = build_files("grafana", make_context(scen, catalog(), d), host_label="hostname")
    uids, exprs = set(), []
    for name, text in files.items():
        board = json.loads(text)
        assert board["uid"] not in uids
        uids.add(board["uid"])
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids))
        cells = set()
        for p in board["panels"]:
            g = p["gridPos"]
            assert g["x"] + g["w"] <= 24
            mine = {(x, y) for x in range(g["x"], g["x"] + g["w"])
                    for y in range(g["y"], g["y"] + g["h"])}
            assert not (mine & cells), f"{name}: panel {p['title']} overlaps"
            cells |= mine
            assert p["datasource"]["uid"] == "${datasource}"
            for t in p["targets"]:
                assert t["refId"]
                exprs.append(t["expr"])
    assert all("Hostname" not in e for e in exprs)
    if shutil.which("promtool") is None:
        pytest.skip("promtool not installed: PromQL not checked")
    rules = [{"record": f"check:expr_{i}:x",
              "expr": re.sub(r"\$\w+", ".*", e.replace("$__rate_interval", "5m"))}
             for i, e in enumerate(exprs)]
    (tmp_path / "dash.rules.yml").write_text(yaml.safe_dump(
        {"groups": [{"name": "dashboards", "rules": rules}]}))
    run = subprocess.run(["promtool", "check", "rules", "dash.rules.yml"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def test_plan_html_embeds_the_floor_plan():
    from clustertwin.plan import Plan
    from clustertwin.report import html as html_report

    scen, d, inv, _ = example("default")
    page = html_report.render(Plan(scenario=scen, design=d))
    assert "<h3>Floor plan</h3>" in page
    svg = page[page.index("<svg", page.index("<h3>Floor plan</h3>")):]
    svg = svg[: svg.index("</svg>") + 6]
    root = ET.fromstring(svg)
    # the clustertwin.drawings floor plan: one class="rack" rect per rack (one hall here)
    cells = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("class") == "rack"]
    assert len(cells) == len(inv.racks) == d.racks
