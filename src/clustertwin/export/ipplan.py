"""The IP address plan: every network, subnet and address of the cluster, from the inventory.

Networks (private IPv4, RFC 1918 10.0.0.0/8, one block each; :data:`BLOCKS` is the site
setting):

* ``inband``  host management and provisioning (PXE, SSH, Slurm, Ansible): nodes,
  management servers, fabric managers, storage systems. A node's ``ansible_host``.
* ``oob``     out-of-band: every node's BMC and every switch's, PDU's, CDU's, server's
  management port.
* ``storage`` the storage network (one address per node, on its storage NICs' bond).
* ``compute`` IPoIB / RoCE addresses, one subnet per rail (the node's N-th compute NIC),
  so a rail's traffic stays on its own L3 network, as NCCL over rails expects.

Each network is cut into one subnet per scalable unit (SU), and per rail on the compute
network, plus an ``infra`` subnet (index 0) for what belongs to no SU. A subnet holds
twice the hosts its SU has today, rounded up to a power of two (room to grow), with the
first :data:`RESERVED` addresses kept for gateways and virtual IPs. A design too large for
a block is refused with the sizes, not silently wrapped.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from functools import lru_cache

from clustertwin.errors import Problem, UsageError
from clustertwin.export.stage import ExportContext

#: network -> address block
BLOCKS = {"inband": "10.0.0.0/12", "oob": "10.16.0.0/12", "storage": "10.32.0.0/12",
          "compute": "10.64.0.0/10"}
RESERVED = 8          #: first addresses of each subnet: network, gateway(s), virtual IPs
GROWTH = 2            #: room to grow: each subnet sized for this many times today's hosts
INBAND_ROLES = {"node", "management", "ufm", "storage"}


@dataclass(frozen=True)
class Subnet:
    network: str        #: inband | oob | storage | compute
    name: str           #: e.g. inband-su003, compute-rail2-su003, oob-infra
    su: int             #: 0 = infra
    rail: int           #: 1-based on the compute network, else 0
    cidr: str
    gateway: str
    hosts: int = 0      #: addresses given out today


@dataclass(frozen=True)
class IpPlan:
    subnets: tuple[Subnet, ...]
    #: device name -> {interface: address}; interfaces inband, bmc (oob), storage, ibN
    addresses: dict[str, dict[str, str]]

    def host(self, name: str) -> str:
        """The address Ansible and DNS use: in-band where the device has one, else OOB."""
        a = self.addresses.get(name, {})
        return a.get("inband") or a.get("bmc", "")


def rails(ctx: ExportContext) -> int:
    return max(1, int(ctx.node.compute_nics) // max(1, ctx.inventory.trays_per_system))


def _members(ctx: ExportContext) -> dict[str, dict[int, list[str]]]:
    """network -> SU (0 = infra) -> device names, in inventory order."""
    out: dict[str, dict[int, list[str]]] = {n: {0: []} for n in ("inband", "oob", "storage")}
    for d in ctx.inventory.devices:
        su = d.su if d.role == "node" else 0
        out["oob"].setdefault(su, []).append(d.name)
        if d.role in INBAND_ROLES:
            out["inband"].setdefault(su, []).append(d.name)
        if d.role == "node":
            out["storage"].setdefault(su, []).append(d.name)
    return out


def _size(hosts: int) -> int:
    """Prefix length of a subnet for ``hosts`` today, with room to grow."""
    need = GROWTH * max(1, hosts) + RESERVED + 1
    return 32 - max(6, math.ceil(math.log2(need)))


def _carve(block: str, groups: dict[int, list[str]], what: str):
    """(subnet, SU, hosts) per group: SU subnets of one size from the start of the block, the
    infra subnet (group 0, sized for itself) at its end."""
    net = ipaddress.ip_network(block)
    sus = {k: v for k, v in groups.items() if k}
    prefix = _size(max((len(v) for v in sus.values()), default=1))
    out = []
    if groups.get(0):
        infra = list(net.subnets(new_prefix=max(net.prefixlen, _size(len(groups[0])))))[-1]
        out.append((infra, 0, groups[0]))
        room = int(infra.network_address) - int(net.network_address)
    else:
        room = net.num_addresses
    if len(sus) * 2 ** (32 - prefix) > room or prefix < net.prefixlen:
        raise UsageError([Problem("export", f"IP plan ({what})",
                                  f"{len(sus)} subnets of /{prefix} and the infra subnet do not "
                                  f"fit {block}; set a larger block in "
                                  "clustertwin.export.ipplan.BLOCKS")])
    subs = net.subnets(new_prefix=prefix)
    return out + [(next(subs), k, sus[k]) for k in sorted(sus)]


@lru_cache(maxsize=4)      # several files of one export read the same plan; ctx hashes by identity
def ip_plan(ctx: ExportContext) -> IpPlan:
    subnets: list[Subnet] = []
    addresses: dict[str, dict[str, str]] = {}
    members = _members(ctx)
    jobs = [(net, BLOCKS[net], members[net], 0, {"inband": "inband", "oob": "bmc",
                                                   "storage": "storage"}[net])
            for net in ("inband", "oob", "storage")]
    n_rails = rails(ctx)
    node_su = {n.su: [] for n in ctx.inventory.nodes}
    for n in ctx.inventory.nodes:
        node_su[n.su].append(n.name)
    rail_blocks = list(ipaddress.ip_network(BLOCKS["compute"]).subnets(
        new_prefix=ipaddress.ip_network(BLOCKS["compute"]).prefixlen
        + max(0, math.ceil(math.log2(n_rails)))))
    jobs += [("compute", str(rail_blocks[r]), node_su, r + 1, f"ib{r}") for r in range(n_rails)]
    for net, block, groups, rail, iface in jobs:
        for sub, su, names in _carve(block, groups, f"compute rail {rail}" if rail else net):
            tag = f"su{su:03d}" if su else "infra"
            label = f"{net}-rail{rail}-{tag}" if rail else f"{net}-{tag}"
            subnets.append(Subnet(net, label, su, rail, str(sub), str(sub.network_address + 1),
                                  len(names)))
            for i, name in enumerate(names):
                addresses.setdefault(name, {})[iface] = str(sub.network_address + RESERVED + i)
    return IpPlan(tuple(subnets), addresses)
