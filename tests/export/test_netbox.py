"""NetBox bulk-import CSVs hold together as NetBox's import would require: every device's
role, type, site and rack exist in the files before it; rack positions lie inside the rack and
never overlap; every cable end is an interface of an existing device; counts equal the
inventory and the cabling map."""

from __future__ import annotations

import csv
import io

import pytest

from clustertwin.export.netbox import netbox_files
from clustertwin.export.stage import make_context

from .helpers import catalog, example


def _rows(files, name):
    return list(csv.DictReader(io.StringIO(files[f"netbox-{name}.csv"])))


@pytest.mark.parametrize("name", ["default", "llama3-70b-gb200-nvl72"])
def test_netbox_files_are_consistent(name):
    scen, d, inv, links = example(name)
    ctx = make_context(scen, catalog(), d)
    f = netbox_files(ctx)
    sites = {r["name"] for r in _rows(f, "sites")}
    racks = {r["name"]: int(r["u_height"]) for r in _rows(f, "racks")}
    types = {r["model"]: int(r["u_height"]) for r in _rows(f, "device-types")}
    makers = {r["name"] for r in _rows(f, "manufacturers")}
    roles = {r["name"] for r in _rows(f, "device-roles")}
    devices = _rows(f, "devices")
    assert len(devices) == len(inv.devices) and len(racks) == d.racks
    used: dict[str, set[int]] = {}
    for r in devices:
        assert r["site"] in sites and r["role"] in roles and r["manufacturer"] in makers
        assert r["device_type"] in types and (not r["rack"] or r["rack"] in racks)
        if r["position"]:
            lo, u = int(r["position"]), types[r["device_type"]]
            units = set(range(lo, lo + u))
            assert lo >= 1 and lo + u - 1 <= racks[r["rack"]], r
            assert not (units & used.setdefault(r["rack"], set())), r
            used[r["rack"]] |= units
    placed = sum(1 for r in devices if r["position"])
    assert placed >= 0.9 * sum(1 for x in inv.devices if x.rack and x.role not in ("pdu", "cdu"))
    names = {r["name"] for r in devices}
    ifaces = {(r["device"], r["name"]) for r in _rows(f, "interfaces")}
    assert all(dev in names for dev, _ in ifaces)
    cables = _rows(f, "cables")
    assert len(cables) == len(links)
    for c in cables[:: max(1, len(cables) // 2000)]:
        assert (c["side_a_device"], c["side_a_name"]) in ifaces
        assert (c["side_b_device"], c["side_b_name"]) in ifaces
    assert {c["type"] for c in cables} <= {"mmf", "smf", "dac-passive", "cat6", ""}
    node_types = {r["type"] for r in _rows(f, "interfaces") if r["name"].startswith("mlx5_")}
    assert node_types and node_types <= {"infiniband-ndr", "infiniband-xdr"}


def test_device_types_follow_the_devicetype_library_layout():
    """netbox-device-types.yaml against a documented subset of the community library's schema
    (tests/export/data/README.md); a misspelt key or a bad slug fails."""
    import json

    import yaml

    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema not installed (dev extra)")
    from .helpers import ROOT

    schema = json.loads((ROOT / "tests" / "export" / "data" /
                         "devicetype-subset.schema.json").read_text())
    scen, d, _, _ = example("default")
    docs = list(yaml.safe_load_all(netbox_files(make_context(scen, catalog(), d))[
        "netbox-device-types.yaml"]))
    v = jsonschema.Draft7Validator(schema)
    assert docs and all(not list(v.iter_errors(doc)) for doc in docs)
    node = next(doc for doc in docs if doc["model"] == "dgx-h100")
    assert [i["name"] for i in node["interfaces"] if i["name"].startswith("mlx5_")] == [
        "mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    bad = dict(node, slug="DGX H100", u_heigth=8)
    assert len(list(v.iter_errors(bad))) == 2
