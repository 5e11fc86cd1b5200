"""The IP address plan: every interface gets one address, subnets per network, SU and rail
never overlap and leave room to grow; the DHCP/DNS file passes dnsmasq's own --test; a design
too large for an address block is refused with the sizes."""

from __future__ import annotations

import csv
import io
import ipaddress
import shutil
import subprocess

import pytest

from clustertwin.errors import UsageError
from clustertwin.export import ipplan as IP
from clustertwin.export.dhcp import dnsmasq_conf, ip_plan_csv
from clustertwin.export.stage import make_context

from .helpers import catalog, example


def _ctx(name: str):
    scen, d, _, _ = example(name)
    return make_context(scen, catalog(), d)


@pytest.mark.parametrize("name", ["default", "llama3-70b-gb200-nvl72"])
def test_every_interface_has_one_address_in_its_subnet(name):
    ctx = _ctx(name)
    plan = IP.ip_plan(ctx)
    nets = [ipaddress.ip_network(s.cidr) for s in plan.subnets]
    assert not any(a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1:])
    ips = [ip for a in plan.addresses.values() for ip in a.values()]
    assert len(ips) == len(set(ips))
    rails = IP.rails(ctx)
    assert rails == (8 if name == "default" else 4)      # DGX H100: 8 NICs; GB200 tray: 4
    sus = {n.su for n in ctx.inventory.nodes}
    for n in ctx.inventory.nodes:
        a = plan.addresses[n.name]
        assert set(a) == {"inband", "bmc", "storage", *(f"ib{r}" for r in range(rails))}
    # one compute subnet per SU and rail, one in-band / OOB / storage subnet per SU
    by = {(s.network, s.rail, s.su) for s in plan.subnets}
    assert {(r, su) for _, r, su in by if r} == {(r, su) for r in range(1, rails + 1)
                                                 for su in sus}
    assert all(("inband", 0, su) in by and ("storage", 0, su) in by for su in sus)
    # room to grow: every subnet holds at least twice what it holds today
    rows = list(csv.DictReader(io.StringIO(ip_plan_csv(plan))))
    assert len(rows) == len(plan.subnets)
    assert all(int(r["capacity"]) >= IP.GROWTH * int(r["hosts"]) for r in rows)
    # each device's addresses sit in subnets of the right network
    net_of = {s.cidr: s.network for s in plan.subnets}
    iface_net = {"inband": "inband", "bmc": "oob", "storage": "storage"}
    n0 = plan.addresses[ctx.inventory.nodes[0].name]
    for iface, ip in n0.items():
        home = [c for c in net_of if ipaddress.ip_address(ip) in ipaddress.ip_network(c)]
        assert len(home) == 1 and net_of[home[0]] == iface_net.get(iface, "compute")
    assert all(d.name in plan.addresses for d in ctx.inventory.devices)


def test_a_block_too_small_is_refused(monkeypatch):
    monkeypatch.setitem(IP.BLOCKS, "inband", "10.0.0.0/24")
    with pytest.raises(UsageError, match="do not fit 10.0.0.0/24"):
        IP.ip_plan(_ctx("default"))


@pytest.mark.skipif(shutil.which("dnsmasq") is None,
                    reason="dnsmasq not installed (apt-get install dnsmasq-base)")
def test_dnsmasq_accepts_the_dhcp_dns_file(tmp_path):
    ctx = _ctx("default")
    plan = IP.ip_plan(ctx)
    text = dnsmasq_conf(ctx, plan)
    path = tmp_path / "dnsmasq.conf"
    path.write_text(text)
    run = subprocess.run(["dnsmasq", "--test", f"--conf-file={path}"], capture_output=True,
                         text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    node = ctx.inventory.nodes[0].name
    assert f"dhcp-host={node},{plan.addresses[node]['inband']}" in text
    assert f"host-record={node}-ib0." in text
    path.write_text(text.replace(",static,255.255.255.", ",static,255.255.256.", 1))
    bad = subprocess.run(["dnsmasq", "--test", f"--conf-file={path}"], capture_output=True,
                         text=True, timeout=60, check=False)
    assert bad.returncode != 0
