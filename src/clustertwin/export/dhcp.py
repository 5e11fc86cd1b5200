"""DHCP and DNS for the IP plan: one ``dnsmasq.conf`` (checked by ``dnsmasq --test``).

* DHCP on the in-band and OOB networks, static ranges only (an address is handed out to a
  known host only), a tag and router option per subnet; each host's fixed address is bound
  to its name (``dhcp-host=NAME,IP``: matched by the client's hostname). BMCs rarely send a
  hostname: add each one's MAC in front when the hardware arrives (``dhcp-host=MAC,NAME,IP``).
* DNS for every interface of every device: ``NAME`` (in-band, else BMC / management port),
  ``NAME-bmc``, ``NAME-stor``, ``NAME-ibN`` (compute rail N, IPoIB) in the cluster's domain.

Names come from the inventory (hostname labels); each is checked against the DNS label rule
before it is written, and the domain is the cluster name made a label.
"""

from __future__ import annotations

import ipaddress
import re

from clustertwin.export.ipplan import RESERVED, IpPlan
from clustertwin.export.stage import ExportContext
from clustertwin.quoting import check_identifier

LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", re.I)
SUFFIX = {"inband": "", "bmc": "-bmc", "storage": "-stor"}


def domain(ctx: ExportContext) -> str:
    return f"{ctx.cluster_name}.internal"


def _label(name: str) -> str:
    """A device name as a DNS label: an identifier (clustertwin.quoting) without ``._``."""
    check_identifier(name, "device name")
    if not LABEL.match(name):
        raise ValueError(f"not a DNS label: {name!r}")   # inventory names are; a bug if not
    return name


def dnsmasq_conf(ctx: ExportContext, plan: IpPlan) -> str:
    dom = domain(ctx)
    for part in dom.split("."):
        _label(part)
    lines = [f"# dnsmasq.conf for {ctx.cluster_name}: DHCP (in-band, OOB) and DNS ({dom}),",
             "# written by clustertwin export dhcp. Check: dnsmasq --test --conf-file=THIS",
             "domain-needed", "bogus-priv", f"domain={dom}", f"local=/{dom}/", "expand-hosts",
             "dhcp-authoritative"]
    for s in plan.subnets:
        if s.network not in ("inband", "oob"):
            continue
        net = ipaddress.ip_network(s.cidr)
        lines += [f"dhcp-range=set:{s.name},{net.network_address},static,{net.netmask},12h",
                  f"dhcp-option=tag:{s.name},option:router,{s.gateway}"]
    for name, addrs in plan.addresses.items():
        host = _label(name)
        for iface in ("inband", "bmc"):
            if iface in addrs:
                lines.append(f"dhcp-host={host}{SUFFIX[iface]},{addrs[iface]}")
        main = plan.host(name)
        lines.append(f"host-record={host}.{dom},{host},{main}")
        for iface, ip in addrs.items():
            suffix = SUFFIX.get(iface, f"-{iface}")
            if ip != main:
                lines.append(f"host-record={host}{suffix}.{dom},{host}{suffix},{ip}")
    return "\n".join(lines) + "\n"


def ip_plan_csv(plan: IpPlan) -> str:
    """Subnets: network, name, SU, rail, CIDR, gateway, hosts today."""
    import io

    from clustertwin.quoting import csv_writer

    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(["network", "subnet", "su", "rail", "cidr", "gateway", "hosts", "capacity"])
    for s in plan.subnets:
        cap = ipaddress.ip_network(s.cidr).num_addresses - RESERVED - 1   # - broadcast
        w.writerow([s.network, s.name, s.su, s.rail, s.cidr, s.gateway, s.hosts, cap])
    return buf.getvalue()


def addresses_csv(plan: IpPlan) -> str:
    import io

    from clustertwin.quoting import csv_writer

    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(["device", "interface", "address"])
    w.writerows([name, iface, ip] for name, a in plan.addresses.items() for iface, ip in a.items())
    return buf.getvalue()
